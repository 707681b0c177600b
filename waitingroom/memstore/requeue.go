package memstore

import (
	"context"
	"sort"
	"time"

	"github.com/foyer-dev/foyer/waitingroom"
)

// Requeues (docs/PROTOCOL.md, "Requeue"): a visitor whose session failed on
// the site's side goes back to the front, first among the returners, in the
// order requeued. The same rules as the Redis store's lua/requeue.lua and
// the requeued branch of lua/claim.lua.

// requeueCount is how many times a visitor was requeued, remembered until
// forget.
type requeueCount struct {
	n      int
	forget time.Time
}

// Requeue implements waitingroom.Store.
func (s *Store) Requeue(_ context.Context, name, visitor, passID string, passExpiry, now time.Time, lim waitingroom.Limits) (waitingroom.RequeueResult, error) {
	r, err := s.lockRoomAt(name, now)
	if err != nil {
		return waitingroom.RequeueResult{}, err
	}
	defer r.mu.Unlock()
	ses, ok := r.live[visitor]
	if !ok || !passOf(ses.expires, passExpiry) {
		return waitingroom.RequeueResult{Status: waitingroom.RequeueNoSession}, nil
	}
	rc := r.requeues[visitor]
	if !now.Before(rc.forget) {
		rc = requeueCount{}
	}
	if rc.n >= min(lim.Requeues, waitingroom.MaxRequeues) {
		return waitingroom.RequeueResult{Status: waitingroom.RequeueSpent, Count: rc.n}, nil
	}
	removeSession(r, ses)
	delete(r.seen, visitor)
	if passID != "" && passExpiry.After(now) {
		r.revCursor++
		r.revoked = append(r.revoked, waitingroom.Revocation{Cursor: r.revCursor, PassID: passID, ExpiresAt: passExpiry})
	}
	rc.n++
	rc.forget = now.Add(lim.Session + lim.Retention)
	r.requeues[visitor] = rc
	r.c.Requeued++
	r.requeued[visitor] = r.c.Requeued
	// At the front from now on: a slot and a visitor's worth of budget are
	// kept for them while they ask again within the returner window.
	r.returners[visitor] = now
	return waitingroom.RequeueResult{Status: waitingroom.RequeueDone, Count: rc.n}, nil
}

// claimRequeued answers a requeued visitor: in, into a new session, when
// nobody requeued before them still waits and a visitor's worth of budget
// and a slot are free; otherwise they keep their place at the front by
// asking again within the returner window, and lose it by not.
func (r *memRoom) claimRequeued(visitor string, order uint64, now time.Time, lim waitingroom.Limits) waitingroom.ClaimResult {
	if asked, ok := r.returners[visitor]; !ok || now.Sub(asked) >= waitingroom.ReturnerWindow {
		delete(r.requeued, visitor)
		delete(r.returners, visitor)
		return waitingroom.ClaimResult{Status: waitingroom.Passed}
	}
	r.returners[visitor] = now
	if !lim.Open || r.requeuedAhead(order) || r.credit < 1 || len(r.live)+r.pending >= lim.Cap {
		return waitingroom.ClaimResult{Status: waitingroom.Requeued}
	}
	r.credit--
	delete(r.returners, visitor)
	delete(r.requeued, visitor)
	r.c.Returned++
	return r.openAgain(visitor, now, lim)
}

// openAgain opens the new session of a requeued visitor let in again. It
// must end in a later second than the failed one (whose end is the finished
// mark less the retention), or it would share the pass id (SessionPassID)
// every node now refuses: let in within the second the failed one began, it
// ends a second after it.
func (r *memRoom) openAgain(visitor string, now time.Time, lim waitingroom.Limits) waitingroom.ClaimResult {
	exp := now.Add(lim.Session)
	if at, ok := r.finished[visitor]; ok {
		if failed := at.Add(-lim.Retention).Truncate(time.Second); !exp.Truncate(time.Second).After(failed) {
			exp = failed.Add(time.Second)
		}
	}
	fresh := lim
	fresh.Session = exp.Sub(now)
	return waitingroom.ClaimResult{Status: waitingroom.Claimed, Expires: r.open(visitor, now, fresh)}
}

// admitRequeued is the controller's step for the requeued visitors, before
// the line: it lets them in again first, in the order they were requeued,
// each taking a visitor's worth of the budget kept for them and the slot
// kept for them (a pending slot from now, as an admission of the line's),
// while the budget and the cap allow. Those who stopped asking were dropped
// with the returners already (sweepRequeues). Each one let in counts as
// returned now; their next claim opens the session (Claim), and one who
// does not come within the grace lapses (lapseReadmitted). Letting them in
// here, not only when they ask, keeps a node slow to answer their page from
// letting the line pass them meanwhile.
func (r *memRoom) admitRequeued(now time.Time, lim waitingroom.Limits) {
	if len(r.requeued) == 0 {
		return
	}
	order := make([]string, 0, len(r.requeued))
	for v := range r.requeued {
		order = append(order, v)
	}
	sort.Slice(order, func(i, j int) bool { return r.requeued[order[i]] < r.requeued[order[j]] })
	for _, v := range order {
		if r.credit < 1 || len(r.live)+r.pending >= lim.Cap {
			return
		}
		if _, ok := r.returners[v]; !ok {
			continue
		}
		r.credit--
		delete(r.returners, v)
		delete(r.requeued, v)
		if r.readmitted == nil {
			r.readmitted = make(map[string]time.Time)
		}
		r.readmitted[v] = now
		r.pending++
		r.c.Returned++
	}
}

// lapseReadmitted ends the admissions of requeued visitors let in again who
// did not come for their session within the grace: the slot goes to the
// next fan, the admission counts as lapsed, and the place at the front is
// over (their next claim is Finished: they rejoin at the back).
func (r *memRoom) lapseReadmitted(now time.Time, lim waitingroom.Limits) {
	for v, at := range r.readmitted {
		if !now.Before(at.Add(lim.Grace)) {
			delete(r.readmitted, v)
			r.pending--
			r.c.Abandoned++
		}
	}
}

// requeuedAhead reports whether a visitor requeued before order (order 0:
// any) still waits at the front: one still among the returners, whom each
// controller step keeps to those who asked within the returner window.
func (r *memRoom) requeuedAhead(order uint64) bool {
	for v, o := range r.requeued {
		if order != 0 && o >= order {
			continue
		}
		if _, ok := r.returners[v]; ok {
			return true
		}
	}
	return false
}

// sweepRequeues forgets the requeued visitors who stopped asking (the
// controller dropped them from the returners) and the counts past their
// time.
func (r *memRoom) sweepRequeues(now time.Time) {
	for v := range r.requeued {
		if _, ok := r.returners[v]; !ok {
			delete(r.requeued, v)
		}
	}
	for v, rc := range r.requeues {
		if !now.Before(rc.forget) {
			delete(r.requeues, v)
		}
	}
}
