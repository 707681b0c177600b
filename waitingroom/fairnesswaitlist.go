package waitingroom

import "time"

// WaitlistReport is the fairness report's account of the waitlist
// (docs/waitlist.md): when the line became one, every return of the supply
// while it was, and every step that let fans in from it, with the sample it
// went by and the places it reached, in order. Anyone can check from it that
// each unit that came back reached one fan: no step owed more units than the
// supply it went by (Owed <= Supply), and the steps reached places in order.
type WaitlistReport struct {
	Periods []WaitlistPeriod `json:"periods"`
	// Returns are the supply reports, while the line was a waitlist, above
	// the report before: units came back (expired holds, releases,
	// refunds).
	Returns []WaitlistReturn `json:"returns"`
	Steps   []WaitlistLetIn  `json:"steps"`
	// Admitted is the fans let in from the waitlist, all periods.
	Admitted uint64 `json:"admitted"`
	// EachReturnReachesOneFan: every step owed at most the supply it went
	// by. InOrder: the steps reached places in order, none twice.
	EachReturnReachesOneFan bool `json:"each_return_reaches_one_fan"`
	InOrder                 bool `json:"in_order"`
}

// WaitlistPeriod is one stretch of the line as a waitlist: from Started, with
// places from From on; Ended is absent while it goes on.
type WaitlistPeriod struct {
	Started time.Time  `json:"started"`
	From    uint64     `json:"from"`
	Ended   *time.Time `json:"ended,omitempty"`
}

// WaitlistReturn is a supply report that rose: Back units came back.
type WaitlistReturn struct {
	Sample uint64    `json:"sample"`
	At     time.Time `json:"at"`
	Units  uint64    `json:"units"`
	Back   uint64    `json:"back"`
}

// WaitlistLetIn is one step that let fans in from the waitlist: places
// [Start, Start+Count) reached, Fans of them let in (the rest ghosts), for
// Units units, going by supply sample Sample of Supply units, owing Owed
// units after it.
type WaitlistLetIn struct {
	At     time.Time `json:"at"`
	Sample uint64    `json:"sample"`
	Start  uint64    `json:"start"`
	Count  uint64    `json:"count"`
	WaitlistStep
}

// waitlistReport reads the waitlist out of the history, in its order; nil
// when the room never had one.
func waitlistReport(hist []HistoryEntry) *WaitlistReport {
	var rep *WaitlistReport
	var last *SupplySample
	on := false
	next := uint64(0)
	for _, e := range hist {
		switch e.Kind {
		case HistoryWaitlistStart:
			if rep == nil {
				rep = &WaitlistReport{Periods: []WaitlistPeriod{}, Returns: []WaitlistReturn{}, Steps: []WaitlistLetIn{}, EachReturnReachesOneFan: true, InOrder: true}
			}
			rep.Periods = append(rep.Periods, WaitlistPeriod{Started: e.At, From: e.Start})
			on = true
		case HistoryWaitlistEnd:
			if rep != nil && len(rep.Periods) > 0 {
				at := e.At
				rep.Periods[len(rep.Periods)-1].Ended = &at
			}
			on = false
		case HistorySupply:
			if e.Supply == nil {
				continue
			}
			if on && last != nil && e.Supply.Units > last.Units {
				rep.Returns = append(rep.Returns, WaitlistReturn{Sample: e.Supply.N, At: e.At, Units: e.Supply.Units, Back: e.Supply.Units - last.Units})
			}
			s := *e.Supply
			last = &s
		case HistoryWaitlist:
			if rep == nil || e.Waitlist == nil {
				continue
			}
			rep.Steps = append(rep.Steps, WaitlistLetIn{At: e.At, Sample: e.Number, Start: e.Start, Count: e.Count, WaitlistStep: *e.Waitlist})
			rep.Admitted += e.Waitlist.Fans
			if e.Waitlist.Owed > e.Waitlist.Supply {
				rep.EachReturnReachesOneFan = false
			}
			if e.Start < next {
				rep.InOrder = false
			}
			next = e.Start + e.Count
		}
	}
	return rep
}
