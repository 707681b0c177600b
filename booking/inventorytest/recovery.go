package inventorytest

import (
	"testing"
	"time"

	"github.com/foyer-dev/foyer/booking"
)

// testOutboxDelivered: a published message stays "undelivered" until its
// consumer says otherwise, so it can be published again to a stream that
// lost it; only messages published before the cut-off are returned.
func testOutboxDelivered(t *testing.T, f *fixture) {
	e := f.event(SmallVenue())
	for _, c := range []string{"a", "b"} {
		f.pay(f.hold(booking.HoldRequest{EventID: e.ID, CustomerID: c, Section: "A", Quantity: 1}, Epoch), Epoch)
	}
	msgs, err := f.s.PendingOutbox(f.ctx, 10)
	if err != nil || len(msgs) != 2 {
		t.Fatalf("outbox = %+v, %v", msgs, err)
	}
	if got, _ := f.s.UndeliveredOutbox(f.ctx, Epoch.Add(time.Hour), 10); len(got) != 0 {
		t.Fatalf("unpublished messages listed as undelivered: %+v", got)
	}
	if err := f.s.MarkPublished(f.ctx, []int64{msgs[0].ID, msgs[1].ID}, Epoch); err != nil {
		t.Fatal(err)
	}
	if got, _ := f.s.UndeliveredOutbox(f.ctx, Epoch, 10); len(got) != 0 {
		t.Fatalf("messages published at the cut-off listed: %+v", got)
	}
	got, err := f.s.UndeliveredOutbox(f.ctx, Epoch.Add(time.Second), 10)
	if err != nil || len(got) != 2 || got[0].ID != msgs[0].ID || string(got[0].Payload) == "" {
		t.Fatalf("undelivered = %+v, %v", got, err)
	}
	if err := f.s.MarkDelivered(f.ctx, []int64{msgs[0].ID}, Epoch); err != nil {
		t.Fatal(err)
	}
	got, err = f.s.UndeliveredOutbox(f.ctx, Epoch.Add(time.Second), 10)
	if err != nil || len(got) != 1 || got[0].ID != msgs[1].ID {
		t.Fatalf("after one delivery: %+v, %v", got, err)
	}
}

// testOrdersPendingPayment: the reconciler sees orders still pending past
// its deadline, and no others.
func testOrdersPendingPayment(t *testing.T, f *fixture) {
	e := f.event(SmallVenue())
	early := f.checkout(f.hold(booking.HoldRequest{EventID: e.ID, CustomerID: "a", Section: "A", Quantity: 1}, Epoch), Epoch)
	f.pay(f.hold(booking.HoldRequest{EventID: e.ID, CustomerID: "b", Section: "A", Quantity: 1}, Epoch), Epoch)
	later := Epoch.Add(time.Minute)
	f.checkout(f.hold(booking.HoldRequest{EventID: e.ID, CustomerID: "c", Section: "A", Quantity: 1}, later), later)
	got, err := f.s.OrdersPendingPayment(f.ctx, later, 10)
	if err != nil || len(got) != 1 || got[0].ID != early.ID || got[0].Status != booking.OrderPendingPayment {
		t.Fatalf("pending before %s = %+v, %v; want only %s", later, got, err, early.ID)
	}
	if got, _ := f.s.OrdersPendingPayment(f.ctx, later.Add(time.Second), 10); len(got) != 2 {
		t.Fatalf("pending = %d orders, want 2", len(got))
	}
	if got, _ := f.s.OrdersPendingPayment(f.ctx, later.Add(time.Second), 1); len(got) != 1 || got[0].ID != early.ID {
		t.Fatalf("limit 1 = %+v; want the oldest", got)
	}
}
