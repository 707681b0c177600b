package pgstore_test

import (
	"context"
	"fmt"
	"sync/atomic"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/foyer-dev/foyer/booking"
	"github.com/foyer-dev/foyer/booking/pgstore"
	"github.com/foyer-dev/foyer/booking/pgstore/pgtest"
)

// roundTrips counts what a connection waits for the server on: every
// statement sent on its own (BEGIN and COMMIT included), every batch (its
// statements travel together), and every statement prepared.
type roundTrips struct{ n atomic.Int64 }

func (c *roundTrips) TraceQueryStart(ctx context.Context, _ *pgx.Conn, _ pgx.TraceQueryStartData) context.Context {
	c.n.Add(1)
	return ctx
}
func (c *roundTrips) TraceQueryEnd(context.Context, *pgx.Conn, pgx.TraceQueryEndData) {}
func (c *roundTrips) TraceBatchStart(ctx context.Context, _ *pgx.Conn, _ pgx.TraceBatchStartData) context.Context {
	c.n.Add(1)
	return ctx
}
func (c *roundTrips) TraceBatchQuery(context.Context, *pgx.Conn, pgx.TraceBatchQueryData) {}
func (c *roundTrips) TraceBatchEnd(context.Context, *pgx.Conn, pgx.TraceBatchEndData)     {}
func (c *roundTrips) TracePrepareStart(ctx context.Context, _ *pgx.Conn, _ pgx.TracePrepareStartData) context.Context {
	c.n.Add(1)
	return ctx
}
func (c *roundTrips) TracePrepareEnd(context.Context, *pgx.Conn, pgx.TracePrepareEndData) {}

// TestHoldRoundTrips counts the round trips of a hold of each kind once the
// connection's statements are prepared: listed seats, best available in a
// section, and a general-admission zone. Each must cost at most three.
func TestHoldRoundTrips(t *testing.T) {
	ctx := context.Background()
	rt := &roundTrips{}
	s, err := pgstore.Open(ctx, pgtest.NewDatabase(t), pgstore.Options{MaxConns: 1, Tracer: rt})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	now := time.Date(2026, 3, 1, 10, 0, 0, 0, time.UTC)
	e, err := s.CreateEvent(ctx, booking.EventSpec{
		Name: "Round trips", StartsAt: now.Add(24 * time.Hour), Currency: "EUR",
		Sections: []booking.SectionSpec{{ID: "A", Rows: 20, SeatsPerRow: 20, Price: 5000}},
		Zones:    []booking.ZoneSpec{{ID: "FLOOR", Capacity: 1000, Price: 3000}},
	}, now)
	if err != nil {
		t.Fatal(err)
	}
	kinds := []struct {
		name string
		req  func(i int) booking.HoldRequest
	}{
		{"listed seats", func(i int) booking.HoldRequest {
			return booking.HoldRequest{Seats: []string{fmt.Sprintf("A-%d-%d", i/10+1, i%10*2+1), fmt.Sprintf("A-%d-%d", i/10+1, i%10*2+2)}}
		}},
		{"best available", func(int) booking.HoldRequest { return booking.HoldRequest{Section: "A", Quantity: 2} }},
		{"zone", func(int) booking.HoldRequest { return booking.HoldRequest{Zone: "FLOOR", Quantity: 2} }},
	}
	for _, k := range kinds {
		var counts []int64
		for i := range 6 {
			req := k.req(i)
			req.EventID, req.CustomerID, req.TTL, req.MaxPerCustomer = e.ID, fmt.Sprintf("%s-%d", k.name, i), 5*time.Minute, 8
			before := rt.n.Load()
			if _, err := s.Hold(ctx, req, now); err != nil {
				t.Fatalf("%s hold %d: %v", k.name, i, err)
			}
			counts = append(counts, rt.n.Load()-before)
		}
		// The first holds prepare their statements; then each is what it is.
		steady := counts[len(counts)-1]
		t.Logf("%s: round trips per hold %v", k.name, counts)
		if steady > 3 {
			t.Errorf("%s: %d round trips per hold, want at most 3", k.name, steady)
		}
	}
}
