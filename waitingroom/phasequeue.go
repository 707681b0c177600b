package waitingroom

import (
	"fmt"
	"time"
)

// A phase's own pre-queue (docs/configuration.md, "Phases"): from the
// phase's prequeue_start to its start, newcomers register in it. They take
// order keys as usual, a contiguous range since keys are given in join
// order, and the line is held at the first of them: everyone who joined
// before keeps being admitted, in order, while nobody of the pre-queue is
// let in before the phase starts. With shuffle_at_start, the range is drawn
// at the start with the phase's own seed (phasedraw.go), committed before
// the pre-queue opens; fans joining after the start queue behind it, first
// come, first served.
//
// The store keeps each pre-queue as a PhaseRange: the first key given in
// it, and once the phase started, how many. It opens the range at its first
// call at or after prequeue_start (the Limits' PhaseQueue names it), and
// closes it at its first call at or after the start it recorded, whatever
// the Limits say then, so that a range is never left holding the line.

// PhaseQueue is the phase pre-queue open at a store call's instant
// (Limits.PhaseQueue); the zero value is none.
type PhaseQueue struct {
	// Phase is the phase's name.
	Phase string
	// Opens is the phase's prequeue_start and Starts its start.
	Opens, Starts time.Time
	// Draw: the range is drawn at Starts (shuffle_at_start).
	Draw bool
}

// PhaseRange is one phase pre-queue as the store recorded it: the order
// keys [Start, Start+Count) were given during it.
type PhaseRange struct {
	Phase string `json:"phase"`
	// Start is the first order key given in the pre-queue.
	Start uint64 `json:"start"`
	// Count is how many were given, once Closed.
	Count uint64 `json:"count"`
	// Closed: the phase started; the range is final (and drawn, with Draw).
	Closed bool `json:"closed"`
	// Starts is the phase's start as recorded when the range opened: the
	// range closes at the store's first call from then on.
	Starts time.Time `json:"starts"`
	Draw   bool      `json:"draw"`
}

// End is the first key after a closed range.
func (p PhaseRange) End() uint64 { return p.Start + p.Count }

// Holds reports whether key k is in the range: at or after its start, and
// before its end once it is closed.
func (p PhaseRange) Holds(k uint64) bool {
	return k >= p.Start && (!p.Closed || k < p.End())
}

// MaxPhaseRanges bounds the phase pre-queues a store remembers: the oldest
// closed ones go first, long after their places were let in.
const MaxPhaseRanges = 2 * MaxPhases

// SettlePhaseRanges brings a store's phase pre-queues to now, with seq the
// next order key: the open one whose start has come is closed (drew
// reports whether it was to be drawn: the beats, given by key, say nothing
// of the places it gives), and the pre-queue pq opens if it has not. It is
// the memory store's; the Redis store's scripts do the same (lib.lua).
func SettlePhaseRanges(ranges []PhaseRange, pq PhaseQueue, seq uint64, now time.Time) (out []PhaseRange, drew bool) {
	out = ranges
	for i := range out {
		if r := &out[i]; !r.Closed && !now.Before(r.Starts) {
			r.Closed, r.Count = true, seq-r.Start
			drew = drew || r.Draw
		}
	}
	if pq.Phase == "" || now.Before(pq.Opens) || !now.Before(pq.Starts) {
		return out, drew
	}
	for _, r := range out {
		if r.Phase == pq.Phase {
			return out, drew
		}
	}
	for i := range out {
		if !out[i].Closed {
			// Another phase's range is still open: its start moved after
			// this one opened, which validation refuses; close it here so
			// that one range at most holds the line.
			out[i].Closed, out[i].Count = true, seq-out[i].Start
			drew = drew || out[i].Draw
		}
	}
	out = append(out, PhaseRange{Phase: pq.Phase, Start: seq, Starts: pq.Starts, Draw: pq.Draw})
	if len(out) > MaxPhaseRanges {
		out = out[len(out)-MaxPhaseRanges:]
	}
	return out, drew
}

// PhaseHold is the order key the line is held at while a phase pre-queue
// is open: nobody at or after it is let in; ok is false when none is open.
func PhaseHold(ranges []PhaseRange) (at uint64, ok bool) {
	for _, r := range ranges {
		if !r.Closed {
			return r.Start, true
		}
	}
	return 0, false
}

// prequeueAt is the phase pre-queue open at now: the phase whose
// prequeue_start has come and whose start has not.
func (p Phases) prequeueAt(now time.Time) PhaseQueue {
	if p.list == nil {
		return PhaseQueue{}
	}
	for _, ph := range p.list.phases {
		if !ph.PrequeueStart.IsZero() && !now.Before(ph.PrequeueStart) && now.Before(ph.Start) {
			return PhaseQueue{Phase: ph.Name, Opens: ph.PrequeueStart, Starts: ph.Start, Draw: ph.ShuffleAtStart}
		}
	}
	return PhaseQueue{}
}

// hasPrequeues reports whether any phase has a pre-queue.
func (p Phases) hasPrequeues() bool {
	for _, ph := range p.List() {
		if !ph.PrequeueStart.IsZero() {
			return true
		}
	}
	return false
}

// hasDraws reports whether any phase's pre-queue ends in a draw.
func (p Phases) hasDraws() bool {
	for _, ph := range p.List() {
		if ph.ShuffleAtStart {
			return true
		}
	}
	return false
}

// checkPrequeue holds the rules of the phase pre-queues within the list:
// shuffle_at_start needs prequeue_start, which is before the phase's start
// and after the previous phase's start (so that one pre-queue at most is
// open at a time, and it never opens before the draw of the one before).
func (p Phases) checkPrequeue() []error {
	var errs []error
	list := p.List()
	for i, ph := range list {
		if ph.ShuffleAtStart && ph.PrequeueStart.IsZero() {
			errs = append(errs, fmt.Errorf("phase %q: shuffle_at_start needs prequeue_start", ph.Name))
		}
		if ph.PrequeueStart.IsZero() || ph.Start.IsZero() {
			continue
		}
		if !ph.PrequeueStart.Before(ph.Start) {
			errs = append(errs, fmt.Errorf("phase %q: prequeue_start %s must be before the phase's start %s",
				ph.Name, rfc3339(ph.PrequeueStart), rfc3339(ph.Start)))
		}
		if i > 0 && !list[i-1].Start.Before(ph.PrequeueStart) {
			prev := list[i-1]
			errs = append(errs, fmt.Errorf("phase %q: prequeue_start %s must be after the start of phase %q (%s): "+
				"one phase's pre-queue opens once the phase before it has started",
				ph.Name, rfc3339(ph.PrequeueStart), prev.Name, rfc3339(prev.Start)))
		}
	}
	return errs
}

// validatePrequeues holds the rules between the phases' pre-queues and the
// room's settings s (without phases): first come rooms only, without lanes,
// and after the room's own pre-queue.
func (p Phases) validatePrequeues(s Settings, lanes bool) []error {
	var errs []error
	for _, ph := range p.List() {
		if ph.PrequeueStart.IsZero() {
			continue
		}
		switch {
		case s.QueueingMethod == Random:
			// The random method draws everyone waiting again and again:
			// a phase pre-queue's keys would be in its next draw.
			errs = append(errs, settingErr("phases", "phase %q: prequeue_start needs a first-come room: "+
				"queueing_method random already draws everyone waiting", ph.Name))
		case lanes:
			// As the room's own draw: a draw places fans anew, lanes keep
			// each lane first come, first served (docs/line.md).
			errs = append(errs, settingErr("phases", "phase %q: prequeue_start needs a room without lanes: "+
				"a draw would reorder each lane's line, which lanes keep first come, first served", ph.Name))
		case !s.EventStart.IsZero() && ph.PrequeueStart.Before(s.EventStart):
			errs = append(errs, settingErr("phases", "phase %q: prequeue_start %s must not be before the room's event_start %s: "+
				"nobody is admitted before it, so the room's own pre-queue is the one to use",
				ph.Name, rfc3339(ph.PrequeueStart), rfc3339(s.EventStart)))
		}
	}
	return errs
}

// checkPrequeuesKept refuses a change that would move a phase pre-queue
// open at now: its phase removed, its prequeue_start, start or
// shuffle_at_start changed. Its fans were told when and how their places
// are made, and its seed was committed for it (phasedraw.go).
func checkPrequeuesKept(before, after Settings, now time.Time) error {
	pq := before.Phases.configured().prequeueAt(now)
	if pq.Phase == "" {
		return nil
	}
	ph, ok := after.Phases.configured().Find(pq.Phase)
	if !ok || !ph.PrequeueStart.Equal(pq.Opens) || !ph.Start.Equal(pq.Starts) || ph.ShuffleAtStart != pq.Draw {
		return settingErr("phases", "phase %q's pre-queue is open (from %s, placed at its start %s): "+
			"it cannot be removed, nor its prequeue_start, start or shuffle_at_start changed, until the phase starts",
			pq.Phase, rfc3339(pq.Opens), rfc3339(pq.Starts))
	}
	return nil
}
