package rehearsal

import (
	"cmp"
	"slices"
	"sort"
	"time"
)

// The fates of the fans the site failed (docs/rehearsal.md, "An origin that
// fails 2% of checkouts"): where each ended against their place in line,
// whether they got tickets, how long they waited, and whether the requeued
// went in first, in the order they were requeued.

// failedRecord is what one fan the site failed saw, as offsets.
type failedRecord struct {
	fan                  int32
	key                  uint64        // the order key of their place
	joinStart, passAt    time.Duration // the first admission
	failStart, failEnd   time.Duration // the first failed checkout
	requeued             bool
	requeueWait          time.Duration // last "wait" after the requeue; -1 none
	readmitAt            time.Duration // let in again; -1 never
	bought, gaveUp, kept bool          // kept: neither requeued nor gave up (its session ran on)
}

// admission is one fan's first pass: their place, when it arrived, and a
// moment they were surely not yet let in (their last request answered
// "wait" was sent then, or, let in at once, their join was).
type admission struct {
	key               uint64
	passAt, notBefore time.Duration
}

// fanFate is where one failed fan ended: passedBy counts the fans behind
// them in line who got in after the failure while they were kept out.
type fanFate struct {
	rec      failedRecord
	passedBy int
	waited   time.Duration // in line in all: before the first pass, and after the requeue
}

// requeueFates sums up the fates of the fans the site failed in one run.
type requeueFates struct {
	fates                                []fanFate
	failed, requeued, readmitted, bought int
	gaveUp, kept, behind, maxPassedBy    int
	waitP50, waitMax                     time.Duration
	orderInversions                      int // a requeued fan kept waiting after one requeued after it got back in
	lineFirst                            int // a requeued fan kept waiting after a fan of the line (any place) got in
	capMax, capSetting                   int // most sessions the room counted at once; its total_active_users
	capRead                              bool
}

// behindOK is the scenario's target: 0 fans the site failed end behind
// where they were, and the requeued went in first and in order.
func (q requeueFates) behindOK() bool {
	return q.behind == 0 && q.orderInversions == 0 && q.lineFirst == 0
}

// capOK: the room never counted more sessions than total_active_users.
func (q requeueFates) capOK() bool { return !q.capRead || q.capMax <= q.capSetting }

// failedRecords reads the fans the site failed, and every fan's first pass.
func failedRecords(fans []fan) ([]failedRecord, []admission) {
	var recs []failedRecord
	var adm []admission
	for i := range fans {
		f := &fans[i]
		if f.passAt >= 0 {
			notBefore := f.lastWait
			if notBefore < 0 {
				notBefore = f.joinStart
			}
			adm = append(adm, admission{key: f.key, passAt: f.passAt, notBefore: notBefore})
		}
		if f.failEnd < 0 {
			continue
		}
		gaveUp := !f.requeued && f.outcome == outSiteFailed
		recs = append(recs, failedRecord{
			fan: int32(i), key: f.key, joinStart: f.joinStart, passAt: f.passAt, failStart: f.failStart, failEnd: f.failEnd,
			requeued: f.requeued, requeueWait: f.requeueWait, readmitAt: f.readmitAt,
			bought: f.outcome == outBought, gaveUp: gaveUp, kept: !f.requeued && !gaveUp,
		})
	}
	return recs, adm
}

// judgeFates works out each failed fan's fate against the line:
//
//   - requeued: passed by every fan behind them (a larger key) surely let
//     in after the requeue (still told to wait, or joining, on a request
//     sent more than viewLag after the requeue was answered) whose pass arrived before a
//     request of theirs was still answered "wait". Strictly, as in the FIFO
//     check: a fan let in between two of its polls learns of it at the
//     next, and one let in before the requeue may learn of it after;
//   - gave up: passed by every fan behind them let in after the failure;
//   - kept their session (the checkout went through on a later try): 0.
//
// It also counts the requeued kept waiting after a fan of the line got in
// (they go first) or after a fan requeued after them got back in (in the
// order requeued).
func judgeFates(recs []failedRecord, adm []admission) requeueFates {
	// A node tells a fan to wait from its view of the line, up to a refresh
	// old, and one under load refreshes late: a fan the store let in just
	// before the requeue can still be told to wait just after it. Only a
	// wait answered later than viewLag after the requeue surely came after
	// the fan was let in.
	const viewLag = time.Second
	byPass := slices.Clone(adm)
	slices.SortFunc(byPass, func(a, b admission) int { return cmp.Compare(a.passAt, b.passAt) })
	// passedBetween counts the first passes that arrived in (from, to), of
	// keys above key unless any, and, when surely, of fans surely not let
	// in by from.
	passedBetween := func(key uint64, from, to time.Duration, any, surely bool) int {
		i := sort.Search(len(byPass), func(i int) bool { return byPass[i].passAt > from })
		n := 0
		for ; i < len(byPass) && byPass[i].passAt < to; i++ {
			if (any || byPass[i].key > key) && (!surely || byPass[i].notBefore > from+viewLag) {
				n++
			}
		}
		return n
	}
	var q requeueFates
	var waits []time.Duration
	for _, r := range recs {
		ft := fanFate{rec: r}
		switch {
		case r.requeued && r.requeueWait >= 0:
			ft.passedBy = passedBetween(r.key, r.failEnd, r.requeueWait, false, true)
			if passedBetween(r.key, r.failEnd, r.requeueWait, true, true) > 0 {
				q.lineFirst++
			}
		case r.gaveUp:
			ft.passedBy = passedBetween(r.key, r.failEnd, never, false, false)
		}
		if r.passAt >= 0 && r.joinStart >= 0 {
			ft.waited = r.passAt - r.joinStart
		}
		if r.requeued && r.readmitAt >= 0 {
			ft.waited += r.readmitAt - r.failEnd
		}
		q.failed++
		if r.requeued {
			q.requeued++
		}
		if r.readmitAt >= 0 {
			q.readmitted++
		}
		if r.bought {
			q.bought++
		}
		if r.gaveUp {
			q.gaveUp++
		}
		if r.kept {
			q.kept++
		}
		if ft.passedBy > 0 {
			q.behind++
		}
		q.maxPassedBy = max(q.maxPassedBy, ft.passedBy)
		waits = append(waits, ft.waited)
		q.fates = append(q.fates, ft)
	}
	for _, a := range recs {
		for _, b := range recs {
			// b was requeued strictly after a; a was told to wait after b
			// was back in.
			if a.requeued && b.requeued && a.failEnd < b.failStart && b.readmitAt >= 0 && a.requeueWait > b.readmitAt {
				q.orderInversions++
			}
		}
	}
	if len(waits) > 0 {
		slices.Sort(waits)
		q.waitP50, q.waitMax = waits[len(waits)/2], waits[len(waits)-1]
	}
	return q
}

// capOf reads the most sessions the room counted at once over the run.
func capOf(series []secondSample) (most int, read bool) {
	for _, s := range series {
		if s.roomRead {
			most, read = max(most, s.roomActive), true
		}
	}
	return most, read
}
