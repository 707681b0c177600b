package rehearsal

import (
	"testing"
	"time"
)

func TestQuantilesAreNearestRank(t *testing.T) {
	var s samples
	for i := 100; i >= 1; i-- { // out of order: summarize sorts
		s.add(time.Duration(i) * time.Microsecond)
	}
	got := summarize(s)
	if got.n != 100 || got.p50 != 50*time.Microsecond || got.p99 != 99*time.Microsecond || got.max != 100*time.Microsecond {
		t.Fatalf("1..100 µs: %+v, want p50 50µs, p99 99µs, max 100µs", got)
	}
	// With fewer than a hundred samples the p99 is the largest: nothing is
	// interpolated below it.
	few := samples{3000, 1000, 2000}
	if got := summarize(few); got.p99 != 3*time.Millisecond || got.p50 != 2*time.Millisecond {
		t.Fatalf("three samples: %+v", got)
	}
	if got := summarize(nil); got != (summary{}) {
		t.Fatalf("no samples: %+v", got)
	}
	var clamp samples
	clamp.add(-time.Second)
	clamp.add(100 * time.Hour)
	if clamp[0] != 0 || clamp[1] != ^uint32(0) {
		t.Fatalf("out-of-range latencies stored as %v", clamp)
	}
}

func TestTimelinePlacesTheTail(t *testing.T) {
	ms := func(n int) uint32 { return uint32(n) }
	reqs := []reqSample{
		{at: ms(500), us: 80_000, kind: kindJoin}, // a slow join in the first window
		{at: ms(900), us: 1_000, kind: kindPoll},
		{at: ms(1500), us: 2_000, kind: kindPoll}, // the second window: no join, no shop
		{at: ms(1600), us: 3_000, kind: kindHold},
	}
	lags := []lagSample{{at: 100, us: 5_000}, {at: 1_200, us: 7_000}}
	tl := timeline(reqs, lags, time.Second, 50*time.Millisecond)
	if len(tl) != 2 {
		t.Fatalf("%d windows, want 2", len(tl))
	}
	if tl[0].requests != 2 || tl[0].over != 1 || tl[0].p99[0] != 80*time.Millisecond || tl[0].p99[2] != -1 || tl[0].lagP99 != 5*time.Millisecond {
		t.Fatalf("first window %+v", tl[0])
	}
	if tl[1].from != time.Second || tl[1].requests != 2 || tl[1].over != 0 || tl[1].p99[0] != -1 || tl[1].p99[2] != 3*time.Millisecond || tl[1].lagP99 != 7*time.Millisecond {
		t.Fatalf("second window %+v", tl[1])
	}
	if timeline(nil, nil, time.Second, time.Second) != nil {
		t.Fatal("no requests: want no timeline")
	}
}

func TestTimelineBuckets(t *testing.T) {
	type win struct {
		requests, over int
		p99            [3]time.Duration
		lag            time.Duration
	}
	none := time.Duration(-1)
	cases := []struct {
		name   string
		reqs   []reqSample
		lags   []lagSample
		window time.Duration
		want   []win
	}{{
		name:   "a request answered on a window's edge belongs to the next",
		reqs:   []reqSample{{at: 999, us: 1000, kind: kindJoin}, {at: 1000, us: 2000, kind: kindJoin}},
		window: time.Second,
		want:   []win{{requests: 1, p99: [3]time.Duration{time.Millisecond, none, none}}, {requests: 1, p99: [3]time.Duration{2 * time.Millisecond, none, none}}},
	}, {
		name:   "a quiet window in between is kept, with no p99",
		reqs:   []reqSample{{at: 500, us: 1000, kind: kindPoll}, {at: 2500, us: 1000, kind: kindOrder}},
		window: time.Second,
		want: []win{
			{requests: 1, p99: [3]time.Duration{none, time.Millisecond, none}},
			{p99: [3]time.Duration{none, none, none}},
			{requests: 1, p99: [3]time.Duration{none, none, time.Millisecond}},
		},
	}, {
		name:   "at the target counts as over it",
		reqs:   []reqSample{{at: 10, us: 50_000, kind: kindHold}, {at: 20, us: 49_999, kind: kindHold}},
		window: time.Second,
		want:   []win{{requests: 2, over: 1, p99: [3]time.Duration{none, none, 50 * time.Millisecond}}},
	}, {
		name:   "lags after the last answer are left out",
		reqs:   []reqSample{{at: 100, us: 1000, kind: kindJoin}},
		lags:   []lagSample{{at: 200, us: 3000}, {at: 5000, us: 900_000}},
		window: time.Second,
		want:   []win{{requests: 1, p99: [3]time.Duration{time.Millisecond, none, none}, lag: 3 * time.Millisecond}},
	}, {
		name:   "ten-second windows",
		reqs:   []reqSample{{at: 9_999, us: 7000, kind: kindSeats}, {at: 10_000, us: 1000, kind: kindPoll}},
		window: 10 * time.Second,
		want:   []win{{requests: 1, p99: [3]time.Duration{none, none, 7 * time.Millisecond}}, {requests: 1, p99: [3]time.Duration{none, time.Millisecond, none}}},
	}, {
		name:   "no window length: no timeline",
		reqs:   []reqSample{{at: 1, us: 1, kind: kindJoin}},
		window: 0,
	}}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			tl := timeline(c.reqs, c.lags, c.window, 50*time.Millisecond)
			if len(tl) != len(c.want) {
				t.Fatalf("%d windows, want %d", len(tl), len(c.want))
			}
			for i, w := range c.want {
				got := tl[i]
				if got.from != time.Duration(i)*c.window || got.requests != w.requests || got.over != w.over || got.p99 != w.p99 || got.lagP99 != w.lag {
					t.Errorf("window %d: %+v, want from %v, %+v", i, got, time.Duration(i)*c.window, w)
				}
			}
		})
	}
}
