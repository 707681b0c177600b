package rehearsal

import (
	"bufio"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"strings"
)

// poolStats is what one of the booking service's connection pools counted
// over the run, from its /metrics: whether shoppers queued for a connection
// (the pool too small) or for the database itself (every connection busy in
// a query).
type poolStats struct {
	max, acquires, waited float64
	waitSeconds           float64
}

// bookingPools are the booking service's two pools: the fans' requests',
// and the one of work no fan waits on (workers, payment webhooks). A service
// from before the background pool reports its one pool unlabelled: it is
// read as the requests' pool, and background is nil.
type bookingPools struct {
	requests   poolStats
	background *poolStats
}

// bookingPool reads the pool figures of the booking service's /metrics.
// Only a service on PostgreSQL has them.
func (s *stack) bookingPool(client *http.Client) (bookingPools, error) {
	resp, err := client.Get(s.bookingURL + "/metrics")
	if err != nil {
		return bookingPools{}, err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return bookingPools{}, fmt.Errorf("metrics: %s", resp.Status)
	}
	return parsePoolStats(io.LimitReader(resp.Body, 4<<20))
}

// parsePoolStats picks the pools' series out of Prometheus' text format.
func parsePoolStats(r io.Reader) (bookingPools, error) {
	var p bookingPools
	var background poolStats
	found, foundBackground := false, false
	field := func(ps *poolStats, series string) *float64 {
		switch series {
		case "foyer_booking_db_pool_max_connections":
			return &ps.max
		case "foyer_booking_db_pool_acquires_total":
			return &ps.acquires
		case "foyer_booking_db_pool_empty_acquires_total":
			return &ps.waited
		case "foyer_booking_db_pool_acquire_wait_seconds_total":
			return &ps.waitSeconds
		}
		return nil
	}
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 64<<10), 1<<20)
	for sc.Scan() {
		name, value, ok := strings.Cut(sc.Text(), " ")
		if !ok || strings.HasPrefix(name, "#") {
			continue
		}
		series, labels, _ := strings.Cut(name, "{")
		var dst *float64
		switch labels {
		case "", `pool="requests"}`:
			dst = field(&p.requests, series)
			found = found || dst != nil
		case `pool="background"}`:
			dst = field(&background, series)
			foundBackground = foundBackground || dst != nil
		}
		if dst == nil {
			continue
		}
		v, err := strconv.ParseFloat(strings.TrimSpace(value), 64)
		if err != nil {
			return p, fmt.Errorf("metrics: %s: %w", name, err)
		}
		*dst = v
	}
	if err := sc.Err(); err != nil {
		return p, err
	}
	if !found {
		return p, fmt.Errorf("metrics: no connection pool figures")
	}
	if foundBackground {
		p.background = &background
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
