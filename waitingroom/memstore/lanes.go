package memstore

import (
	"cmp"
	"slices"
	"time"

	"github.com/foyer-dev/foyer/waitingroom"
)

// Priority lanes in memory (docs/line.md, "Priority lanes"), with the same
// rules as the Redis store's (lua/lib.lua, lanes), which the differential
// test holds them to. The general lane is the line of a room without lanes
// (its counters are Counters'); every other lane keeps its own order keys
// and serving counter here, and its places are waitingroom.LanePlace's. A
// room without lanes never reaches this file's state: nothing changes.

// laneLine is the state of one lane other than the general lane.
type laneLine = waitingroom.LaneCounters

// laneAt is lane i's state (i >= 1), made on first use.
func (r *memRoom) laneAt(i int) *laneLine {
	for len(r.lanes) <= i {
		r.lanes = append(r.lanes, laneLine{})
	}
	return &r.lanes[i]
}

// lanesWaiting counts the places waiting in the lanes other than the
// general lane.
func (r *memRoom) lanesWaiting() uint64 {
	var n uint64
	for _, l := range r.lanes {
		n += l.Seq - l.Serving
	}
	return n
}

// admittingWaits reports whether someone waits whom the step could let in:
// in a lane whose weight is above 0, general of them in the general lane,
// others in the other lanes. Only such a second counts in the line's pace
// (waitingroom.Pace): fans of a lane that admits nobody in the phase in
// force wait for another phase, not for the line to move.
func (r *memRoom) admittingWaits(lanes waitingroom.Lanes, general, others uint64) bool {
	if !lanes.On() {
		return general > 0 || others > 0
	}
	for i, w := range lanes.Weights() {
		if w == 0 {
			continue
		}
		if i == 0 && general > 0 {
			return true
		}
		if l := r.laneAt(i); i > 0 && l.Seq > l.Serving {
			return true
		}
	}
	return false
}

// servingOf is the serving counter of place's lane: places below it may
// claim.
func (r *memRoom) servingOf(place uint64) uint64 {
	lane, _ := waitingroom.LaneOfPlace(place)
	if lane == 0 {
		return r.c.Serving
	}
	if lane >= len(r.lanes) {
		return waitingroom.LanePlace(lane, 0)
	}
	return waitingroom.LanePlace(lane, r.lanes[lane].Serving)
}

// joinLane hands a joiner of lane i (i >= 1) the next place of that lane,
// admitted on the spot only as a newcomer to a room where nobody waits in
// any lane would be.
func (r *memRoom) joinLane(i int, visitor string, now time.Time, lim waitingroom.Limits) waitingroom.JoinResult {
	l := r.laneAt(i)
	key := waitingroom.LanePlace(i, l.Seq)
	l.Seq++
	res := waitingroom.JoinResult{Key: key}
	if lim.Open && r.c.Seq == r.c.Serving && r.lanesWaiting() == 1 && r.lineCredit() >= 1 && r.free(lim) > 0 {
		r.history = waitingroom.AppendAdmission(r.history, key, 1, now)
		l.Serving++
		l.Admitted++
		r.credit--
		res.Admitted = true
		res.Expires = r.open(visitor, now, lim)
	}
	return res
}

// shareLanes splits a step's n admissions between the lanes by weight
// (waitingroom.SplitAdmissions), with general places of the general lane
// waiting, and lets in every other lane's share, first come first served
// within it. It returns the general lane's share and the places let in
// from the other lanes. The split is recorded in the public history
// (waitingroom.HistoryLanes) so that anyone can replay it.
func (r *memRoom) shareLanes(lanes waitingroom.Lanes, general, n uint64, now time.Time) (uint64, uint64) {
	if !lanes.On() || n == 0 {
		return n, 0
	}
	if spec := lanes.String(); spec != r.laneSpec || len(r.laneCredit) != lanes.Len() {
		// New weights start a new round robin.
		r.laneSpec, r.laneCredit = spec, make([]int64, lanes.Len())
	}
	waiting := make([]uint64, lanes.Len())
	waiting[0] = general
	for i := 1; i < len(waiting); i++ {
		l := r.laneAt(i)
		waiting[i] = l.Seq - l.Serving
	}
	before := slices.Clone(r.laneCredit)
	got := waitingroom.SplitAdmissions(lanes.Weights(), r.laneCredit, waiting, n)
	r.history = append(r.history, waitingroom.LaneStep(r.laneSpec, before, waiting, got, now))
	var other uint64
	for i := 1; i < len(got); i++ {
		k := got[i]
		if k == 0 {
			continue
		}
		l := r.laneAt(i)
		start := waitingroom.LanePlace(i, l.Serving)
		r.laneBatches = append(r.laneBatches, waitingroom.Batch{Start: start, Count: k, At: now})
		r.history = waitingroom.AppendAdmission(r.history, start, k, now)
		l.Serving += k
		l.Admitted += k
		r.pending += int(k)
		r.credit -= float64(k)
		other += k
	}
	return got[0], other
}

// laneBatchOf finds the unexpired admission of a lane other than the
// general lane holding place, if any.
func (r *memRoom) laneBatchOf(place uint64) *waitingroom.Batch {
	for i := range r.laneBatches {
		if b := &r.laneBatches[i]; b.Start <= place && place < b.End() {
			return b
		}
	}
	return nil
}

// laneSnapshot copies the lanes' counters and round robin for a snapshot.
func (r *memRoom) laneSnapshot(snap *waitingroom.Snapshot) {
	// The lanes' admissions follow the general lane's, by first place, as
	// the Redis store's sorted set gives them.
	lb := slices.Clone(r.laneBatches)
	slices.SortFunc(lb, func(a, b waitingroom.Batch) int { return cmp.Compare(a.Start, b.Start) })
	snap.Batches = append(snap.Batches, lb...)
	if len(r.lanes) == 0 && len(r.laneCredit) == 0 {
		return
	}
	// Lanes never used are left out at the end, as the Redis store does.
	lanes := r.lanes
	for len(lanes) > 1 && lanes[len(lanes)-1] == (laneLine{}) {
		lanes = lanes[:len(lanes)-1]
	}
	if len(lanes) > 1 {
		snap.Lanes = slices.Clone(lanes)
	}
	snap.LaneCredit = slices.Clone(r.laneCredit)
	snap.LaneSpec = r.laneSpec
}

// restoreLanes raises the lanes' counters to a seed's (they only grow) and,
// in a room the seed creates, takes its round robin.
func (r *memRoom) restoreLanes(seed waitingroom.Recall, created bool) {
	for i, l := range seed.Lanes {
		if i == 0 {
			continue
		}
		at := r.laneAt(i)
		*at = at.Max(l)
	}
	if created && len(seed.LaneCredit) > 0 {
		r.laneSpec, r.laneCredit = seed.LaneSpec, slices.Clone(seed.LaneCredit)
	}
}

// lapseLaneBatches ends the lanes' admissions whose grace is over, lane by
// lane from the first place on, as the Redis store's sorted set of batches
// gives them: the head of each lane's that is over, up to the first that is
// not.
func (r *memRoom) lapseLaneBatches(now time.Time, lim waitingroom.Limits) {
	if len(r.laneBatches) == 0 {
		return
	}
	slices.SortStableFunc(r.laneBatches, func(a, b waitingroom.Batch) int { return cmp.Compare(a.Start, b.Start) })
	kept := r.laneBatches[:0]
	lane, blocked := -1, false
	for _, b := range r.laneBatches {
		if l, _ := waitingroom.LaneOfPlace(b.Start); l != lane {
			lane, blocked = l, false
		}
		if !blocked && len(r.lapseBatches([]waitingroom.Batch{b}, now, lim)) == 0 {
			continue
		}
		blocked = true
		kept = append(kept, b)
	}
	r.laneBatches = kept
}
