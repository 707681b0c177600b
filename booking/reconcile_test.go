package booking_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"testing"
	"time"

	"github.com/foyer-dev/foyer/booking"
	"github.com/foyer-dev/foyer/booking/payments"
)

// TestReconcilerSettlesOrdersWithoutWebhooks loses every webhook and moves
// the clock: before the deadline the reconciler leaves orders alone; after
// it, a paid order is confirmed, a declined one failed, and an order whose
// checkout died before it recorded its payment gets that payment back; once
// the hold has lapsed an unpaid payment is canceled and its order failed.
// The payment given back is made from the request pinned with the order, or,
// for an order opened before checkouts pinned one, from a request pinned
// then. Webhooks that arrive late change nothing.
func TestReconcilerSettlesOrdersWithoutWebhooks(t *testing.T) {
	backends(t, func(t *testing.T, newStore func(*testing.T) booking.Store) {
		ctx := context.Background()
		h := newHarness(t, newStore(t))
		id := h.createEvent(smallVenue())
		hold := func(i int) holdJSON {
			var hj holdJSON
			h.req("POST", fmt.Sprintf("/api/events/%d/holds", id), fan(i), map[string]any{"section": "A", "quantity": 1}).want(t, 201).decode(t, &hj)
			return hj
		}
		checkout := func(i int) checkoutJSON {
			var co checkoutJSON
			h.req("POST", "/api/holds/"+hold(i).ID+"/checkout", fan(i), nil).want(t, 200).decode(t, &co)
			return co
		}
		paid, unpaid, declined := checkout(0), checkout(1), checkout(2)
		h.payOnPage(paid.Payment.PayURL)
		decline(t, declined.Payment.PayURL)
		// Fan 3's checkout died between opening the order and creating the
		// payment: the order exists, its request pinned by a process that
		// knows the storefront by another address; the provider knows
		// nothing yet. Fan 4's order is as one opened before checkouts
		// pinned the request.
		pinnedReturn := "http://crashed-process.invalid/orders/"
		crashed, err := h.store.BeginCheckout(ctx, hold(3).ID, fan(3), h.clock.Now().Add(5*time.Minute), h.clock.Now(),
			func(o booking.Order) ([]byte, error) {
				return json.Marshal(payments.CreateParams{Amount: int64(o.Amount), Currency: o.Currency, ReturnURL: pinnedReturn + o.ID,
					Metadata: map[string]string{"order_id": o.ID, "payment_id": o.Payment.ID}})
			})
		if err != nil {
			t.Fatal(err)
		}
		unpinned, err := h.store.BeginCheckout(ctx, hold(4).ID, fan(4), h.clock.Now().Add(5*time.Minute), h.clock.Now(), nil)
		if err != nil {
			t.Fatal(err)
		}
		status := func(orderID string) booking.OrderStatus {
			t.Helper()
			o, err := h.store.Order(ctx, orderID, "")
			if err != nil {
				t.Fatal(err)
			}
			return o.Status
		}

		h.clock.Advance(59 * time.Second)
		if n, err := h.svc.Reconcile(ctx); n != 0 || err != nil {
			t.Fatalf("before the deadline: reconciled %d, %v", n, err)
		}
		h.clock.Advance(2 * time.Second)
		if n, err := h.svc.Reconcile(ctx); n != 2 || err != nil {
			t.Fatalf("after the deadline: reconciled %d, %v; want the paid and the declined order", n, err)
		}
		if s := status(paid.Order.ID); s != booking.OrderPaid {
			t.Fatalf("paid order is %s", s)
		}
		if s := status(declined.Order.ID); s != booking.OrderPaymentFailed {
			t.Fatalf("declined order is %s", s)
		}
		for _, c := range []struct {
			order     booking.Order
			returnURL string
		}{{crashed, pinnedReturn + crashed.ID}, {unpinned, h.srv.URL + "/orders/" + unpinned.ID}} {
			o, _ := h.store.Order(ctx, c.order.ID, "")
			if o.Status != booking.OrderPendingPayment || o.Payment.ProviderPaymentID == "" || o.Payment.PayURL == "" {
				t.Fatalf("crashed checkout after reconciling = %+v; want pending with its payment attached", o)
			}
			if p, _ := h.fake.Payment(o.Payment.ProviderPaymentID); p.ReturnURL != c.returnURL || p.Metadata["order_id"] != o.ID {
				t.Fatalf("crashed checkout's payment = %+v; want the pinned request's, returning to %s", p, c.returnURL)
			}
		}
		if s := status(unpaid.Order.ID); s != booking.OrderPendingPayment {
			t.Fatalf("unpaid order within its hold is %s", s)
		}

		h.clock.Advance(5 * time.Minute) // every hold has lapsed
		if n, err := h.svc.Reconcile(ctx); n != 3 || err != nil {
			t.Fatalf("after the holds: reconciled %d, %v; want the three unpaid orders", n, err)
		}
		for _, oid := range []string{unpaid.Order.ID, crashed.ID, unpinned.ID} {
			if s := status(oid); s != booking.OrderPaymentFailed {
				t.Fatalf("unpaid order %s is %s after its hold", oid, s)
			}
		}
		// The fan comes back to the pay page too late: nothing is charged.
		h.payOnPage(unpaid.Payment.PayURL)
		if p, _ := h.fake.Payment(unpaid.Payment.ProviderPaymentID); p.Status != payments.StatusCanceled {
			t.Fatalf("payment after cancel is %s", p.Status)
		}
		if n, _ := h.svc.Reconcile(ctx); n != 0 {
			t.Fatalf("a settled order was reconciled again (%d)", n)
		}

		// The lost webhooks finally arrive: nothing changes.
		for h.fake.Pending() > 0 {
			h.clock.Advance(time.Minute)
			h.fake.DeliverDue(ctx)
		}
		o, _ := h.store.Order(ctx, paid.Order.ID, "")
		if o.Status != booking.OrderPaid || len(o.Tickets) != 1 {
			t.Fatalf("paid order after late webhooks = %+v", o)
		}
		if msgs, _ := h.store.PendingOutbox(ctx, 10); len(msgs) != 1 {
			t.Fatalf("outbox has %d messages, want one order.paid", len(msgs))
		}
		h.checkInvariants()
	})
}

// decline refuses a payment on the fake's pay page, as a browser would.
func decline(t *testing.T, payURL string) {
	t.Helper()
	client := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	resp, err := client.PostForm(payURL, map[string][]string{"action": {"decline"}})
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusSeeOther {
		t.Fatalf("pay page answered %d", resp.StatusCode)
	}
}
