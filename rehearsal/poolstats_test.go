package rehearsal

import (
	"strings"
	"testing"
)

func TestParsePoolStats(t *testing.T) {
	text := `# HELP foyer_booking_db_pool_acquires_total Connections taken from the pool.
# TYPE foyer_booking_db_pool_acquires_total counter
foyer_booking_db_pool_acquires_total 2000
foyer_booking_db_pool_connections{state="idle"} 3
foyer_booking_db_pool_empty_acquires_total 500
foyer_booking_db_pool_acquire_wait_seconds_total 2.5
foyer_booking_db_pool_max_connections 8
go_goroutines 12
`
	p, err := parsePoolStats(strings.NewReader(text))
	if err != nil {
		t.Fatal(err)
	}
	if p.max != 8 || p.acquires != 2000 || p.waited != 500 || p.waitSeconds != 2.5 {
		t.Fatalf("parsed %+v", p)
	}
	want := "8 connections at most; 2000 acquires, 500 of them waited (25.0%), 5.0 ms each on average, 2.5 s in all"
	if got := p.String(); got != want {
		t.Errorf("String() = %q, want %q", got, want)
	}
	// A service on the memory store has no pool: that is said, not zeros.
	if _, err := parsePoolStats(strings.NewReader("go_goroutines 12\n")); err == nil {
		t.Error("no pool series: want an error")
	}
	if _, err := parsePoolStats(strings.NewReader("foyer_booking_db_pool_max_connections x\n")); err == nil {
		t.Error("a value that is no number: want an error")
	}
}
