package waitingroom

import (
	"math"
	"time"
)

// Info is a room's state as this node sees it, for operators: the admin API and
// the metrics read it. Reading it costs no store call, so a scrape or a status
// page never adds load to the shared store.
type Info struct {
	Room string
	// Lanes are the priority lanes, in order, with the people waiting in
	// each and the places each let in (laneview.go); nil without lanes.
	Lanes []LaneInfo
	// Settings are the settings in force: the configuration with the overrides
	// applied.
	Settings Settings
	// Overrides are the runtime changes in force, and Version their version in
	// the store.
	Overrides Overrides
	Version   int64
	// Snapshot is the store's state as last read (without revocations), At when
	// it was read, and Healthy whether the store answered recently.
	Snapshot Snapshot
	At       time.Time
	Healthy  bool
	// Phase is where the schedule stands now; Admitting says whether the
	// controller may move the line forward (not paused, sold out, held or
	// closed).
	Phase     Phase
	Admitting bool
	// CurrentPhase is the scheduled phase in force now, and NextPhase the
	// next to start (docs/configuration.md, "Phases"); nil for none.
	CurrentPhase, NextPhase *ScheduledPhase
	// Waiting is the estimated number of people in line: the live places not
	// yet admitted (places too young to judge scaled by the share of admitted
	// people who show up). Places is the raw line: every place not yet
	// admitted, ghosts included.
	Waiting uint64
	Places  uint64
	// ServingRate is the measured admission rate in places per second, as the
	// store's pace record has it (see Pace); RateMeasured is false while
	// nothing measured supports a figure.
	ServingRate  float64
	RateMeasured bool
	// LastETA is the expected wait of whoever joined last, rounded up to the
	// second; nil while the line does not move (paused, sold out, held, closed,
	// or the store unreachable) or nothing measured supports a figure.
	LastETA *time.Duration
}

// Info describes the room as this node knows it now.
func (r *Room) Info() Info {
	now := r.now()
	v := r.view.Load()
	r.mu.Lock()
	o, version := r.overrides, r.version
	r.mu.Unlock()
	snap := v.snap
	snap.Revocations = nil
	rate, measured := snap.Pace.Rate()
	cur, next := v.settings.Phases.At(now)
	return Info{
		CurrentPhase: cur,
		NextPhase:    next,
		Room:         r.id,
		Settings:     v.settings.At(now),
		Overrides:    o,
		Version:      version,
		Snapshot:     snap,
		At:           v.at,
		Healthy:      v.healthy,
		Phase:        v.settings.PhaseAt(now),
		Admitting:    v.settings.admitting(now),
		Waiting:      v.waiting(),
		Places:       snap.Seq - min(snap.Serving, snap.Seq),
		ServingRate:  rate,
		RateMeasured: measured,
		LastETA:      v.lastETA(now),
		Lanes:        v.laneInfo(),
	}
}

// lastETA is the wait of the last place handed out, computed as a visitor's
// status computes theirs, so the operator sees what the last fan is told.
func (v *view) lastETA(now time.Time) *time.Duration {
	s := v.settings
	if !v.healthy || s.Paused || s.SoldOut || s.QueueAll || s.QueueingMethod == Reject {
		return nil
	}
	// The last place handed out waits for everyone ahead and for itself.
	measured, young := v.ahead(v.snap.Seq)
	wait, ok := v.waitFor(measured + young)
	if !ok {
		return nil
	}
	switch s.PhaseAt(now) {
	case Live:
	case Prequeue:
		// Nobody moves before the start.
		wait += s.EventStart.Sub(now).Seconds()
	default:
		return nil
	}
	d := time.Duration(math.Ceil(wait)) * time.Second
	return &d
}

// String names the phase as the admin API shows it.
func (p Phase) String() string {
	switch p {
	case NotYetOpen:
		return "not_yet_open"
	case Prequeue:
		return "prequeue"
	case Live:
		return "live"
	case Ended:
		return "ended"
	}
	return "unknown"
}
