package gateway

import (
	"encoding/json"
	"fmt"
	"math"
	"net/http"
	"sort"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/foyer-dev/foyer/waitingroom"
)

// The flood of a scalper: one address, no cookies, as many joins as it can
// send. Bounded in count and in time (under the race detector, on a shared
// 2-core machine, the time bound comes first: about 800 joins a second;
// without it the 200,000 took 41 s on a busy one); loopback only.
const (
	fansFloodJoins   = 200_000
	fansFloodShort   = 20_000
	fansFloodMaxTime = 45 * time.Second
	fansFloodConns   = 16
	fansAhead        = 40 // real fans in line before the flood
	fansBurst        = 20 // join_limit 20/m: a burst of 20
	fansRatePerMin   = 60
)

// TestCaddyJoinFloodCostsFansNothing measures what one abusive client's
// 200,000 cookieless joins cost the real fans behind them, with join_limit
// on. Two rooms run side by side in one real Caddy, alike but for the flood,
// ticked together on a clock that stands still while the flood runs: a
// control, and the flooded room. Forty fans at addresses of their own wait
// in each; one address then sends the flood at the flooded room; a fan who
// comes after it is compared with the control's. Fans ahead of the flood
// must see the very same position and wait; the fan behind it at most the
// flooder's burst more (20 places, 20 s at 60 a minute): nothing beyond its
// limit. Without the limit every join of the flood would be a place ahead
// of that fan (TestCaddyJoinFlood shows it for 2,000).
func TestCaddyJoinFloodCostsFansNothing(t *testing.T) {
	clock := useTestClock(t)
	room := func(name string) string {
		return fmt.Sprintf(`
		handle /%[1]s/* {
			waiting_room {
				room %[1]s
				new_users_per_minute %[2]d
				total_active_users 100
				join_limit 20/m
				path_prefix /%[1]s/_waiting-room
				cookie_prefix %[1]s
			}
			respond "origin"
		}`, name, fansRatePerMin)
	}
	newCaddy(t, caddyConfig(t.TempDir(), "http://localhost:9080 {"+room("control")+room("flooded")+"\n}"))

	type fanAt struct {
		control, flooded *fan
	}
	join := func(ip string) fanAt {
		var f fanAt
		for _, r := range []struct {
			room string
			fan  **fan
		}{{"control", &f.control}, {"flooded", &f.flooded}} {
			*r.fan = newFan(t)
			(*r.fan).client.Transport = newPeer(t, ip).client.Transport
			if resp, body := (*r.fan).get(base+"/"+r.room+"/events/42", "Accept", "application/json"); resp.StatusCode != http.StatusOK {
				t.Fatalf("fan at %s joining %s: %d %s", ip, r.room, resp.StatusCode, body)
			}
		}
		return f
	}
	ahead := make([]fanAt, fansAhead)
	for i := range ahead {
		ahead[i] = join(fmt.Sprintf("127.0.2.%d", i+1))
		if i%10 == 9 {
			clock.step(t, 1) // the line moves as fans arrive
		}
	}
	// A dozen seconds more: the line's pace is measured, so waits are
	// estimated (docs/endpoints.md: none before ten measured seconds).
	clock.step(t, 12)
	before := make([]waitingroom.Status, fansAhead)
	for i, f := range ahead {
		before[i] = f.flooded.status(base + "/flooded")
	}

	n := fansFloodJoins
	if testing.Short() {
		n = fansFloodShort
	}
	res := floodJoins(t, base+"/flooded/events/42", "127.0.0.1", n, fansFloodMaxTime)
	t.Logf("flood: %d cookieless joins from one address in %v (%.0f/s): %d places, %d refused (429), %d other; refusal latency p50 %v, p99 %v",
		res.sent, res.took.Round(time.Millisecond), float64(res.sent)/res.took.Seconds(), res.places, res.refused, res.other,
		res.p(0.5), res.p(0.99))
	if res.places != fansBurst || res.refused != res.sent-fansBurst || res.other != 0 {
		t.Errorf("the flooder got %d places, %d refusals and %d other answers of %d; want its burst of %d and refusals",
			res.places, res.refused, res.other, res.sent, fansBurst)
	}

	clock.step(t, 1)
	late := join("127.0.3.1")
	ctl, fld := late.control.status(base+"/control"), late.flooded.status(base+"/flooded")
	if ctl.ETASeconds == nil || fld.ETASeconds == nil {
		t.Fatalf("the fan after the flood has no estimate: control %v, flooded %v", deref(ctl.ETASeconds), deref(fld.ETASeconds))
	}
	t.Logf("the fan after the flood: control position %d, eta %ds; flooded position %d, eta %ds",
		*ctl.Position, *ctl.ETASeconds, *fld.Position, *fld.ETASeconds)
	if *fld.Position < *ctl.Position || *fld.Position > *ctl.Position+fansBurst {
		t.Errorf("the fan behind the flood is at %d, the control's at %d: want at most the flooder's burst (%d) more",
			*fld.Position, *ctl.Position, fansBurst)
	}
	maxWait := int64(math.Ceil(fansBurst/(fansRatePerMin/60.0))) + 1 // and a second of rounding
	if *fld.ETASeconds < *ctl.ETASeconds || *fld.ETASeconds > *ctl.ETASeconds+maxWait {
		t.Errorf("the fan behind the flood waits %ds, the control's %ds: want at most %ds more", *fld.ETASeconds, *ctl.ETASeconds, maxWait)
	}
	for i, f := range ahead {
		st, ct := f.flooded.status(base+"/flooded"), f.control.status(base+"/control")
		if st.State != ct.State || !samePtr(st.Position, ct.Position) || !samePtr(st.ETASeconds, ct.ETASeconds) {
			t.Errorf("fan %d ahead of the flood: %s %v %v in the flooded room, %s %v %v in the control",
				i, st.State, deref(st.Position), deref(st.ETASeconds), ct.State, deref(ct.Position), deref(ct.ETASeconds))
		}
		if st.Position != nil && before[i].Position != nil && *st.Position > *before[i].Position {
			t.Errorf("fan %d ahead of the flood went back from %d to %d", i, *before[i].Position, *st.Position)
		}
	}
}

func samePtr[T comparable](a, b *T) bool { return (a == nil) == (b == nil) && (a == nil || *a == *b) }

func deref[T any](p *T) any {
	if p == nil {
		return nil
	}
	return *p
}

// joinFloodResult is what a flood of cookieless joins got.
type joinFloodResult struct {
	sent, places, refused, other int
	took                         time.Duration
	lat                          []time.Duration // of refusals, sorted
}

func (r joinFloodResult) p(q float64) time.Duration {
	if len(r.lat) == 0 {
		return 0
	}
	return r.lat[min(len(r.lat)-1, int(q*float64(len(r.lat))))]
}

// floodJoins sends n cookieless JSON joins to url from the loopback address
// ip over fansFloodConns keep-alive connections, stopping at maxTime.
func floodJoins(t *testing.T, url, ip string, n int, maxTime time.Duration) joinFloodResult {
	t.Helper()
	p := newPeer(t, ip)
	p.client.Transport.(*http.Transport).MaxIdleConnsPerHost = fansFloodConns
	var (
		next    atomic.Int64
		mu      sync.Mutex
		wg      sync.WaitGroup
		res     joinFloodResult
		failure atomic.Value
	)
	deadline := time.Now().Add(maxTime)
	start := time.Now()
	for range fansFloodConns {
		wg.Add(1)
		go func() {
			defer wg.Done()
			var places, refused, other int
			lat := make([]time.Duration, 0, n/fansFloodConns+1)
			for next.Add(1) <= int64(n) && time.Now().Before(deadline) {
				req, _ := http.NewRequest(http.MethodGet, url, nil)
				req.Header.Set("Accept", "application/json")
				t0 := time.Now()
				resp, err := p.client.Do(req)
				if err != nil {
					failure.Store(err)
					return
				}
				var body struct {
					Error string `json:"error"`
				}
				_ = json.NewDecoder(resp.Body).Decode(&body)
				resp.Body.Close()
				switch {
				case resp.StatusCode == http.StatusTooManyRequests && body.Error == "join_limited" && resp.Header.Get("Retry-After") != "":
					refused++
					lat = append(lat, time.Since(t0))
				case resp.StatusCode == http.StatusOK && len(resp.Cookies()) > 0:
					places++
				default:
					other++
				}
			}
			mu.Lock()
			res.places += places
			res.refused += refused
			res.other += other
			res.lat = append(res.lat, lat...)
			mu.Unlock()
		}()
	}
	wg.Wait()
	res.took = time.Since(start)
	if err, ok := failure.Load().(error); ok {
		t.Fatalf("flood: %v", err)
	}
	res.sent = res.places + res.refused + res.other
	sort.Slice(res.lat, func(i, j int) bool { return res.lat[i] < res.lat[j] })
	return res
}
