package gateway

import (
	"io"
	"net/http"
	"testing"
	"time"

	"github.com/caddyserver/caddy/v2"
	"github.com/caddyserver/caddy/v2/caddyconfig"
)

// loadCaddyfile runs the in-process Caddy with a Caddyfile for a benchmark
// (caddytest's tester wants a *testing.T), and unloads it when it ends.
func loadCaddyfile(b *testing.B, cfg string) {
	b.Helper()
	adapted, _, err := caddyconfig.GetAdapter("caddyfile").Adapt([]byte(cfg), nil)
	if err != nil {
		b.Fatal(err)
	}
	if err := caddy.Load(adapted, true); err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() {
		if err := unloadCaddy(); err != nil {
			b.Logf("unloading: %v", err)
		}
	})
}

// BenchmarkJoinRefusalVsRespond: what a newcomer over its join_limit costs
// a real Caddy with the module, against the same Caddy's respond answering
// a 429 of the same size, in alternating batches over one keep-alive
// connection each. x-respond is the refusals' throughput over respond's
// (target at least 0.9); `onsale bench refuse` measures the same with
// many connections against a separate process.
func BenchmarkJoinRefusalVsRespond(b *testing.B) {
	loadCaddyfile(b, caddyConfig(b.TempDir(), `
	http://localhost:9080 {
		handle /respond {
			header Content-Type application/json
			header Cache-Control no-store
			header Retry-After 3600
			respond `+"`"+`{"error":"join_limited","message":"Too many new places from your network; try again in 3600 seconds.","retry_after":3600}`+"`"+` 429
		}
		handle {
			waiting_room {
				room bench-refusal
				queue_all
				join_limit 1/h burst 1
			}
			respond "origin"
		}
	}`))
	client := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: 1}, Timeout: 5 * time.Second}
	get := func(url string) int {
		req, _ := http.NewRequest(http.MethodGet, url, nil)
		req.Header.Set("Accept", "application/json")
		resp, err := client.Do(req)
		if err != nil {
			b.Fatal(err)
		}
		_, _ = io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		return resp.StatusCode
	}
	if code := get(base + "/events/42"); code != http.StatusOK {
		b.Fatalf("the address's one place: %d", code)
	}
	for _, u := range []string{base + "/respond", base + "/events/42"} {
		if code := get(u); code != http.StatusTooManyRequests {
			b.Fatalf("%s: %d, want 429", u, code)
		}
	}
	const batch = 64
	var respond, refused time.Duration
	b.ResetTimer()
	for b.Loop() {
		start := time.Now()
		for range batch {
			get(base + "/respond")
		}
		mid := time.Now()
		for range batch {
			get(base + "/events/42")
		}
		respond += mid.Sub(start)
		refused += time.Since(mid)
	}
	b.ReportMetric(float64(refused)/float64(b.N*batch)/1e3, "µs/refusal")
	b.ReportMetric(float64(respond)/float64(b.N*batch)/1e3, "µs/respond")
	b.ReportMetric(float64(respond)/float64(refused), "x-respond")
}
