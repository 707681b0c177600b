package booking_test

import (
	"context"
	"fmt"
	"strconv"
	"testing"
	"time"

	"github.com/foyer-dev/foyer/booking"
)

// TestSupplyHeader: every hold, release, checkout and order answer to an
// admitted fan carries X-Waiting-Room-Supply with the event's places neither
// sold nor held at that moment, on the memory store and on PostgreSQL: a
// refund (a payment landing after its hold's places went to another fan)
// shows on the order's answer.
func TestSupplyHeader(t *testing.T) {
	backends(t, func(t *testing.T, newStore func(*testing.T) booking.Store) {
		h := newHarness(t, newStore(t))
		id := h.createEvent(smallVenue()) // 10 seats in A, 6 places on FLOOR
		supply := func(r response, what string, want int) {
			t.Helper()
			got := r.header.Get(booking.SupplyHeader)
			if n, err := strconv.Atoi(got); err != nil || n != want {
				t.Fatalf("%s: %s %q, want %d", what, booking.SupplyHeader, got, want)
			}
		}
		holds := fmt.Sprintf("/api/events/%d/holds", id)

		var first, second holdJSON
		r := h.req("POST", holds, "fan", map[string]any{"zone": "FLOOR", "quantity": 4}).want(t, 201)
		r.decode(t, &first)
		supply(r, "a hold of 4", 12)
		r = h.req("POST", holds, "other", map[string]any{"section": "A", "quantity": 2}).want(t, 201)
		r.decode(t, &second)
		supply(r, "a second hold of 2", 10)
		supply(h.req("DELETE", "/api/holds/"+second.ID, "other", nil).want(t, 200), "its release", 12)
		supply(h.req("POST", holds, "greedy", map[string]any{"zone": "FLOOR", "quantity": 3}).want(t, 409), "a hold refused for want of places", 12)

		var co checkoutJSON
		r = h.req("POST", "/api/holds/"+first.ID+"/checkout", "fan", nil).want(t, 200)
		r.decode(t, &co)
		supply(r, "the checkout (the places still held)", 12)
		h.payOnPage(co.Payment.PayURL)
		h.fake.DeliverDue(context.Background())
		supply(h.req("GET", "/api/orders/"+co.Order.ID, "fan", nil).want(t, 200), "the paid order (4 sold)", 12)

		// A refund: the late fan's hold expires before they pay, and its
		// places go to another fan; the payment is refunded.
		var late holdJSON
		h.req("POST", holds, "late", map[string]any{"zone": "FLOOR", "quantity": 2}).want(t, 201).decode(t, &late)
		var lateCo checkoutJSON
		h.req("POST", "/api/holds/"+late.ID+"/checkout", "late", nil).want(t, 200).decode(t, &lateCo)
		h.clock.Advance(time.Hour)
		supply(h.req("POST", holds, "quick", map[string]any{"zone": "FLOOR", "quantity": 2}).want(t, 201), "a hold of the expired places", 10)
		h.payOnPage(lateCo.Payment.PayURL)
		h.fake.DeliverDue(context.Background())
		r = h.req("GET", "/api/orders/"+lateCo.Order.ID, "late", nil).want(t, 200)
		if o := r.json(t); o["status"] != string(booking.OrderRefunded) {
			t.Fatalf("the late order: %v, want refunded", o["status"])
		}
		supply(r, "the refunded order", 10)
		h.checkInvariants()
	})
}
