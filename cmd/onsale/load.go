package main

import (
	"context"
	"fmt"
	"io"
	"math"
	"net"
	"net/http"
	"sort"
	"sync"
	"sync/atomic"
	"time"
)

// loadResult is what one round of load measured.
type loadResult struct {
	requests int
	errors   int
	elapsed  time.Duration
	lat      []time.Duration // sampled latencies, sorted
}

func (r loadResult) rps() float64 { return float64(r.requests) / r.elapsed.Seconds() }

func (r loadResult) quantile(q float64) time.Duration {
	if len(r.lat) == 0 {
		return 0
	}
	i := int(math.Ceil(q*float64(len(r.lat)))) - 1
	return r.lat[max(0, min(i, len(r.lat)-1))]
}

// request builds the i-th request of a worker.
type request func(worker, i int) *http.Request

// runLoad sends requests from conns workers, each on its own keep-alive
// connection, for at most d and at most maxReq requests in all. Only loopback
// addresses are accepted.
func runLoad(conns int, d time.Duration, maxReq int, mk request, check func(*http.Response) error) (loadResult, error) {
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
					DialContext:         loopbackDialer,
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
	res := loadResult{requests: len(lats), errors: int(failed.Load()), elapsed: elapsed, lat: lats}
	if res.errors > 0 {
		return res, fmt.Errorf("%d of %d requests failed; first: %w", res.errors, res.errors+res.requests, first)
	}
	return res, nil
}

// loopbackDialer refuses anything but loopback: load never leaves this machine.
func loopbackDialer(ctx context.Context, network, addr string) (net.Conn, error) {
	host, _, err := net.SplitHostPort(addr)
	if err != nil {
		return nil, err
	}
	ip := net.ParseIP(host)
	if host != "localhost" && (ip == nil || !ip.IsLoopback()) {
		return nil, fmt.Errorf("refusing to send load to %s: loopback only", addr)
	}
	var d net.Dialer
	return d.DialContext(ctx, network, addr)
}
