package memstore

import (
	"container/heap"
	"context"
	"fmt"
	"sort"
	"time"

	"github.com/foyer-dev/foyer/waitingroom"
)

// Join implements waitingroom.Store.
func (s *Store) Join(ctx context.Context, name, visitor string, now time.Time, lim waitingroom.Limits) (waitingroom.JoinResult, error) {
	return waitingroom.JoinOne(ctx, s.JoinMany, name, visitor, now, lim)
}

// JoinMany implements waitingroom.Store.
func (s *Store) JoinMany(_ context.Context, name string, joiners []waitingroom.Joiner, now time.Time, lim waitingroom.Limits) ([]waitingroom.JoinResult, error) {
	r, err := s.lockRoom(name)
	if err != nil {
		return nil, err
	}
	defer r.mu.Unlock()
	if now.Before(r.settle) {
		return nil, waitingroom.ErrSettling
	}
	r.expireSessions(now)
	out := make([]waitingroom.JoinResult, len(joiners))
	for i, j := range joiners {
		if why, wait := r.checks.weigh(j, now, lim); why != waitingroom.NotRefused {
			out[i] = waitingroom.JoinResult{Refused: why, RetryAfter: wait}
			continue
		}
		lane, jlim := lim.Lanes.LaneOf(j.Lane), lim
		if lim.Lanes.On() && lim.Lanes.List()[lane].Weight == 0 {
			// The lane admits nobody in the phase in force: its joiner
			// waits, even in an empty room.
			jlim.Open = false
		}
		if lim.Lanes.On() && lane > 0 {
			out[i] = r.joinLane(lane, j.Visitor, now, jlim)
			continue
		}
		out[i] = r.join(j.Visitor, now, jlim)
	}
	return out, nil
}

func (r *memRoom) join(visitor string, now time.Time, lim waitingroom.Limits) waitingroom.JoinResult {
	// A phase pre-queue open holds its fans, this one among them.
	held := r.settlePhases(now, lim)
	key := r.c.Seq
	r.c.Seq++
	res := waitingroom.JoinResult{Key: key}
	// Returners waiting at the front are people waiting: the budget they
	// are owed is not a newcomer's (see lineCredit).
	if lim.Open && !held && key == r.c.Serving && r.lanesWaiting() == 0 && r.lineCredit() >= 1 && r.free(lim) > 0 {
		r.history = waitingroom.AppendAdmission(r.history, r.c.Serving, 1, now)
		r.c.Serving++
		r.c.Admitted++
		r.credit--
		res.Admitted = true
		res.Expires = r.open(visitor, now, lim)
	}
	return res
}

// settlePhases brings the phase pre-queues to now
// (waitingroom.SettlePhaseRanges) and reports whether one is open, holding
// the line at its first key.
func (r *memRoom) settlePhases(now time.Time, lim waitingroom.Limits) bool {
	var drew bool
	r.phaseRanges, drew = waitingroom.SettlePhaseRanges(r.phaseRanges, lim.PhaseQueue, r.c.Seq, now)
	if drew {
		// Places drawn are not their keys: the beats so far, given by
		// key, say nothing of them.
		r.resetBeats()
	}
	_, held := waitingroom.PhaseHold(r.phaseRanges)
	return held
}

// Claim implements waitingroom.Store.
func (s *Store) Claim(_ context.Context, name, visitor string, place uint64, now time.Time, lim waitingroom.Limits) (waitingroom.ClaimResult, error) {
	return s.claim(name, visitor, now, func(r *memRoom) waitingroom.ClaimResult {
		return r.claimPlace(visitor, place, now, lim)
	})
}

// claim answers a claim by visitor, under the room's lock: with their live
// session if they have one, else with then.
func (s *Store) claim(name, visitor string, now time.Time, then func(*memRoom) waitingroom.ClaimResult) (waitingroom.ClaimResult, error) {
	r, err := s.lockRoomAt(name, now)
	if err != nil {
		return waitingroom.ClaimResult{}, err
	}
	defer r.mu.Unlock()
	if ses, ok := r.live[visitor]; ok {
		// A claim of the live session hands out its pass: that is a use
		// of it, or a pass signed a moment before an idle-out would outlive
		// the session it belongs to.
		r.seen[visitor] = now
		return waitingroom.ClaimResult{Status: waitingroom.Claimed, Expires: ses.expires}, nil
	}
	return then(r), nil
}

// claimPlace answers the claim of a place by a visitor without a live
// session.
func (r *memRoom) claimPlace(visitor string, place uint64, now time.Time, lim waitingroom.Limits) waitingroom.ClaimResult {
	if _, ok := r.readmitted[visitor]; ok {
		// Let in again by the controller (requeue.go): the pending slot is
		// theirs.
		delete(r.readmitted, visitor)
		r.pending--
		return r.openAgain(visitor, now, lim)
	}
	if order, ok := r.requeued[visitor]; ok {
		return r.claimRequeued(visitor, order, now, lim)
	}
	if _, ok := r.idled[visitor]; ok && place < r.servingOf(place) {
		// Their session idled out: they come back as an admission that
		// lapsed, to the front when a slot is free (and stay one until then).
		return r.claimIdled(visitor, now, lim)
	}
	if at, ok := r.finished[visitor]; ok && now.Before(at) {
		return waitingroom.ClaimResult{Status: waitingroom.Finished}
	}
	if place >= r.servingOf(place) {
		return waitingroom.ClaimResult{Status: waitingroom.NotYet}
	}
	if place < r.forgotten {
		return waitingroom.ClaimResult{Status: waitingroom.Finished}
	}
	b := r.batchOf(place)
	if b != nil && r.skipped(place) {
		// A ghost the controller passed over in this batch: the batch's
		// slots are the live places', and the ghost comes back as a lapsed
		// admission.
		return r.claimLapsed(visitor, place, now, lim)
	}
	if b != nil && b.Restored && b.Claimed >= b.Count {
		// Every place of an admission restored after a loss was claimed
		// before it: this is one of them again, whose session ended.
		return waitingroom.ClaimResult{Status: waitingroom.Finished}
	}
	// A batch with every slot claimed has none left for this place: it was
	// claimed already, by this visitor before the store forgot them.
	if b != nil && b.Claimed < b.Count {
		if b.Restored && !r.releaseHeld() && len(r.live)+r.pending >= lim.Cap {
			// Its held slot went to a session the nodes' views did not
			// know (one that began or resumed just before the loss, and
			// reclaimed it): the place waits at the front for the next
			// slot, never above the cap.
			r.returners[visitor] = now
			return waitingroom.ClaimResult{Status: waitingroom.Full}
		}
		delete(r.returners, visitor)
		b.Claimed++
		if !b.Restored {
			r.pending--
		}
		return waitingroom.ClaimResult{Status: waitingroom.Claimed, Expires: r.open(visitor, now, lim)}
	}
	return r.claimLapsed(visitor, place, now, lim)
}

// claimLapsed answers a visitor whose admission lapsed unclaimed (or whose
// place was skipped as a ghost). Within the return window after their grace
// (or while they hold a returner's place, having come back in time) they go
// to the front, within the rate (see letReturnerIn). Never while the room
// admits nobody; and after the window their turn has passed.
func (r *memRoom) claimLapsed(visitor string, place uint64, now time.Time, lim waitingroom.Limits) waitingroom.ClaimResult {
	asked, returning := r.returners[visitor]
	returning = returning && now.Sub(asked) < waitingroom.ReturnerWindow
	delete(r.returners, visitor)
	// The controller reached the place within a grace still running (it was
	// skipped as a ghost, or its batch's slots are taken), or it lapsed
	// within the return window.
	if !returning && r.batchOf(place) == nil && !r.mayReturn(place, now, lim) {
		return waitingroom.ClaimResult{Status: waitingroom.Passed}
	}
	if st, ok := r.letReturnerIn(visitor, now, lim); !ok {
		return waitingroom.ClaimResult{Status: st}
	}
	r.c.Returned++
	return waitingroom.ClaimResult{Status: waitingroom.Claimed, Expires: r.open(visitor, now, lim)}
}

// letReturnerIn decides whether a fan coming back at the front (a lapsed
// admission, a skipped ghost, an idled-out session) goes in now. They are
// let in within the rate: each takes a visitor's worth of the controller's
// budget, which every step keeps for the returners before the line gets any
// (lineCredit), and a slot that is free, whoever among the returners asks
// first, after every requeued visitor still waiting (requeue.go). Otherwise
// they keep their place at the front by asking again within
// waitingroom.ReturnerWindow: Held while the room admits nobody, Full while
// it has no budget or no slot for them.
func (r *memRoom) letReturnerIn(visitor string, now time.Time, lim waitingroom.Limits) (waitingroom.ClaimStatus, bool) {
	switch {
	case !lim.Open:
		r.returners[visitor] = now
		return waitingroom.Held, false
	case r.credit < 1 || len(r.live)+r.pending >= lim.Cap || r.requeuedAhead(0):
		r.returners[visitor] = now
		return waitingroom.Full, false
	}
	r.credit--
	return waitingroom.Claimed, true
}

// lineCredit is the budget left for the line and for newcomers: the
// returners waiting at the front are owed a visitor's worth each first.
func (r *memRoom) lineCredit() float64 {
	return r.credit - float64(len(r.returners))
}

// skipped reports whether place was passed over as a ghost by an admission
// still within its grace: the controller recorded it as lapsed then.
func (r *memRoom) skipped(place uint64) bool {
	return r.lapseOf(place) != nil
}

// mayReturn reports whether place lapsed less than the return window ago.
func (r *memRoom) mayReturn(place uint64, now time.Time, lim waitingroom.Limits) bool {
	l := r.lapseOf(place)
	return l != nil && now.Before(l.at.Add(lim.ReturnWindow))
}

// lapseOf finds the recorded lapse holding place, if any.
func (r *memRoom) lapseOf(place uint64) *lapse {
	i := sort.Search(len(r.lapsed), func(i int) bool { return r.lapsed[i].start > place }) - 1
	if i < 0 || place >= r.lapsed[i].start+r.lapsed[i].count {
		return nil
	}
	return &r.lapsed[i]
}

// Release implements waitingroom.Store.
func (s *Store) Release(_ context.Context, name, visitor, passID string, passExpiry, now time.Time, lim waitingroom.Limits) error {
	r, err := s.lockRoom(name)
	if err != nil {
		return err
	}
	defer r.mu.Unlock()
	if ses, ok := r.live[visitor]; ok {
		if passOf(ses.expires, passExpiry) {
			removeSession(r, ses)
			delete(r.seen, visitor)
		}
	} else if visitor != "" {
		// A session the store lost: one of the held slots stood for it. (A
		// revocation put back after a loss names no visitor: it ends
		// nothing.)
		r.releaseHeld()
		delete(r.seen, visitor)
	}
	if passID != "" && passExpiry.After(now) {
		r.revCursor++
		r.revoked = append(r.revoked, waitingroom.Revocation{Cursor: r.revCursor, PassID: passID, ExpiresAt: passExpiry})
	}
	return nil
}

// passOf reports whether a pass ending at passExpiry is one of the session
// ending at ends (a zero passExpiry names whatever session is live). A pass
// carries its session's end to the second (SessionPassID): one of an
// earlier session of the same visitor, a requeued one, must end nothing of
// the session they hold now.
func passOf(ends, passExpiry time.Time) bool {
	return passExpiry.IsZero() || ends.Unix() == passExpiry.Unix()
}

// free is the number of slots the controller may hand out: the cap, less live
// sessions, admissions not yet claimed, and slots held back for late returners.
func (r *memRoom) free(lim waitingroom.Limits) int {
	return lim.Cap - len(r.live) - r.pending - len(r.returners)
}

// open starts a session and remembers the visitor as having had one.
func (r *memRoom) open(visitor string, now time.Time, lim waitingroom.Limits) time.Time {
	exp := now.Add(lim.Session)
	if ses, ok := r.live[visitor]; ok {
		// Admitted again while a session is live (a fan keyed to an account
		// rejoins): the one session runs to the new end. A second heap entry
		// would end it at the old one.
		ses.expires = exp
		heap.Fix(&r.sessions, ses.index)
	} else {
		ses := &session{visitor: visitor, expires: exp}
		heap.Push(&r.sessions, ses)
		r.live[visitor] = ses
	}
	r.c.Claimed++
	r.seen[visitor] = now
	forgetAt := exp.Add(lim.Retention)
	r.finished[visitor] = forgetAt
	r.finishedQ = append(r.finishedQ, forget{visitor: visitor, at: forgetAt})
	return exp
}

// releaseHeld gives up one held placeholder, for a session it stood for that
// is now accounted for (a claim from a restored batch, a reclaim, an
// announcement) or over (a release). It reports whether one was still held:
// they all end at once, and once they have, there are none left to give.
func (r *memRoom) releaseHeld() bool {
	if r.heldLeft == 0 {
		return false
	}
	ses, ok := r.live[fmt.Sprintf("held:%d", r.heldLeft-1)]
	if !ok {
		r.heldLeft = 0
		return false
	}
	r.heldLeft--
	heap.Remove(&r.sessions, ses.index)
	delete(r.live, ses.visitor)
	return true
}

// batchOf finds the unexpired admission batch holding place, if any.
func (r *memRoom) batchOf(place uint64) *waitingroom.Batch {
	if lane, _ := waitingroom.LaneOfPlace(place); lane > 0 {
		return r.laneBatchOf(place)
	}
	i := sort.Search(len(r.batches), func(i int) bool { return r.batches[i].End() > place })
	if i < len(r.batches) && r.batches[i].Start <= place {
		return &r.batches[i]
	}
	return nil
}

// removeSession ends a live session before its time.
func removeSession(r *memRoom, ses *session) {
	heap.Remove(&r.sessions, ses.index)
	delete(r.live, ses.visitor)
}

// idledSession is a session that idled out: when, and when it would have
// ended. Its holder may come back to the time it had left, never to more
// (docs/line.md, "Idle sessions").
type idledSession struct {
	at, ends time.Time
}

// claimIdled answers a visitor whose session idled out. Within the return
// window after the idle-out (or while holding a returner's slot, having come
// back in time) they resume that session, to the end it had: a ticket's
// sessions together never outlast one session_duration. Never while the room
// admits nobody; with no time left the session has finished; after the window
// their turn has passed. Either way the idle-out is used up: one resumption
// per idle-out.
func (r *memRoom) claimIdled(visitor string, now time.Time, lim waitingroom.Limits) waitingroom.ClaimResult {
	io := r.idled[visitor]
	asked, returning := r.returners[visitor]
	returning = returning && now.Sub(asked) < waitingroom.ReturnerWindow
	delete(r.returners, visitor)
	if !now.Before(io.ends) {
		delete(r.idled, visitor)
		return waitingroom.ClaimResult{Status: waitingroom.Finished}
	}
	if !returning && !now.Before(io.at.Add(lim.ReturnWindow)) {
		delete(r.idled, visitor)
		return waitingroom.ClaimResult{Status: waitingroom.Passed}
	}
	if st, ok := r.letReturnerIn(visitor, now, lim); !ok {
		return waitingroom.ClaimResult{Status: st}
	}
	r.c.Returned++
	delete(r.idled, visitor)
	return waitingroom.ClaimResult{Status: waitingroom.Claimed, Expires: r.resume(visitor, io.ends, now)}
}

// resume puts an idled-out session back, to the end it had: the same end
// gives the same pass id (SessionPassID), so the origin sees one session.
func (r *memRoom) resume(visitor string, ends, now time.Time) time.Time {
	ses := &session{visitor: visitor, expires: ends}
	heap.Push(&r.sessions, ses)
	r.live[visitor] = ses
	r.seen[visitor] = now
	return ends
}

// Reclaim implements waitingroom.Store.
func (s *Store) Reclaim(_ context.Context, name, visitor string, ends, now time.Time, lim waitingroom.Limits) (waitingroom.ClaimResult, error) {
	return s.claim(name, visitor, now, func(r *memRoom) waitingroom.ClaimResult {
		return r.reclaimSession(visitor, ends, now, lim)
	})
}

// reclaimSession answers the reclaim of a session known from its pass, whose
// visitor has no live session.
func (r *memRoom) reclaimSession(visitor string, ends, now time.Time, lim waitingroom.Limits) waitingroom.ClaimResult {
	if _, ok := r.idled[visitor]; ok {
		// It idled out since the loss: its passes are revoked, and the
		// node will know within a refresh. Until then, wait.
		return waitingroom.ClaimResult{Status: waitingroom.NotYet}
	}
	if at, ok := r.finished[visitor]; (ok && now.Before(at)) || !now.Before(ends) {
		return waitingroom.ClaimResult{Status: waitingroom.Finished}
	}
	delete(r.returners, visitor)
	if !r.releaseHeld() {
		// No slot is held for it any more: back at the front, as an
		// idled-out session comes back, within the rate and into a free
		// slot.
		if st, ok := r.letReturnerIn(visitor, now, lim); !ok {
			return waitingroom.ClaimResult{Status: st}
		}
	}
	return waitingroom.ClaimResult{Status: waitingroom.Claimed, Expires: r.reclaim(visitor, ends, now, lim)}
}

// reclaim puts back a session known from its pass, to the pass's end (the
// same end gives the same pass id), and remembers its visitor as having had
// one.
func (r *memRoom) reclaim(visitor string, ends, now time.Time, lim waitingroom.Limits) time.Time {
	r.resume(visitor, ends, now)
	forgetAt := ends.Add(lim.Retention)
	r.finished[visitor] = forgetAt
	r.finishedQ = append(r.finishedQ, forget{visitor: visitor, at: forgetAt})
	return ends
}
