package pgstore_test

import (
	"context"
	"testing"
	"time"

	"github.com/foyer-dev/foyer/booking/pgstore"
	"github.com/foyer-dev/foyer/booking/pgstore/pgtest"
	"github.com/foyer-dev/foyer/internal/servertiming"
)

// TestServerTimingCountsAPreparedStatementOnce: a statement's first use on
// a connection is prepared from within the query that uses it; the request's
// figures count two round trips and the prepare's time once, so the database
// time never exceeds the time the call took (it did, seen in a CI run of
// the booking service's Server-Timing test).
func TestServerTimingCountsAPreparedStatementOnce(t *testing.T) {
	s, err := pgstore.Open(context.Background(), pgtest.NewDatabase(t), pgstore.Options{MaxConns: 1})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(s.Close)
	for i, sql := range []string{
		"SELECT $1::text || pg_sleep(0.02)::text", // new: prepared, then run
		"SELECT $1::text || pg_sleep(0.02)::text", // prepared already: run
	} {
		ctx, timing := servertiming.Start(context.Background())
		began := time.Now()
		var out string
		if err := s.Pool().QueryRow(ctx, sql, "x").Scan(&out); err != nil {
			t.Fatal(err)
		}
		took := time.Since(began)
		f := timing.Figures(time.Now())
		if want := 2 - i; f.RoundTrips != want {
			t.Errorf("use %d: %d round trips, want %d", i+1, f.RoundTrips, want)
		}
		if f.DB < 20*time.Millisecond || f.DB > took {
			t.Errorf("use %d: database time %v for a call of %v with a 20 ms sleep in it", i+1, f.DB, took)
		}
	}
}
