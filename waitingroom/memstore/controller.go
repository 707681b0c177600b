package memstore

import (
	"context"
	"slices"
	"sort"
	"time"

	"github.com/foyer-dev/foyer/waitingroom"
)

// Advance implements waitingroom.Store.
func (s *Store) Advance(_ context.Context, name string, now time.Time, lim waitingroom.Limits) error {
	r, err := s.lockRoom(name)
	if err != nil {
		return err
	}
	defer r.mu.Unlock()
	tick := now.Unix()
	if tick <= r.lastTick {
		return nil
	}
	elapsed := tick - r.lastTick
	if r.lastTick == 0 || elapsed > waitingroom.MaxCatchUpTicks {
		elapsed = 1
	}
	r.lastTick = tick

	r.expireSessions(now)
	r.idleOut(now, lim)
	r.forgetFinished(now)
	r.expireRevocations(now)
	r.checks.sweep(now)
	for v, at := range r.returners {
		if now.Sub(at) >= waitingroom.ReturnerWindow {
			delete(r.returners, v)
		}
	}
	r.sweepRequeues(now)
	r.lapseReadmitted(now, lim)
	r.batches = r.lapseBatches(r.batches, now, lim)
	r.lapseLaneBatches(now, lim)
	for len(r.lapsed) > 0 && !now.Before(r.lapsed[0].at.Add(lim.ReturnWindow)) {
		r.lapsed = r.lapsed[1:]
	}
	if lim.CloseDraw && !r.drawClosed {
		r.drawClosed = true
		r.resetBeats()
		// A draw over fans some of whom are already in would reorder the past;
		// when admission has begun, the draw is empty and everyone stays FIFO.
		if r.c.Serving == 0 {
			r.drawSize = r.c.Seq
		}
	}
	r.settlePhases(now, lim)
	r.waitlistBegins(now, lim)
	r.admit(now, lim, elapsed)
	r.liveness = r.countLiveness(r.judgeFrom(now, lim))
	return nil
}

// lapseBatches ends the admissions at the head of batches (in admission
// order) whose grace is over: their unclaimed places lapse.
func (r *memRoom) lapseBatches(batches []waitingroom.Batch, now time.Time, lim waitingroom.Limits) []waitingroom.Batch {
	for len(batches) > 0 && !now.Before(batches[0].At.Add(lim.Grace)) {
		b := batches[0]
		lapsed := b.Count - b.Claimed
		if !b.Restored {
			r.pending -= int(lapsed)
		}
		r.c.Abandoned += lapsed
		batches = batches[1:]
		if lapsed > 0 || b.End() > b.Start+b.Count {
			// The ghosts skipped among its places lapse with it: one record
			// over the batch replaces theirs.
			r.dropLapses(b.Start, b.End())
			r.addLapse(lapse{start: b.Start, count: b.End() - b.Start, at: b.At.Add(lim.Grace)})
		}
	}
	return batches
}

// admit moves serving forward by the rate budget and the free slots, counted
// in live places: ghosts on the way are skipped without a slot. The returners
// waiting at the front are owed the budget first: the line gets what is left
// once each has a visitor's worth kept for them (lineCredit), so fans coming
// back never add to new_users_per_minute.
func (r *memRoom) admit(now time.Time, lim waitingroom.Limits, elapsed int64) {
	waitlist := lim.Waitlist && lim.WaitlistUnits > 0
	if (!lim.Open && !waitlist) || now.Before(r.settle) {
		r.credit = 0
		return
	}
	r.credit = accrue(r.credit, lim.Rate, elapsed)
	if !waitlist {
		// Requeued fans are held while the room waitlists, as
		// returners are: only what comes back lets anyone in.
		r.admitRequeued(now, lim)
	}
	line := r.lineCredit()
	fans := uint64(1<<63 - 1)
	if waitlist {
		// Returners are held while the room waitlists (as when paused):
		// the line gets the rate, and only as many as came back serve.
		line = r.credit
		fans = r.waitlistFans(now, lim)
	}
	end := r.c.Seq
	if at, held := waitingroom.PhaseHold(r.phaseRanges); held {
		// A phase pre-queue is open: the line goes on up to its first
		// fan, and its fans wait for the phase's start.
		end = max(min(end, at), r.c.Serving)
	}
	if lim.Reshuffle {
		end = r.drawnEnd()
		if r.c.Serving >= end && r.c.Seq > r.c.Serving {
			r.epochs = nextEpoch(r.epochs, r.c.Serving, r.c.Seq-r.c.Serving)
			e := r.epochs[len(r.epochs)-1]
			r.history = append(r.history, waitingroom.HistoryEntry{Kind: waitingroom.HistoryDraw, Start: e.Start, Count: e.Size, Number: e.Number, At: now})
			end = r.c.Seq
			// Places drawn now are not their keys: the beats so far, given
			// by key, say nothing of them.
			r.resetBeats()
		}
		// Only drawn places go in: the rest wait for the next draw.
		end = max(end, r.c.Serving)
	}
	// The priority lanes, if any, share the step by weight: the general
	// lane's share goes on as a room without lanes admits (lanes.go).
	lanesWaiting := r.lanesWaiting()
	waiting := r.admittingWaits(lim.Lanes, end-r.c.Serving, lanesWaiting)
	n := min(admissible(line, r.free(lim), end-r.c.Serving+lanesWaiting), fans)
	n, others := r.shareLanes(lim.Lanes, end-r.c.Serving, n, now)
	if n == 0 {
		r.stepPace(elapsed, waiting, others)
		return
	}
	serving, got, ghosts := r.admitPresent(r.c.Serving, end, r.judgeFrom(now, lim), n)
	r.stepPace(elapsed, true, got+others)
	if got > 0 {
		r.batches = append(r.batches, waitingroom.Batch{Start: r.c.Serving, Count: got, Span: spanOf(serving-r.c.Serving, got), At: now})
		// The ghosts among the places let in are recorded as lapsed now,
		// with the batch's grace: a claim from one is told apart from the
		// live places' and takes none of their slots.
		for _, g := range ghosts {
			r.addLapse(lapse{start: g.start, count: g.count, at: now.Add(lim.Grace)})
		}
	} else if serving > r.c.Serving {
		// Ghosts only: their turn passed now; one who comes back within the
		// return window is a lapsed admission.
		r.addLapse(lapse{start: r.c.Serving, count: serving - r.c.Serving, at: now})
	}
	// The line reached every place up to serving: the live ones went in,
	// the ghosts lost their turn then (and come back as lapsed admissions).
	r.history = waitingroom.AppendAdmission(r.history, r.c.Serving, serving-r.c.Serving, now)
	if waitlist {
		r.waitlistLetIn(r.c.Serving, serving-r.c.Serving, got, now, lim)
	}
	r.c.Skipped += serving - r.c.Serving - got
	r.c.Serving = serving
	r.dropLeft()
	r.c.Admitted += got
	r.pending += int(got)
	r.credit -= float64(got)
}

// spanOf is a batch's Span: 0 when it covers no ghost.
func spanOf(span, count uint64) uint64 {
	if span == count {
		return 0
	}
	return span
}

// lapse is an admission whose grace ended at with places unclaimed: their
// holders may come back at the front until the return window has passed.
type lapse struct {
	start, count uint64
	at           time.Time
}

// dropLapses forgets the lapses recorded from places in [start, end).
func (r *memRoom) dropLapses(start, end uint64) {
	r.lapsed = slices.DeleteFunc(r.lapsed, func(l lapse) bool { return l.start >= start && l.start < end })
}

// addLapse records an admission that lapsed, in the order of places.
func (r *memRoom) addLapse(l lapse) {
	i := sort.Search(len(r.lapsed), func(i int) bool { return r.lapsed[i].start >= l.start })
	r.lapsed = slices.Insert(r.lapsed, i, l)
}

// drawnEnd is the first key no draw has placed yet.
func (r *memRoom) drawnEnd() uint64 {
	if n := len(r.epochs); n > 0 {
		return r.epochs[n-1].End()
	}
	if r.drawClosed {
		return r.drawSize
	}
	return 0
}

// nextEpoch appends the epoch of keys [start, start+size), forgetting the oldest
// beyond waitingroom.MaxEpochs.
func nextEpoch(epochs []waitingroom.Epoch, start, size uint64) []waitingroom.Epoch {
	var number uint64 = 1
	if n := len(epochs); n > 0 {
		number = epochs[n-1].Number + 1
	}
	epochs = append(epochs, waitingroom.Epoch{Start: start, Size: size, Number: number})
	if len(epochs) > waitingroom.MaxEpochs {
		epochs = append(epochs[:0:0], epochs[len(epochs)-waitingroom.MaxEpochs:]...)
	}
	return epochs
}

// accrue adds elapsed seconds of rate budget, keeping at most one second's worth
// (and at least one visitor's) banked.
func accrue(credit float64, perMinute int, elapsed int64) float64 {
	perSecond := float64(perMinute) / 60
	return min(credit+perSecond*float64(elapsed), max(perSecond, 1))
}

// admissible is how many places one step may admit.
func admissible(credit float64, free int, waiting uint64) uint64 {
	if credit < 1 || free <= 0 || waiting == 0 {
		return 0
	}
	return min(uint64(credit), uint64(free), waiting)
}

// stepPace adds a step to the pace record (waitingroom.Pace.Step): the live
// places admitted, while people waited.
func (r *memRoom) stepPace(elapsed int64, waiting bool, got uint64) {
	if !waiting {
		r.pace.Still = 0
		return
	}
	r.pace = r.pace.Step(elapsed, got)
}
