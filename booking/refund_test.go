package booking_test

import (
	"context"
	"fmt"
	"net/http"
	"testing"

	"github.com/foyer-dev/foyer/booking"
	"github.com/foyer-dev/foyer/booking/payments"
)

// buy holds what body asks for as customer, checks out and pays on the pay
// page, and delivers the payment's webhooks: the order is paid.
func (h *harness) buy(eventID int64, customer string, body map[string]any) checkoutJSON {
	h.t.Helper()
	var hold holdJSON
	h.req("POST", fmt.Sprintf("/api/events/%d/holds", eventID), customer, body).want(h.t, http.StatusCreated).decode(h.t, &hold)
	var co checkoutJSON
	h.req("POST", "/api/holds/"+hold.ID+"/checkout", customer, nil).want(h.t, http.StatusOK).decode(h.t, &co)
	h.payOnPage(co.Payment.PayURL)
	if _, refused := h.fake.DeliverDue(context.Background()); refused != 0 {
		h.t.Fatalf("%d payment webhooks refused", refused)
	}
	return co
}

// refundEvent is a charge.refunded body for an order's payment, refunding
// amount, as the provider would send it.
func refundEvent(co checkoutJSON, amount int64) []byte {
	_, body := payments.NewEvent(payments.EventChargeRefunded, payments.Payment{
		ID: co.Payment.ProviderPaymentID, Amount: int64(co.Order.Amount), Currency: co.Order.Currency,
		Status: payments.StatusRefunded, AmountRefunded: amount, Metadata: map[string]string{"order_id": co.Order.ID},
	}, epoch)
	return body
}

// postSigned posts a webhook body signed with the harness's secret.
func (h *harness) postSigned(body []byte) response {
	h.t.Helper()
	return h.req("POST", "/api/payments/webhook", "", body, payments.SignatureHeader, payments.Sign([]byte("whsec_test"), h.clock.Now(), body))
}

// TestRefundWebhook: the provider's charge.refunded for a paid order
// refunds it: its tickets are cancelled and never delivered, its places are
// for sale again, and the answer says how many came back with the supply
// header. A repeat changes nothing and says so; every bad input gets its
// 4xx and a JSON error and changes nothing.
func TestRefundWebhook(t *testing.T) {
	backends(t, func(t *testing.T, newStore func(*testing.T) booking.Store) {
		h := newHarness(t, newStore(t))
		id := h.createEvent(smallVenue()) // 10 seats, 6 standing places
		ctx := context.Background()
		alice := h.buy(id, "alice", map[string]any{"seats": []string{"A-1-1", "A-1-2"}})
		bob := h.buy(id, "bob", map[string]any{"zone": "FLOOR", "quantity": 3})
		dave := h.buy(id, "dave", map[string]any{"seats": []string{"A-2-5"}})

		// The provider's own refund, issued from its side, is delivered
		// signed like any event.
		if _, err := h.fake.RefundPayment(alice.Payment.ProviderPaymentID); err != nil {
			t.Fatal(err)
		}
		if a, r := h.fake.DeliverDue(ctx); a != 1 || r != 0 {
			t.Fatalf("refund webhook: %d accepted, %d refused; want 1 accepted", a, r)
		}
		o, err := h.store.Order(ctx, alice.Order.ID, "")
		if err != nil || o.Status != booking.OrderRefunded || o.RefundReason != booking.RefundReturned || len(o.Tickets) != 2 || o.Tickets[0].Live() || o.Tickets[1].Live() {
			t.Fatalf("alice's order after the provider's refund = %+v, %v", o, err)
		}

		// A refund posted directly: the answer counts the places returned
		// and carries the supply (10 + 6 places, 1 seat still sold).
		body := refundEvent(bob, int64(bob.Order.Amount))
		r := h.postSigned(body).want(t, http.StatusOK)
		m := r.json(t)
		if m["returned"] != 3.0 || m["already_refunded"] != false || m["status"] != "refunded" || m["order_id"] != bob.Order.ID || m["refund_reason"] != "returned" {
			t.Fatalf("refund answer = %s", r.body)
		}
		if got := r.header.Get(booking.SupplyHeader); got != "15" {
			t.Fatalf("supply after the refunds = %q, want 15", got)
		}
		// The same event again, and another event for the same refund.
		for _, again := range [][]byte{body, refundEvent(bob, int64(bob.Order.Amount))} {
			r = h.postSigned(again).want(t, http.StatusOK)
			if m := r.json(t); m["returned"] != 0.0 || m["already_refunded"] != true {
				t.Fatalf("repeated refund answer = %s", r.body)
			}
			if got := r.header.Get(booking.SupplyHeader); got != "15" {
				t.Fatalf("supply after a repeat = %q, want 15", got)
			}
		}

		// Bad input.
		var carol checkoutJSON
		var hold holdJSON
		h.req("POST", fmt.Sprintf("/api/events/%d/holds", id), "carol", map[string]any{"seats": []string{"A-2-1"}}).want(t, http.StatusCreated).decode(t, &hold)
		h.req("POST", "/api/holds/"+hold.ID+"/checkout", "carol", nil).want(t, http.StatusOK).decode(t, &carol)
		unknown := dave
		unknown.Order.ID = "ord_unknown"
		noOrder := dave
		noOrder.Order.ID = ""
		whole := int64(dave.Order.Amount)
		cases := []struct {
			name   string
			body   []byte
			sig    string
			status int
			code   string
		}{
			{"unknown order", refundEvent(unknown, whole), "", 404, booking.CodeOrderNotFound},
			{"order not paid yet", refundEvent(carol, int64(carol.Order.Amount)), "", 409, booking.CodeOrderNotRefundable},
			{"part of a paid order", refundEvent(dave, whole-1), "", 409, booking.CodeRefundAmountMismatch},
			{"more than a paid order", refundEvent(dave, whole+1), "", 409, booking.CodeRefundAmountMismatch},
			{"no refunded amount", refundEvent(dave, 0), "", 400, booking.CodeInvalidRequest},
			{"no order named", refundEvent(noOrder, whole), "", 400, booking.CodeInvalidRequest},
			{"bad signature", refundEvent(dave, whole), payments.Sign([]byte("guess"), h.clock.Now(), refundEvent(dave, whole)), 400, booking.CodeInvalidSignature},
			{"not an event", []byte(`{"type":"charge.refunded"}`), "", 400, booking.CodeInvalidJSON},
		}
		before := snapshot(t, h, id)
		for _, c := range cases {
			sig := c.sig
			if sig == "" {
				sig = payments.Sign([]byte("whsec_test"), h.clock.Now(), c.body)
			}
			r := h.req("POST", "/api/payments/webhook", "", c.body, payments.SignatureHeader, sig)
			if m := r.json(t); r.status != c.status || m["error"] != c.code || m["message"] == "" {
				t.Fatalf("%s: %d %s, want %d %s", c.name, r.status, r.body, c.status, c.code)
			}
		}
		if after := snapshot(t, h, id); fmt.Sprint(before) != fmt.Sprint(after) {
			t.Fatalf("refused refunds changed state:\nbefore %+v\nafter  %+v", before, after)
		}
		if o, _ := h.store.Order(ctx, dave.Order.ID, ""); o.Status != booking.OrderPaid {
			t.Fatalf("dave's order after refused refunds = %s, want paid", o.Status)
		}

		// Ticket delivery skips the cancelled tickets, and the returned
		// places sell again.
		relayAll(t, h)
		consume(t, h)
		o, _ = h.store.Order(ctx, alice.Order.ID, "")
		for _, tk := range o.Tickets {
			if tk.Delivery != nil {
				t.Fatalf("cancelled ticket %+v was delivered", tk)
			}
		}
		again := h.buy(id, "erin", map[string]any{"seats": []string{"A-1-1"}})
		if o, _ := h.store.Order(ctx, again.Order.ID, ""); o.Status != booking.OrderPaid || len(o.Tickets) != 1 {
			t.Fatalf("resold seat's order = %+v", o)
		}
		h.checkInvariants()
	})
}

// relayAll publishes the outbox to the harness's stream.
func relayAll(t *testing.T, h *harness) {
	t.Helper()
	if _, err := h.svc.RelayOutbox(context.Background(), h.stream); err != nil {
		t.Fatal(err)
	}
}
