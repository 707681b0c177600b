package rehearsal

import (
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

// fifoPoints are the admitted fans of the FIFO check: the order key each
// pass carried against when the pass arrived. Kept in line, the points rise
// from left to right.
func fifoPoints(recs []fifoRecord) []point {
	var out []point
	for _, r := range recs {
		if r.admitted {
			out = append(out, point{r.passAt.Seconds(), float64(r.key)})
		}
	}
	slices.SortFunc(out, func(a, b point) int {
		switch {
		case a.x < b.x:
			return -1
		case a.x > b.x:
			return 1
		}
		return 0
	})
	return out
}
