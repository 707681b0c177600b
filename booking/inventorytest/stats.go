package inventorytest

import (
	"testing"
	"time"

	"github.com/foyer-dev/foyer/booking"
)

// testStats: the monitoring snapshot counts holds, orders, payments,
// tickets, deliveries and the pending outbox as they are.
func testStats(t *testing.T, f *fixture) {
	sr, ok := f.s.(booking.StatsReader)
	if !ok {
		t.Skip("the store reports no stats")
	}
	stats := func(now time.Time) booking.Stats {
		t.Helper()
		st, err := sr.Stats(f.ctx, now)
		if err != nil {
			t.Fatal(err)
		}
		return st
	}
	if st := stats(Epoch); st.ActiveHolds != 0 || st.Tickets != 0 || st.OutboxPending != 0 || !st.OutboxOldest.IsZero() {
		t.Fatalf("empty store stats = %+v", st)
	}
	e := f.event(SmallVenue())
	f.hold(booking.HoldRequest{EventID: e.ID, CustomerID: "alice", Seats: []string{"A-1-1", "A-1-2"}}, Epoch)
	paid := f.pay(f.hold(booking.HoldRequest{EventID: e.ID, CustomerID: "bob", Section: "B", Quantity: 1}, Epoch), Epoch)
	f.checkout(f.hold(booking.HoldRequest{EventID: e.ID, CustomerID: "carol", Section: "A", Quantity: 1}, Epoch), Epoch)
	st := stats(Epoch)
	if st.ActiveHolds != 2 || st.HeldPlaces != 3 || st.Orders[booking.OrderPaid] != 1 || st.Orders[booking.OrderPendingPayment] != 1 ||
		st.Payments[booking.PaymentSucceeded] != 1 || st.Payments[booking.PaymentPending] != 1 || st.Tickets != 1 || st.Deliveries != 0 ||
		st.PaidWithoutTickets != 0 || st.OutboxPending != 1 || st.OutboxOldest.IsZero() {
		t.Fatalf("stats = %+v", st)
	}
	if st := stats(Epoch.Add(24 * time.Hour)); st.ActiveHolds != 0 {
		t.Fatalf("expired holds counted as active: %+v", st)
	}
	msgs, err := f.s.PendingOutbox(f.ctx, 10)
	if err != nil || len(msgs) != 1 {
		t.Fatalf("pending outbox = %v, %v", msgs, err)
	}
	if err := f.s.MarkPublished(f.ctx, []int64{msgs[0].ID}, Epoch); err != nil {
		t.Fatal(err)
	}
	o, err := f.s.Order(f.ctx, paid.ID, "")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := f.s.RecordDelivery(f.ctx, booking.Delivery{TicketID: o.Tickets[0].ID, Code: "c", DeliveredAt: Epoch}); err != nil {
		t.Fatal(err)
	}
	if st := stats(Epoch); st.OutboxPending != 0 || !st.OutboxOldest.IsZero() || st.Deliveries != 1 {
		t.Fatalf("after publishing and delivery: %+v", st)
	}
}
