package rehearsal

import (
	"fmt"
	"math"
	"slices"
	"sort"
	"time"
)

// fifoRecord is what one fan saw of the line, as offsets from the start.
type fifoRecord struct {
	fan                int32
	joinStart, joinEnd time.Duration // the request that gave the fan a place
	admitted           bool
	key                uint64        // the pass's order_key, when admitted
	passAt             time.Duration // when the response carrying the pass arrived
	// lastWait is when the last request that was answered "wait" (queued)
	// was sent; -1 if none was.
	lastWait time.Duration
}

// fifoResult is the verdict on the order of admission.
type fifoResult struct {
	checked, admitted int
	// keyInversions: admitted fans who joined strictly after another admitted
	// fan had finished joining, yet hold a smaller order key.
	keyInversions int
	// passInversions: fans told to wait at a moment when a fan with a larger
	// order key already had a pass.
	passInversions int
	// arrivalInversions: fans told to wait at a moment when a fan who joined
	// strictly after them already had a pass. Unlike passInversions it covers
	// fans who never got a pass (the sale sold out first), whose order key is
	// not visible to them.
	arrivalInversions int
	// late counts admitted fans who got their pass after a fan with a larger
	// key did; maxLateness is the longest such wait. With no passInversions,
	// each of them was within its own polling interval: it was not told to
	// wait once the later key was in, it simply had not asked again yet.
	late        int
	maxLateness time.Duration
	examples    []string
}

// ok reports whether admission kept the order of the line.
func (r fifoResult) ok() bool {
	return r.keyInversions == 0 && r.passInversions == 0 && r.arrivalInversions == 0
}

const never = time.Duration(math.MaxInt64)

// checkFIFO checks three orders, each strictly, on what the fans observed:
//
//  1. keys follow arrival: a fan who started joining after another's join
//     had completed got a larger order key;
//  2. passes follow keys: once a fan with key k held a pass, no fan with a
//     key below k was told to wait (its request sent after that pass
//     arrived);
//  3. passes follow arrival: the same, with "joined strictly earlier" in
//     place of "smaller key", for every fan, admitted or not.
//
// "Strictly" because requests overlap: only a request sent after another's
// answer arrived is known to come after it. The only slack is what the
// polling itself creates: a fan whose turn came while it was between two
// polls gets its pass at its next poll, after later keys perhaps, and that
// is reported as lateness, not as an inversion.
func checkFIFO(recs []fifoRecord) fifoResult {
	res := fifoResult{checked: len(recs)}
	var adm []fifoRecord
	for _, r := range recs {
		if r.admitted {
			adm = append(adm, r)
		}
	}
	res.admitted = len(adm)
	example := func(format string, args ...any) {
		if len(res.examples) < 5 {
			res.examples = append(res.examples, fmt.Sprintf(format, args...))
		}
	}

	// 1. Keys follow arrival.
	byJoin := slices.Clone(adm)
	slices.SortFunc(byJoin, func(a, b fifoRecord) int { return cmpDur(a.joinStart, b.joinStart) })
	minKey := make([]uint64, len(byJoin)+1) // minKey[i]: smallest key among byJoin[i:]
	minKey[len(byJoin)] = math.MaxUint64
	for i := len(byJoin) - 1; i >= 0; i-- {
		minKey[i] = min(minKey[i+1], byJoin[i].key)
	}
	for _, r := range byJoin {
		j := firstJoinAfter(byJoin, r.joinEnd)
		if minKey[j] < r.key {
			res.keyInversions++
			example("fan %d joined by %v with key %d, a fan who joined later got key %d", r.fan, r.joinEnd, r.key, minKey[j])
		}
	}

	// 2. Passes follow keys.
	byKey := slices.Clone(adm)
	slices.SortFunc(byKey, func(a, b fifoRecord) int {
		switch {
		case a.key < b.key:
			return -1
		case a.key > b.key:
			return 1
		}
		return 0
	})
	firstPass := make([]time.Duration, len(byKey)+1) // earliest pass among byKey[i:]
	firstPass[len(byKey)] = never
	for i := len(byKey) - 1; i >= 0; i-- {
		firstPass[i] = min(firstPass[i+1], byKey[i].passAt)
	}
	for i, r := range byKey {
		later := firstPass[i+1]
		if r.lastWait >= 0 && r.lastWait > later {
			res.passInversions++
			example("fan %d (key %d) was told to wait at %v; a larger key had its pass at %v", r.fan, r.key, r.lastWait, later)
		}
		if late := r.passAt - later; later != never && late > 0 {
			res.late++
			res.maxLateness = max(res.maxLateness, late)
		}
	}

	// 3. Passes follow arrival, for everyone.
	all := slices.Clone(recs)
	slices.SortFunc(all, func(a, b fifoRecord) int { return cmpDur(a.joinStart, b.joinStart) })
	firstPass = make([]time.Duration, len(all)+1)
	firstPass[len(all)] = never
	for i := len(all) - 1; i >= 0; i-- {
		p := never
		if all[i].admitted {
			p = all[i].passAt
		}
		firstPass[i] = min(firstPass[i+1], p)
	}
	for _, r := range all {
		later := firstPass[firstJoinAfter(all, r.joinEnd)]
		if r.lastWait >= 0 && r.lastWait > later {
			res.arrivalInversions++
			example("fan %d (joined by %v) was told to wait at %v; a fan who joined after it had its pass at %v", r.fan, r.joinEnd, r.lastWait, later)
		}
	}
	return res
}

// firstJoinAfter is the index of the first record, in recs sorted by
// joinStart, that started joining strictly after t.
func firstJoinAfter(recs []fifoRecord, t time.Duration) int {
	return sort.Search(len(recs), func(i int) bool { return recs[i].joinStart > t })
}

func cmpDur(a, b time.Duration) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}
