package main

import (
	"fmt"
	"net/http"
	"testing"

	"github.com/foyer-dev/foyer/booking/pgstore/pgtest"
	"github.com/foyer-dev/foyer/internal/redistest"
	"github.com/foyer-dev/foyer/internal/servertiming"
)

// TestServerTimingOnPostgreSQL checks that the service's answers say where
// their time went: a hold on PostgreSQL counts its round trips and its wait
// for a connection, and an answer that never reaches the database (a
// refused pass) counts none.
func TestServerTimingOnPostgreSQL(t *testing.T) {
	redisSrv := redistest.StartServer(t, nil)
	p := startBooking(t, pgtest.NewDatabase(t), "redis://"+redisSrv.Addr)
	eventID := p.createEvent(2, 5)

	timing := func(r reply) servertiming.Figures {
		t.Helper()
		if r.err != nil {
			t.Fatal(r.err)
		}
		f, ok := servertiming.Parse(r.header.Get(servertiming.HeaderName))
		if !ok {
			t.Fatalf("%d answer without Server-Timing: %q", r.status, r.header)
		}
		if f.DB+f.PoolWait > f.Total {
			t.Errorf("database %v and pool %v add up to more than the service's %v", f.DB, f.PoolWait, f.Total)
		}
		return f
	}

	hold := p.request("POST", fmt.Sprintf("/api/events/%d/holds", eventID), "fan-1", map[string]any{"section": "A", "quantity": 2})
	if hold.status != http.StatusCreated {
		t.Fatalf("hold: %d %s", hold.status, hold.body)
	}
	if f := timing(hold); f.RoundTrips < 1 || f.DB <= 0 {
		t.Errorf("a hold on PostgreSQL: %+v, want its round trips counted", f)
	}

	refused := p.request("GET", fmt.Sprintf("/api/events/%d/seats", eventID), "", nil)
	if refused.status != http.StatusUnauthorized {
		t.Fatalf("no pass: %d %s", refused.status, refused.body)
	}
	if f := timing(refused); f.RoundTrips != 0 || f.DB != 0 || f.PoolWait != 0 {
		t.Errorf("an answer that never reached the database: %+v", f)
	}
}
