package rehearsal

import (
	"testing"
	"time"
)

const us = time.Microsecond

// recorded is a worker as it stood at the end of a run: its requests (kind,
// latency and lag in µs), answers by class and kind, failures, and lags.
func recorded(reqs []reqSample, classes map[reqKind][6]int, failed map[reqKind]int, lags ...uint32) *worker {
	w := &worker{reqs: reqs}
	for k, c := range classes {
		w.byClass[k] = c
	}
	for k, n := range failed {
		w.failed[k] = n
	}
	for _, l := range lags {
		w.lags = append(w.lags, lagSample{us: l})
	}
	return w
}

func TestLatencyLinesGroupByKind(t *testing.T) {
	workers := []*worker{
		recorded([]reqSample{
			{us: 1000, kind: kindJoin},
			{us: 3000, lag: 500, kind: kindJoin},
			{us: 200, kind: kindPoll},
			{us: 40_000, kind: kindHold},
		}, map[reqKind][6]int{kindJoin: {2: 2}, kindPoll: {2: 1}, kindHold: {2: 1}}, nil, 100, 900),
		recorded([]reqSample{
			{us: 2000, kind: kindJoin},
			{us: 60_000, lag: 10_000, kind: kindPay},
			{us: 5000, kind: kindSeats},
		}, map[reqKind][6]int{kindJoin: {2: 1}, kindPay: {3: 1}, kindSeats: {4: 1}}, map[reqKind]int{kindSeats: 2}, 300),
	}
	lines, lag, total := latencyLines(workers)
	want := []struct {
		name          string
		top           bool
		n             int
		p50, p99, due time.Duration
		answers       string
	}{
		{"join", true, 3, 2000 * us, 3000 * us, 3500 * us, "2xx 3"},
		{"poll", true, 1, 200 * us, 200 * us, 200 * us, "2xx 1"},
		// The shop group is every shopping request together, whichever
		// worker made it.
		{"shop", true, 3, 40_000 * us, 60_000 * us, 70_000 * us, "2xx 1, 3xx 1, 4xx 1, no answer 2"},
		{"  seats", false, 1, 5000 * us, 5000 * us, 5000 * us, "4xx 1, no answer 2"},
		{"  hold", false, 1, 40_000 * us, 40_000 * us, 40_000 * us, "2xx 1"},
		{"  checkout", false, 0, 0, 0, 0, ""},
		{"  pay", false, 1, 60_000 * us, 60_000 * us, 70_000 * us, "3xx 1"},
		{"  order", false, 0, 0, 0, 0, ""},
		{"all", false, 7, 3000 * us, 60_000 * us, 70_000 * us, "2xx 5, 3xx 1, 4xx 1, no answer 2"},
	}
	if len(lines) != len(want) {
		t.Fatalf("%d lines, want %d", len(lines), len(want))
	}
	for i, w := range want {
		l := lines[i]
		if l.name != w.name || l.top != w.top || l.sum.n != w.n || l.sum.p50 != w.p50 || l.sum.p99 != w.p99 || l.due.p99 != w.due || l.answers != w.answers {
			t.Errorf("line %d: %q top %v n %d p50 %v p99 %v due %v %q; want %q top %v n %d p50 %v p99 %v due %v %q",
				i, l.name, l.top, l.sum.n, l.sum.p50, l.sum.p99, l.due.p99, l.answers, w.name, w.top, w.n, w.p50, w.p99, w.due, w.answers)
		}
	}
	if total != 7 {
		t.Errorf("%d requests in all, want 7", total)
	}
	if lag.n != 3 || lag.p50 != 300*us || lag.max != 900*us {
		t.Errorf("schedule lag %+v, want 3 steps, p50 300µs, max 900µs", lag)
	}
}
