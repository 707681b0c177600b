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

// roundTripStore is a store on one connection, its round trips counted, with
// an event of a section and a zone.
func roundTripStore(t *testing.T) (*pgstore.Store, *roundTrips, booking.Event, time.Time) {
	t.Helper()
	rt := &roundTrips{}
	s, err := pgstore.Open(context.Background(), pgtest.NewDatabase(t), pgstore.Options{MaxConns: 1, Tracer: rt})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(s.Close)
	now := time.Date(2026, 3, 1, 10, 0, 0, 0, time.UTC)
	e, err := s.CreateEvent(context.Background(), booking.EventSpec{
		Name: "Round trips", StartsAt: now.Add(24 * time.Hour), Currency: "EUR",
		Sections: []booking.SectionSpec{{ID: "A", Rows: 20, SeatsPerRow: 20, Price: 5000}},
		Zones:    []booking.ZoneSpec{{ID: "FLOOR", Capacity: 1000, Price: 3000}},
	}, now)
	if err != nil {
		t.Fatal(err)
	}
	return s, rt, e, now
}

// TestHoldRoundTrips counts the round trips of a hold of each kind once the
// connection's statements are prepared: listed seats, best available in a
// section, and a general-admission zone. Each must cost at most three.
func TestHoldRoundTrips(t *testing.T) {
	ctx := context.Background()
	s, rt, e, now := roundTripStore(t)
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

// TestOrderRoundTrips counts the round trips of what a shopper does after
// the hold, once the connection's statements are prepared: the store's part
// of a checkout (open the order with its payment's request pinned, then
// attach the payment and read the order back), the payment's confirmation,
// and a read of the order, which the storefront repeats until the tickets
// arrive.
func TestOrderRoundTrips(t *testing.T) {
	ctx := context.Background()
	s, rt, e, now := roundTripStore(t)
	const n = 6
	var checkout, confirm, read [n]int64
	for i := range n {
		req := booking.HoldRequest{EventID: e.ID, CustomerID: fmt.Sprintf("c-%d", i), TTL: 5 * time.Minute, MaxPerCustomer: 8, Section: "A", Quantity: 2}
		if i%2 == 1 {
			req.Section, req.Zone = "", "FLOOR"
		}
		h, err := s.Hold(ctx, req, now)
		if err != nil {
			t.Fatal(err)
		}
		before := rt.n.Load()
		o, err := s.BeginCheckout(ctx, h.ID, h.CustomerID, now.Add(5*time.Minute), now, func(o booking.Order) ([]byte, error) {
			return []byte(`{"amount":1}`), nil
		})
		if err != nil {
			t.Fatal(err)
		}
		attached, err := s.AttachPayment(ctx, o.ID, "pay-"+o.ID, "http://127.0.0.1/pay/"+o.ID)
		if err != nil {
			t.Fatal(err)
		}
		checkout[i] = rt.n.Load() - before
		if attached.Payment.ProviderPaymentID != "pay-"+o.ID || attached.Quantity != 2 || len(attached.Payment.CreateRequest) == 0 {
			t.Fatalf("order after attaching its payment: %+v", attached)
		}
		before = rt.n.Load()
		paid, err := s.ConfirmPayment(ctx, booking.PaymentConfirmation{ProviderEventID: "ev-" + o.ID, ProviderPaymentID: "pay-" + o.ID, OrderID: o.ID, Amount: o.Amount, MaxPerCustomer: 8}, now)
		if err != nil {
			t.Fatal(err)
		}
		if paid.Status != booking.OrderPaid || len(paid.Tickets) != 2 {
			t.Fatalf("confirmed order: %+v", paid)
		}
		confirm[i] = rt.n.Load() - before
		before = rt.n.Load()
		got, err := s.Order(ctx, o.ID, h.CustomerID)
		if err != nil {
			t.Fatal(err)
		}
		if got.Status != booking.OrderPaid || len(got.Tickets) != 2 || got.Payment.PayURL == "" || got.Quantity != 2 {
			t.Fatalf("order read back: %+v", got)
		}
		read[i] = rt.n.Load() - before
		// The delivery worker records the order's tickets at once; a second
		// record of a ticket keeps the first.
		for attempt, code := range []string{"first", "second"} {
			ds := make([]booking.Delivery, len(got.Tickets))
			for j, tk := range got.Tickets {
				ds[j] = booking.Delivery{TicketID: tk.ID, Code: code + tk.ID, DeliveredAt: now}
			}
			before = rt.n.Load()
			if err := s.RecordDeliveries(ctx, ds); err != nil {
				t.Fatal(err)
			}
			// The first record prepares its statement.
			if trips := rt.n.Load() - before; trips > 1 && (i > 0 || attempt > 0) {
				t.Errorf("recording %d deliveries: %d round trips, want 1", len(ds), trips)
			}
		}
		delivered, err := s.Order(ctx, o.ID, "")
		if err != nil {
			t.Fatal(err)
		}
		for _, tk := range delivered.Tickets {
			if tk.Delivery == nil || tk.Delivery.Code != "first"+tk.ID {
				t.Fatalf("ticket %s delivery %+v, want the first record kept", tk.ID, tk.Delivery)
			}
		}
	}
	if err := s.RecordDeliveries(ctx, []booking.Delivery{{TicketID: "tkt_nosuch", Code: "x", DeliveredAt: now}}); booking.KindOf(err) != booking.KindNotFound {
		t.Errorf("delivery of no ticket: %v, want not found", err)
	}
	t.Logf("round trips per checkout %v, per confirmation %v, per order read %v", checkout, confirm, read)
	for _, c := range []struct {
		name   string
		counts [n]int64
		most   int64
	}{{"checkout", checkout, 3}, {"confirmation", confirm, 3}, {"order read", read, 1}} {
		// The last two, one of each kind of hold, have their statements prepared.
		for _, got := range c.counts[n-2:] {
			if got > c.most {
				t.Errorf("%s: %d round trips, want at most %d", c.name, got, c.most)
			}
		}
	}
}
