package rehearsal

import (
	"cmp"
	"slices"
	"time"
)

// The report's series, each read from what the verdict reads: the fans'
// records, the workers' request samples, the delivered orders, and the
// second-by-second samples of the sale.

// point is one (x, y) of a series, x in seconds from the start.
type point struct{ x, y float64 }

// admittedPerSecond counts the passes fans received in each second of the
// run: when each one's answer carrying the pass arrived.
func admittedPerSecond(fans []fan, elapsed time.Duration) []point {
	n := int(elapsed/time.Second) + 1
	counts := make([]int, n)
	for i := range fans {
		if at := fans[i].passAt; at >= 0 {
			counts[min(n-1, int(at/time.Second))]++
		}
	}
	out := make([]point, n)
	for i, c := range counts {
		out[i] = point{float64(i), float64(c)}
	}
	return out
}

// lineSeries are the fans in line and the sessions open, second by second:
// the fans' own count of who waits, and the room's count of active sessions
// (the fans shopping when the room's admin API did not answer).
func lineSeries(series []secondSample) (waiting, active []point) {
	for _, s := range series {
		x := s.at.Seconds()
		waiting = append(waiting, point{x, float64(s.waiting)})
		a := float64(s.shopping)
		if s.roomRead {
			a = float64(s.roomActive)
		}
		active = append(active, point{x, a})
	}
	return waiting, active
}

// soldCurve is the places sold over time, by the time each delivered order
// was paid: the sell-out curve.
func soldCurve(orders map[string]orderSeen, t0 time.Time) []point {
	type sale struct {
		at     time.Duration
		places int
	}
	var sales []sale
	for _, o := range orders {
		if !o.paidAt.IsZero() {
			sales = append(sales, sale{o.paidAt.Sub(t0), len(o.seats) + len(o.zones)})
		}
	}
	slices.SortFunc(sales, func(a, b sale) int { return cmpDur(a.at, b.at) })
	out := []point{{0, 0}}
	sum := 0
	for _, s := range sales {
		sum += s.places
		out = append(out, point{s.at.Seconds(), float64(sum)})
	}
	return out
}

// latencyWindow is the latency of each group over one window of the run.
type latencyWindow struct {
	from     time.Duration
	p50, p99 [3]time.Duration // join, poll, shop; -1 with no request
}

// latencyOverTime cuts the run into windows of about a hundredth of it (a
// second at least) and reads each group's p50 and p99 in each.
func latencyOverTime(workers []*worker, elapsed time.Duration) ([]latencyWindow, time.Duration) {
	window := max(time.Second, (elapsed / 100).Round(time.Second))
	wms := uint32(window.Milliseconds())
	n := int(elapsed/window) + 1
	by := make([][3]samples, n)
	for _, w := range workers {
		for _, s := range w.reqs {
			i := min(n-1, int(s.at/wms))
			by[i][s.kind.groupIndex()] = append(by[i][s.kind.groupIndex()], s.us)
		}
	}
	out := make([]latencyWindow, n)
	for i := range out {
		out[i].from = time.Duration(i) * window
		for g := range 3 {
			out[i].p50[g], out[i].p99[g] = -1, -1
			if len(by[i][g]) > 0 {
				sum := summarize(by[i][g])
				out[i].p50[g], out[i].p99[g] = sum.p50, sum.p99
			}
		}
	}
	return out, window
}

// turnOffsets says, for each admitted fan in the order of their place in
// line (the rank of their order key among the admitted), how far their pass
// came from their turn: their rank in the order the passes arrived, less
// their place. 0 is exactly in turn; a fan whose next poll came late is
// behind it (above 0), one who polled just after the room let them in is
// ahead of those who polled later (below 0). Fans tied on the pass's
// arrival keep the order of their keys.
func turnOffsets(recs []fifoRecord) []int {
	var adm []fifoRecord
	for _, r := range recs {
		if r.admitted {
			adm = append(adm, r)
		}
	}
	byKey := func(a, b fifoRecord) int { return cmp.Compare(a.key, b.key) }
	slices.SortStableFunc(adm, byKey)
	byPass := make([]int, len(adm)) // places, in the order the passes arrived
	for i := range byPass {
		byPass[i] = i
	}
	slices.SortStableFunc(byPass, func(a, b int) int { return cmp.Compare(adm[a].passAt, adm[b].passAt) })
	out := make([]int, len(adm))
	for rank, place := range byPass {
		out[place] = rank - place
	}
	return out
}

// turnGroup is fans who are neighbours in line, places [from, to), and how
// far their passes came from their turn: the median, and the 5th and 95th
// percentiles.
type turnGroup struct {
	from, to       int
	median, lo, hi float64
}

// maxTurnGroups bounds the groups the order chart draws: enough for its
// shape, and few enough that each group holds enough fans for its median
// and band to mean something rather than trace single fans' polls.
const maxTurnGroups = 50

// turnGroups cuts the offsets, in order of place, into at most
// maxTurnGroups groups of neighbours of (nearly) equal size, and sums each up.
func turnGroups(offsets []int) []turnGroup {
	n := len(offsets)
	k := min(n, maxTurnGroups)
	out := make([]turnGroup, 0, k)
	for g := range k {
		from, to := g*n/k, (g+1)*n/k
		sorted := slices.Clone(offsets[from:to])
		slices.Sort(sorted)
		at := func(q float64) float64 { return float64(sorted[int(q*float64(len(sorted)-1)+0.5)]) }
		out = append(out, turnGroup{from: from, to: to, median: at(0.5), lo: at(0.05), hi: at(0.95)})
	}
	return out
}
