package booking_test

import (
	"context"
	"fmt"
	"sync"
	"testing"

	"github.com/foyer-dev/foyer/booking"
)

// TestCheckoutOnTwoProcessesSendsOneRequest checks out each hold on two
// services at once that share the store and the provider but know the
// storefront by different addresses, as two processes behind one balancer
// may. The provider refuses an idempotency key sent again with other
// parameters, so every attempt must send the request the first one pinned:
// each hold gets one order and one payment, and no checkout fails.
func TestCheckoutOnTwoProcessesSendsOneRequest(t *testing.T) {
	backends(t, func(t *testing.T, newStore func(*testing.T) booking.Store) {
		ctx := context.Background()
		h := newHarness(t, newStore(t))
		other := booking.NewService(booking.Config{
			Store: h.store, Provider: h.fake, Clock: h.clock, WebhookSecret: []byte("whsec_test"),
			PublicURL: "http://other-process.invalid", TicketSecret: []byte("tickets"),
		})
		svcs := []*booking.Service{h.svc, other}
		id := h.createEvent(smallVenue())
		const holds, attempts = 6, 8 // attempts per hold, alternating services
		for i := range holds {
			var hold holdJSON
			h.req("POST", fmt.Sprintf("/api/events/%d/holds", id), fan(i), map[string]any{"section": "A", "quantity": 1}).
				want(t, 201).decode(t, &hold)
			orders := make([]booking.Order, attempts)
			errs := make([]error, attempts)
			var wg sync.WaitGroup
			for j := range attempts {
				wg.Go(func() { orders[j], errs[j] = svcs[j%2].Checkout(ctx, fan(i), hold.ID) })
			}
			wg.Wait()
			for j := range attempts {
				if errs[j] != nil {
					t.Fatalf("hold %d, attempt %d: %v", i, j, errs[j])
				}
				if orders[j].ID != orders[0].ID || orders[j].Payment.ProviderPaymentID != orders[0].Payment.ProviderPaymentID {
					t.Fatalf("hold %d: attempts answered order %s payment %s and order %s payment %s", i,
						orders[0].ID, orders[0].Payment.ProviderPaymentID, orders[j].ID, orders[j].Payment.ProviderPaymentID)
				}
			}
			p, ok := h.fake.Payment(orders[0].Payment.ProviderPaymentID)
			if !ok || p.Metadata["order_id"] != orders[0].ID || p.PayURL != orders[0].Payment.PayURL {
				t.Fatalf("hold %d: the provider holds %+v, %v", i, p, ok)
			}
			// A retry on either service after the race finds the same payment.
			for _, s := range svcs {
				again, err := s.Checkout(ctx, fan(i), hold.ID)
				if err != nil || again.Payment.ProviderPaymentID != p.ID {
					t.Fatalf("hold %d: retry = %+v, %v", i, again.Payment, err)
				}
			}
		}
		h.checkInvariants()
	})
}
