package rehearsal

import (
	"strings"
	"testing"
)

func TestParsePoolStats(t *testing.T) {
	text := `# HELP foyer_booking_db_pool_acquires_total Connections taken from the pool.
# TYPE foyer_booking_db_pool_acquires_total counter
foyer_booking_db_pool_acquires_total{pool="background"} 300
foyer_booking_db_pool_acquires_total{pool="requests"} 2000
foyer_booking_db_pool_connections{pool="requests",state="idle"} 3
foyer_booking_db_pool_empty_acquires_total{pool="background"} 30
foyer_booking_db_pool_empty_acquires_total{pool="requests"} 500
foyer_booking_db_pool_acquire_wait_seconds_total{pool="background"} 0.3
foyer_booking_db_pool_acquire_wait_seconds_total{pool="requests"} 2.5
foyer_booking_db_pool_max_connections{pool="background"} 2
foyer_booking_db_pool_max_connections{pool="requests"} 8
go_goroutines 12
`
	p, err := parsePoolStats(strings.NewReader(text))
	if err != nil {
		t.Fatal(err)
	}
	if r := p.requests; r.max != 8 || r.acquires != 2000 || r.waited != 500 || r.waitSeconds != 2.5 {
		t.Fatalf("requests parsed %+v", r)
	}
	if b := p.background; b == nil || b.max != 2 || b.acquires != 300 || b.waited != 30 || b.waitSeconds != 0.3 {
		t.Fatalf("background parsed %+v", b)
	}
	want := "8 connections at most; 2000 acquires, 500 of them waited (25.0%), 5.0 ms each on average, 2.5 s in all"
	if got := p.requests.String(); got != want {
		t.Errorf("String() = %q, want %q", got, want)
	}
	// A service from before the background pool: its one pool, unlabelled,
	// is the requests' pool.
	old := `foyer_booking_db_pool_acquires_total 2000
foyer_booking_db_pool_connections{state="idle"} 3
foyer_booking_db_pool_max_connections 8
`
	p, err = parsePoolStats(strings.NewReader(old))
	if err != nil {
		t.Fatal(err)
	}
	if p.requests.max != 8 || p.requests.acquires != 2000 || p.background != nil {
		t.Fatalf("unlabelled series parsed %+v, background %v", p.requests, p.background)
	}
	// A service on the memory store has no pool: that is said, not zeros.
	if _, err := parsePoolStats(strings.NewReader("go_goroutines 12\n")); err == nil {
		t.Error("no pool series: want an error")
	}
	if _, err := parsePoolStats(strings.NewReader(`foyer_booking_db_pool_max_connections{pool="requests"} x` + "\n")); err == nil {
		t.Error("a value that is no number: want an error")
	}
}
