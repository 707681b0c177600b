package integration

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"runtime"
	"slices"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/foyer-dev/foyer/gateway"
	"github.com/foyer-dev/foyer/waitingroom"
)

// The join flood: how many newcomers a second, for how long, and the bounds
// the node must keep meanwhile.
const (
	floodRate = 5000
	floodFor  = 5 * time.Second
	// The node holds at most a batch in flight and a full join queue, and
	// the newcomers it is answering at once: a few hundred on a shared
	// machine under the race detector. Without the bounds it held 23,000.
	floodMaxHeld       = waitingroom.MaxJoinQueue + 256 + 1024
	floodMaxGoroutines = floodMaxHeld + 1024
	floodMaxHeapGrowth = 64 << 20
	// Once the node knows the store is away, a newcomer's 503 must come at
	// once: well under the 2 s read timeout a call to the hung store waits.
	floodMaxLatencyAfter = 500 * time.Millisecond
)

// TestFaultJoinFloodRedisDown: Redis hangs (SIGSTOP: connections open,
// nothing answered, each call waits out its 2 s read timeout) under a node,
// and newcomers arrive at floodRate a second for floodFor, open loop, each
// request served on a goroutine of its own as net/http would, so that the
// process's goroutines are the requests the node holds. Every newcomer gets
// 503 with Retry-After and a JSON error, no ticket; the requests held at
// once, the goroutines and the heap stay bounded; once the node knows the
// store is away (a join batch failed, or its view went stale), answers come
// at once. When Redis answers again, waiting fans are admitted in order, and
// the origin never saw more sessions valid at once than the cap.
func TestFaultJoinFloodRedisDown(t *testing.T) {
	// Not parallel: it counts the process's goroutines and heap, which other
	// tests running at once would add to.
	clock := newTestClock()
	srv, dial := privateRedis(t)
	key := deploymentKey(t)
	ledger := newPassLedger(key, clock.Now)
	const capacity = 2
	cfg := gateway.Handler{Room: "flood", Settings: waitingroom.Settings{TotalActiveUsers: capacity, NewUsersPerMinute: 60, SessionDuration: time.Minute, AdmissionGrace: grace}}
	n := ledgerNode(t, clock.Now, cfg, redisNodeStore(t, dial, "foyer"), key, ledger)
	nodes := []*node{n}
	tr := sharedTransport(t)
	first := walkIn(t, n, tr)
	waiting := joinLine(t, nodes, tr, "fan", 3, 0)

	srv.Pause(t)
	ctx, cancel := context.WithCancel(context.Background())
	ticks := startTicking(ctx, nodes)
	real := followRealTime(clock)
	origin := ledger.origin()
	res := flood(t, func(w http.ResponseWriter, r *http.Request) {
		if err := n.h.ServeHTTP(w, r, origin); err != nil {
			w.WriteHeader(http.StatusInternalServerError)
		}
	}, real.catchUp)
	cancel()
	ticks.wg.Wait()

	t.Logf("flood: %d newcomers in %v (%.0f/s, %d arrivals skipped by a pacer behind time); answers %v",
		res.sent, res.took.Round(time.Millisecond), float64(res.sent)/res.took.Seconds(), res.skipped, res.codes)
	t.Logf("latency p50 %v, p99 %v, max %v; once the node knew: p50 %v, p99 %v (%d answers)",
		res.p(0.5, false), res.p(0.99, false), res.p(1, false), res.p(0.5, true), res.p(0.99, true), len(res.after))
	t.Logf("held at most %d requests at once; goroutines %d before, at most %d during; heap in use %.1f MiB before, at most %.1f MiB during",
		res.held, res.g0, res.goroutines, float64(res.heap0)/(1<<20), float64(res.heap)/(1<<20))
	if res.codes[http.StatusServiceUnavailable] != res.sent || res.bad > 0 {
		t.Errorf("answers %v, %d malformed: want every newcomer to get 503 with Retry-After and a JSON error", res.codes, res.bad)
	}
	if res.tickets > 0 {
		t.Errorf("%d newcomers were given a ticket while the store hung", res.tickets)
	}
	if res.held > floodMaxHeld {
		t.Errorf("the node held %d requests at once, want at most %d", res.held, floodMaxHeld)
	}
	if res.goroutines > res.g0+floodMaxGoroutines {
		t.Errorf("%d goroutines during the flood (%d before), want at most %d more", res.goroutines, res.g0, floodMaxGoroutines)
	}
	if growth := int64(res.heap) - int64(res.heap0); growth > floodMaxHeapGrowth {
		t.Errorf("heap in use grew by %d MiB, want at most %d MiB", growth>>20, floodMaxHeapGrowth>>20)
	}
	if len(res.after) == 0 {
		t.Fatal("the node never knew the store was away")
	}
	if p := res.p(0.99, true); p > floodMaxLatencyAfter {
		t.Errorf("p99 of the answers once the node knew the store was away: %v, want under %v", p, floodMaxLatencyAfter)
	}

	srv.Resume(t)
	clock.Advance(time.Second)
	recoverNode(t, n)
	if !first.visit(t, n, "/done") {
		t.Fatal("the first fan's checkout did not reach the origin")
	}
	late := joinLine(t, nodes, tr, "late", 2, 0)
	admitAll(t, clock, nodes, append(waiting, late...), grace, 60, nil)
	ledger.check(t, capacity)
}

// floodResult is what the flood measured.
type floodResult struct {
	sent, bad, tickets int
	skipped            int // arrivals the pacer missed, falling behind
	took               time.Duration
	codes              map[int]int
	all, after         []time.Duration // latencies; after: of those sent once the node knew
	held               int64           // requests in the node at once, at most
	g0, goroutines     int             // goroutines before, and at most during
	heap0, heap        uint64          // heap in use before, and at most during
}

// p is the q-quantile of the latencies (of those sent once the node knew,
// when after is set).
func (r *floodResult) p(q float64, after bool) time.Duration {
	l := r.all
	if after {
		l = r.after
	}
	if len(l) == 0 {
		return 0
	}
	return l[min(len(l)-1, int(q*float64(len(l))))]
}

// flood sends newcomers to serve at floodRate for floodFor, open loop, each
// on a goroutine of its own, calling each every millisecond or so, and
// samples the process's goroutines and heap meanwhile. Latencies of the
// newcomers that arrive after the first answer was given are also kept apart:
// by then the node has seen a join fail, and knows its store is away.
func flood(t *testing.T, serve http.HandlerFunc, each func()) *floodResult {
	t.Helper()
	res := &floodResult{codes: make(map[int]int)}
	var (
		mu       sync.Mutex
		wg       sync.WaitGroup
		held     atomic.Int64
		answered atomic.Bool
	)
	one := func(known bool) {
		defer wg.Done()
		h := held.Add(1)
		defer held.Add(-1)
		mu.Lock()
		res.held = max(res.held, h)
		mu.Unlock()
		req := httptest.NewRequest(http.MethodGet, "/events/42", nil)
		req.Header.Set("Accept", "application/json")
		rec := httptest.NewRecorder()
		start := time.Now()
		serve(rec, req)
		took := time.Since(start)
		answered.Store(true)
		resp := rec.Result()
		ok := resp.StatusCode == http.StatusServiceUnavailable && resp.Header.Get("Retry-After") != "" && jsonError(rec.Body.Bytes(), "unavailable")
		ticket := false
		for _, c := range resp.Cookies() {
			ticket = ticket || c.Name == "foyer_ticket"
		}
		mu.Lock()
		defer mu.Unlock()
		res.codes[resp.StatusCode]++
		if !ok {
			res.bad++
		}
		if ticket {
			res.tickets++
		}
		res.all = append(res.all, took)
		if known {
			res.after = append(res.after, took)
		}
	}
	var ms runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&ms)
	res.heap0, res.g0 = ms.HeapInuse, runtime.NumGoroutine()
	start := time.Now()
	stop := make(chan struct{})
	var aside sync.WaitGroup
	// The sampler and the clock run beside the pacer, so that neither delays
	// an arrival.
	aside.Go(func() {
		tick := time.NewTicker(50 * time.Millisecond)
		defer tick.Stop()
		var ms runtime.MemStats
		for {
			select {
			case <-stop:
				return
			case <-tick.C:
			}
			g := runtime.NumGoroutine()
			runtime.ReadMemStats(&ms)
			mu.Lock()
			res.goroutines, res.heap = max(res.goroutines, g), max(res.heap, ms.HeapInuse)
			mu.Unlock()
		}
	})
	aside.Go(func() {
		tick := time.NewTicker(10 * time.Millisecond)
		defer tick.Stop()
		for {
			select {
			case <-stop:
				return
			case <-tick.C:
				each()
			}
		}
	})
	pace := time.NewTicker(time.Millisecond)
	defer pace.Stop()
	// A pacer that fell behind (the machine is shared) skips the arrivals it
	// missed rather than send them in one burst: a burst measures the
	// scheduler, not the node.
	const most = floodRate / 100
	for issued := 0; ; {
		<-pace.C
		elapsed := time.Since(start)
		if elapsed >= floodFor {
			break
		}
		known := answered.Load()
		due := int(elapsed.Seconds() * floodRate)
		if due-issued > most {
			res.skipped += due - issued - most
			issued = due - most
		}
		for ; issued < due; issued++ {
			res.sent++
			wg.Add(1)
			go one(known)
		}
	}
	close(stop)
	aside.Wait()
	res.took = time.Since(start)
	wg.Wait()
	slices.Sort(res.all)
	slices.Sort(res.after)
	return res
}

// jsonError reports whether body is the JSON error code want.
func jsonError(body []byte, want string) bool {
	var e errorBody
	return json.Unmarshal(body, &e) == nil && e.Error == want
}
