package pgstore_test

import (
	"context"
	"strings"
	"testing"

	"github.com/foyer-dev/foyer/booking"
	"github.com/foyer-dev/foyer/booking/inventorytest"
	"github.com/foyer-dev/foyer/booking/pgstore"
)

// TestInvariantsCatchPaidOrderWithoutTickets: the checker reads the rows
// themselves, so a paid order whose tickets are gone is reported.
func TestInvariantsCatchPaidOrderWithoutTickets(t *testing.T) {
	ctx := context.Background()
	s := open(t, pgstore.Options{})
	now := inventorytest.Epoch
	e, err := s.CreateEvent(ctx, inventorytest.SmallVenue(), now)
	if err != nil {
		t.Fatal(err)
	}
	h, err := s.Hold(ctx, booking.HoldRequest{EventID: e.ID, CustomerID: "alice", Zone: e.Zones[0].ID, Quantity: 1, TTL: inventorytest.HoldTTL, MaxPerCustomer: 4}, now)
	if err != nil {
		t.Fatal(err)
	}
	o, err := s.BeginCheckout(ctx, h.ID, "alice", now.Add(inventorytest.HoldTTL), now, nil)
	if err != nil {
		t.Fatal(err)
	}
	if o, err = s.ConfirmPayment(ctx, booking.PaymentConfirmation{ProviderEventID: "evt_1", OrderID: o.ID, Amount: o.Amount, MaxPerCustomer: 4}, now); err != nil || o.Status != booking.OrderPaid {
		t.Fatalf("confirm = %+v, %v", o, err)
	}
	if rep, err := s.CheckInvariants(ctx); err != nil || !rep.OK() {
		t.Fatalf("before: %+v, %v", rep, err)
	}
	// Corrupt: the tickets go, and the zone's sold count with them so that
	// only the paid-without-tickets rule can notice.
	if _, err := s.Pool().Exec(ctx, `DELETE FROM tickets WHERE order_id = $1`, o.ID); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Pool().Exec(ctx, `UPDATE zone_shards SET sold = 0`); err != nil {
		t.Fatal(err)
	}
	rep, err := s.CheckInvariants(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(strings.Join(rep.Violations, "\n"), "order "+o.ID+" is paid and has no ticket") {
		t.Fatalf("violations %v; want the paid order without tickets", rep.Violations)
	}
}
