package loadgen

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"sort"
	"sync"
	"sync/atomic"
	"time"
)

// Result is what one round of load measured.
type Result struct {
	Requests int
	Errors   int
	Elapsed  time.Duration
	Lat      []time.Duration // every answered request's latency, sorted
}

// RPS is the answered requests per second.
func (r Result) RPS() float64 { return float64(r.Requests) / r.Elapsed.Seconds() }

// Quantile is the nearest-rank quantile q of the latencies.
func (r Result) Quantile(q float64) time.Duration { return NearestRank(r.Lat, q) }

// Request builds the i-th request of a worker.
type Request func(worker, i int) *http.Request

// Run sends requests from conns workers, each on its own keep-alive
// connection, for at most d and at most maxReq requests in all. Only loopback
// addresses are accepted.
func Run(conns int, d time.Duration, maxReq int, mk Request, check func(*http.Response) error) (Result, error) {
	ctx, cancel := context.WithTimeout(context.Background(), d)
	defer cancel()
	var (
		sent   atomic.Int64
		failed atomic.Int64
		mu     sync.Mutex
		lats   []time.Duration
		wg     sync.WaitGroup
		first  error
		once   sync.Once
	)
	start := time.Now()
	for w := range conns {
		wg.Add(1)
		go func() {
			defer wg.Done()
			client := &http.Client{
				Transport: &http.Transport{
					DialContext:         LoopbackDialer,
					MaxIdleConnsPerHost: 1,
					MaxConnsPerHost:     1,
					DisableCompression:  true,
				},
				CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse },
			}
			defer client.CloseIdleConnections()
			local := make([]time.Duration, 0, 4096)
			for i := 0; ctx.Err() == nil; i++ {
				if sent.Add(1) > int64(maxReq) {
					break
				}
				req := mk(w, i).WithContext(ctx)
				t0 := time.Now()
				resp, err := client.Do(req)
				if err == nil {
					_, _ = io.Copy(io.Discard, resp.Body)
					resp.Body.Close()
					if check != nil {
						err = check(resp)
					}
				}
				el := time.Since(t0)
				if err != nil {
					if ctx.Err() != nil {
						break
					}
					failed.Add(1)
					once.Do(func() { first = err })
					continue
				}
				local = append(local, el)
			}
			mu.Lock()
			lats = append(lats, local...)
			mu.Unlock()
		}()
	}
	wg.Wait()
	elapsed := time.Since(start)
	sort.Slice(lats, func(i, j int) bool { return lats[i] < lats[j] })
	res := Result{Requests: len(lats), Errors: int(failed.Load()), Elapsed: elapsed, Lat: lats}
	if res.Errors > 0 {
		return res, fmt.Errorf("%d of %d requests failed; first: %w", res.Errors, res.Errors+res.Requests, first)
	}
	return res, nil
}
