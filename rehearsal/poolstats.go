package rehearsal

import (
	"bufio"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"strings"
)

// poolStats is what the booking service's connection pool counted over the
// run, from its /metrics: whether shoppers queued for a connection (the pool
// too small) or for the database itself (every connection busy in a query).
type poolStats struct {
	max, acquires, waited float64
	waitSeconds           float64
}

// bookingPool reads the pool figures of the booking service's /metrics.
// Only a service on PostgreSQL has them.
func (s *stack) bookingPool(client *http.Client) (poolStats, error) {
	resp, err := client.Get(s.bookingURL + "/metrics")
	if err != nil {
		return poolStats{}, err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return poolStats{}, fmt.Errorf("metrics: %s", resp.Status)
	}
	return parsePoolStats(io.LimitReader(resp.Body, 4<<20))
}

// parsePoolStats picks the pool's series out of Prometheus' text format.
func parsePoolStats(r io.Reader) (poolStats, error) {
	var p poolStats
	found := false
	into := map[string]*float64{
		"foyer_booking_db_pool_max_connections":            &p.max,
		"foyer_booking_db_pool_acquires_total":             &p.acquires,
		"foyer_booking_db_pool_empty_acquires_total":       &p.waited,
		"foyer_booking_db_pool_acquire_wait_seconds_total": &p.waitSeconds,
	}
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 64<<10), 1<<20)
	for sc.Scan() {
		name, value, ok := strings.Cut(sc.Text(), " ")
		if !ok || strings.HasPrefix(name, "#") {
			continue
		}
		if dst, ok := into[name]; ok {
			v, err := strconv.ParseFloat(strings.TrimSpace(value), 64)
			if err != nil {
				return p, fmt.Errorf("metrics: %s: %w", name, err)
			}
			*dst = v
			found = true
		}
	}
	if err := sc.Err(); err != nil {
		return p, err
	}
	if !found {
		return p, fmt.Errorf("metrics: no connection pool figures")
	}
	return p, nil
}

// String says how often a shopper's request waited for a connection.
func (p poolStats) String() string {
	share, mean := 0.0, 0.0
	if p.acquires > 0 {
		share = 100 * p.waited / p.acquires
	}
	if p.waited > 0 {
		mean = 1000 * p.waitSeconds / p.waited
	}
	return fmt.Sprintf("%.0f connections at most; %.0f acquires, %.0f of them waited (%.1f%%), %.1f ms each on average, %.1f s in all",
		p.max, p.acquires, p.waited, share, mean, p.waitSeconds)
}
