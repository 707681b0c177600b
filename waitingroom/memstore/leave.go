package memstore

import (
	"context"
	"sort"
	"time"

	"github.com/foyer-dev/foyer/waitingroom"
)

// Leave implements waitingroom.Store, with the same rules as the Redis
// store's lua/leave.lua.
func (s *Store) Leave(_ context.Context, name, visitor string, place uint64, now time.Time, lim waitingroom.Limits) error {
	r, err := s.lockRoomAt(name, now)
	if err != nil {
		return err
	}
	defer r.mu.Unlock()
	at, had := r.finished[visitor]
	had = had && now.Before(at)
	if ses, ok := r.live[visitor]; ok {
		// Leaving in session ends it, as a revoke does: the slot frees.
		removeSession(r, ses)
		delete(r.seen, visitor)
	} else if !had && place < r.servingOf(place) {
		// Admitted and not yet claimed: the pending slot goes back. A
		// ghost of the batch held none, and a visitor who had a session
		// claimed theirs already.
		if b := r.batchOf(place); b != nil && !r.skipped(place) && b.Claimed < b.Count {
			b.Claimed++
			if b.Restored {
				r.releaseHeld()
			} else {
				r.pending--
			}
		}
	}
	if _, ok := r.readmitted[visitor]; ok {
		// A requeued visitor the controller let in again: their pending
		// slot goes back, and the admission counts as lapsed (requeue.go).
		delete(r.readmitted, visitor)
		r.pending--
		r.c.Abandoned++
	}
	delete(r.returners, visitor)
	delete(r.requeued, visitor)
	delete(r.idled, visitor)
	// The ticket is spent: a claim with it is Finished from now on.
	if forgetAt := now.Add(lim.Retention); !had || forgetAt.After(at) {
		r.finished[visitor] = forgetAt
		r.finishedQ = append(r.finishedQ, forget{visitor: visitor, at: forgetAt})
		sort.SliceStable(r.finishedQ, func(i, j int) bool { return r.finishedQ[i].at.Before(r.finishedQ[j].at) })
	}
	if place >= r.c.Serving && place < r.c.Seq {
		r.left[place] = struct{}{}
		// What beats said of it no longer counts.
		for _, w := range r.windows {
			if blk := w[place/waitingroom.LiveBlock]; blk != nil {
				off := place % waitingroom.LiveBlock
				blk[off/64] &^= 1 << (63 - off%64)
			}
		}
	}
	return nil
}

// admitPresent is admitLive with the places whose holders left passed over
// as ghosts, whatever their beats or their youth say: each left place that
// admitLive let in is a ghost instead, and as many more live places are
// looked for beyond.
func (r *memRoom) admitPresent(serving, end, young, n uint64) (uint64, uint64, []lapse) {
	to, got, ghosts := r.admitLive(serving, end, young, n)
	from := serving
	for len(r.left) > 0 {
		var out uint64
		for _, p := range r.leftIn(from, to) {
			if !inRuns(ghosts, p) {
				ghosts = addToRuns(ghosts, p)
				out++
			}
		}
		if out == 0 {
			break
		}
		got -= out
		if to >= end {
			break
		}
		more, got2, ghosts2 := r.admitLive(to, end, young, out)
		for _, g := range ghosts2 {
			if k := len(ghosts) - 1; k >= 0 && ghosts[k].start+ghosts[k].count == g.start {
				ghosts[k].count += g.count
			} else {
				ghosts = append(ghosts, g)
			}
		}
		got += got2
		from, to = to, more
	}
	return to, got, ghosts
}

// leftIn lists the left places in [from, to), in order.
func (r *memRoom) leftIn(from, to uint64) []uint64 {
	var ps []uint64
	for p := range r.left {
		if p >= from && p < to {
			ps = append(ps, p)
		}
	}
	sort.Slice(ps, func(i, j int) bool { return ps[i] < ps[j] })
	return ps
}

// dropLeft forgets the left places the line has passed.
func (r *memRoom) dropLeft() {
	for p := range r.left {
		if p < r.c.Serving {
			delete(r.left, p)
		}
	}
}

// inRuns reports whether p lies in one of the runs.
func inRuns(runs []lapse, p uint64) bool {
	for _, g := range runs {
		if p >= g.start && p < g.start+g.count {
			return true
		}
	}
	return false
}

// addToRuns adds place p (in none of them) to the sorted runs, joining the
// runs it touches, so that the runs are the same whichever way a ghost came.
func addToRuns(runs []lapse, p uint64) []lapse {
	i := sort.Search(len(runs), func(i int) bool { return runs[i].start > p })
	joinPrev := i > 0 && runs[i-1].start+runs[i-1].count == p
	joinNext := i < len(runs) && runs[i].start == p+1
	switch {
	case joinPrev && joinNext:
		runs[i-1].count += 1 + runs[i].count
		return append(runs[:i], runs[i+1:]...)
	case joinPrev:
		runs[i-1].count++
	case joinNext:
		runs[i].start--
		runs[i].count++
	default:
		runs = append(runs, lapse{})
		copy(runs[i+1:], runs[i:])
		runs[i] = lapse{start: p, count: 1}
	}
	return runs
}
