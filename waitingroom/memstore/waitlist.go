package memstore

import (
	"time"

	"github.com/foyer-dev/foyer/waitingroom"
)

// The waitlist's accounting (waitingroom/waitlist.go, docs/waitlist.md),
// done in the controller's step under the room's lock.

// waitlistBegins starts the waitlist at the first step that runs with it, and
// ends it at the first that runs without: the grants are forgotten then, as
// the sale is open again (or over).
func (r *memRoom) waitlistBegins(now time.Time, lim waitingroom.Limits) {
	switch {
	case lim.Waitlist && !r.wl.On():
		r.wl = waitingroom.WaitlistState{Since: now, From: r.c.Serving}
		r.history = append(r.history, waitingroom.HistoryEntry{Kind: waitingroom.HistoryWaitlistStart, Start: r.c.Serving, At: now})
	case !lim.Waitlist && r.wl.On():
		r.history = append(r.history, waitingroom.HistoryEntry{Kind: waitingroom.HistoryWaitlistEnd, Start: r.c.Serving, Count: r.wl.Admitted, At: now})
		r.wl, r.wlGrants = waitingroom.WaitlistState{Ended: now}, nil
	}
}

// waitlistFans is how many fans the step may let in: what the last supply
// serves beyond what is owed.
func (r *memRoom) waitlistFans(now time.Time, lim waitingroom.Limits) uint64 {
	var supply uint64
	if k := len(r.supply); k > 0 {
		supply = r.supply[k-1].Units
	} else {
		return 0 // no supply known: nothing came back that anyone knows of
	}
	fans, _, kept := waitingroom.WaitlistFans(supply, r.wlGrants, lim.WaitlistUnits, now)
	r.wlGrants = kept
	return fans
}

// waitlistLetIn records that the step reached places [start, start+count)
// and let got fans in from the waitlist: their units are owed from now until
// their session could have ended.
func (r *memRoom) waitlistLetIn(start, count, got uint64, now time.Time, lim waitingroom.Limits) {
	if got == 0 {
		return
	}
	last := r.supply[len(r.supply)-1]
	units := waitingroom.WaitlistGrantUnits(got, lim.WaitlistUnits, last.Units, r.waitlistState(now).Owed)
	r.wlGrants = append(r.wlGrants, waitingroom.WaitlistGrant{Units: units, Until: now.Add(lim.Grace + lim.Session)})
	r.wl.Admitted += got
	r.history = append(r.history, waitingroom.HistoryEntry{
		Kind: waitingroom.HistoryWaitlist, Start: start, Count: count, Number: last.N, At: now,
		Waitlist: &waitingroom.WaitlistStep{Fans: got, Units: units, Supply: last.Units, Owed: r.waitlistState(now).Owed},
	})
}

// waitlistState is the waitlist as a snapshot carries it at now.
func (r *memRoom) waitlistState(now time.Time) waitingroom.WaitlistState {
	w := r.wl
	for _, g := range r.wlGrants {
		if now.Before(g.Until) {
			w.Owed += g.Units
		}
	}
	return w
}

// restoreWaitlist takes up the waitlist a seed carries (a node's view of it
// before the store lost the room), unless the room has one: its record, and
// what it owed, as one grant until the seed says.
func (r *memRoom) restoreWaitlist(seed waitingroom.Recall) {
	w := seed.Waitlist
	if !w.On() || r.wl.On() {
		return
	}
	r.wl = waitingroom.WaitlistState{Since: w.Since, From: w.From, Admitted: w.Admitted}
	r.wlGrants = nil
	if w.Owed > 0 {
		r.wlGrants = []waitingroom.WaitlistGrant{{Units: w.Owed, Until: seed.WaitlistOwedUntil}}
	}
	r.history = append(r.history, waitingroom.HistoryEntry{Kind: waitingroom.HistoryWaitlistStart, Start: w.From, At: w.Since})
}
