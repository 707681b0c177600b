package booking_test

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/foyer-dev/foyer/booking"
	"github.com/foyer-dev/foyer/booking/payments"
)

type holdJSON struct {
	ID        string    `json:"id"`
	Seats     []string  `json:"seats"`
	Zone      string    `json:"zone"`
	Quantity  int       `json:"quantity"`
	Amount    string    `json:"amount"`
	Status    string    `json:"status"`
	ExpiresAt time.Time `json:"expires_at"`
}

type checkoutJSON struct {
	Order   booking.Order   `json:"order"`
	Payment booking.Payment `json:"payment"`
}

// TestFanJourney walks the whole path: venue, seat map, hold, checkout, pay
// page, webhook, outbox relay, ticket delivery, and the revoke at the end.
func TestFanJourney(t *testing.T) {
	backends(t, func(t *testing.T, newStore func(*testing.T) booking.Store) {
		h := newHarness(t, newStore(t))
		id := h.createEvent(smallVenue())
		list := h.req("GET", "/api/events", "fan", nil).want(t, 200).json(t)
		if evs := list["events"].([]any); len(evs) != 1 {
			t.Fatalf("events = %v", list)
		}
		ev := h.req("GET", fmt.Sprintf("/api/events/%d", id), "fan", nil).want(t, 200).json(t)
		if ev["name"] != "Test night" || ev["available"].(float64) != 16 || ev["sold_out"] != false {
			t.Fatalf("event = %v", ev)
		}
		seats := h.req("GET", fmt.Sprintf("/api/events/%d/seats", id), "fan", nil).want(t, 200)
		if seats.header.Get("Cache-Control") != "public, max-age=1" {
			t.Fatalf("seat map Cache-Control = %q", seats.header.Get("Cache-Control"))
		}

		var hold holdJSON
		h.req("POST", fmt.Sprintf("/api/events/%d/holds", id), "fan", map[string]any{"seats": []string{"A-1-2", "A-1-3"}}).
			want(t, 201).decode(t, &hold)
		if len(hold.Seats) != 2 || hold.Amount != "240.00" || !hold.ExpiresAt.Equal(epoch.Add(5*time.Minute)) {
			t.Fatalf("hold = %+v", hold)
		}
		h.req("POST", fmt.Sprintf("/api/events/%d/holds", id), "rival", map[string]any{"seats": []string{"A-1-3"}}).want(t, 409)
		h.req("GET", "/api/holds/"+hold.ID, "rival", nil).want(t, 404)

		h.clock.Advance(4 * time.Minute)
		var co checkoutJSON
		h.req("POST", "/api/holds/"+hold.ID+"/checkout", "fan", nil).want(t, 200).decode(t, &co)
		if co.Order.Status != booking.OrderPendingPayment || co.Payment.PayURL == "" || co.Order.Amount != 24000 {
			t.Fatalf("checkout = %+v", co)
		}
		var extended holdJSON
		h.req("GET", "/api/holds/"+hold.ID, "fan", nil).want(t, 200).decode(t, &extended)
		if !extended.ExpiresAt.Equal(epoch.Add(9 * time.Minute)) {
			t.Fatalf("checkout did not extend the hold: %v", extended.ExpiresAt)
		}

		h.payOnPage(co.Payment.PayURL)
		if a, r := h.fake.DeliverDue(context.Background()); a != 2 || r != 0 {
			t.Fatalf("webhooks: %d accepted, %d refused", a, r)
		}
		var o booking.Order
		r := h.req("GET", "/api/orders/"+co.Order.ID, "fan", nil).want(t, 200)
		r.decode(t, &o)
		if o.Status != booking.OrderPaid || len(o.Tickets) != 2 || r.header.Get(booking.CommandHeader) != "" {
			t.Fatalf("order before delivery = %+v (command %q)", o, r.header.Get(booking.CommandHeader))
		}
		h.req("GET", "/api/orders/"+co.Order.ID, "rival", nil).want(t, 404)

		if n, err := h.svc.RelayOutbox(context.Background(), h.stream); err != nil || n != 1 {
			t.Fatalf("relay = %d, %v", n, err)
		}
		consume(t, h)
		r = h.req("GET", "/api/orders/"+co.Order.ID, "fan", nil).want(t, 200)
		r.decode(t, &o)
		for _, tk := range o.Tickets {
			if tk.Delivery == nil || !booking.VerifyTicketCode([]byte("tickets"), tk.Delivery.Code, tk) {
				t.Fatalf("ticket not delivered with a valid code: %+v", tk)
			}
		}
		if r.header.Get(booking.CommandHeader) != booking.CommandRevoke {
			t.Fatalf("complete order did not revoke the session")
		}

		// Once the session is revoked the order's signed link still shows the
		// order and its tickets, with no pass and no gateway command; altered,
		// or carried to another order, it opens nothing.
		var linked struct {
			booking.Order
			Link string `json:"link"`
		}
		r.decode(t, &linked)
		link, ok := strings.CutPrefix(linked.Link, booking.OrderLinkPath)
		if !ok || !strings.HasPrefix(link, co.Order.ID+".") {
			t.Fatalf("order link = %q", linked.Link)
		}
		byLink := h.req("GET", "/api"+booking.OrderLinkPath+link, "", nil).want(t, 200)
		var shown booking.Order
		byLink.decode(t, &shown)
		if shown.ID != co.Order.ID || len(shown.Tickets) != 2 || shown.Tickets[0].Delivery == nil || byLink.header.Get(booking.CommandHeader) != "" {
			t.Fatalf("order by link = %+v (command %q)", shown, byLink.header.Get(booking.CommandHeader))
		}
		_, mac, _ := strings.Cut(link, ".")
		for _, bad := range []string{co.Order.ID + "." + mac[1:], co.Order.ID, "ord_aaaaaaaaaaaaaaaaaaaaaaaa." + mac, co.Order.ID + "." + mac + "x"} {
			if got := h.req("GET", "/api"+booking.OrderLinkPath+bad, "", nil).want(t, 404).json(t); got["error"] != booking.CodeInvalidOrderLink {
				t.Fatalf("link %q = %v", bad, got)
			}
		}
		// Processes sharing the ticket secret accept each other's links.
		twin := booking.NewService(booking.Config{Store: h.store, TicketSecret: []byte("tickets")})
		if o, err := twin.OrderByLink(context.Background(), link); err != nil || o.ID != co.Order.ID {
			t.Fatalf("a process with the same ticket secret: %v", err)
		}
		stranger := booking.NewService(booking.Config{Store: h.store, TicketSecret: []byte("other")})
		if _, err := stranger.OrderByLink(context.Background(), link); booking.KindOf(err) != booking.KindNotFound {
			t.Fatalf("a process with another ticket secret: %v", err)
		}
		inv := h.req("GET", "/api/admin/invariants", "", nil, "Authorization", "Bearer "+adminToken).want(t, 200).json(t)
		if inv["ok"] != true {
			t.Fatalf("invariants = %v", inv)
		}
		h.checkInvariants()
	})
}

// consume runs the ticket delivery worker until the stream is drained.
func consume(t *testing.T, h *harness) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	var handled sync.WaitGroup
	want := h.stream.Len()
	handled.Add(want)
	go func() {
		_ = h.stream.Consume(ctx, booking.DeliveryGroup, "test", func(ctx context.Context, m streamMessage) error {
			err := h.svc.DeliverTickets(ctx, m)
			if err == nil {
				handled.Done()
			}
			return err
		})
	}()
	done := make(chan struct{})
	go func() { handled.Wait(); close(done) }()
	select {
	case <-done:
	case <-time.After(10 * time.Second):
		t.Fatal("ticket delivery did not drain the stream")
	}
	cancel()
}

// TestDuplicateWebhooks delivers every event five times, concurrently and
// newest first: one paid order, one ticket per seat, one outbox message, one
// delivery per ticket.
func TestDuplicateWebhooks(t *testing.T) {
	backends(t, func(t *testing.T, newStore func(*testing.T) booking.Store) {
		h := newHarness(t, newStore(t))
		h.fake.SetDelivery(payments.DeliveryOptions{Copies: 5, OutOfOrder: true, Concurrent: true})
		id := h.createEvent(smallVenue())
		var hold holdJSON
		h.req("POST", fmt.Sprintf("/api/events/%d/holds", id), "fan", map[string]any{"section": "A", "quantity": 3}).want(t, 201).decode(t, &hold)
		var co checkoutJSON
		h.req("POST", "/api/holds/"+hold.ID+"/checkout", "fan", nil).want(t, 200).decode(t, &co)
		h.payOnPage(co.Payment.PayURL)
		if a, r := h.fake.DeliverDue(context.Background()); a != 10 || r != 0 {
			t.Fatalf("webhooks: %d accepted, %d refused; want all 10", a, r)
		}
		o, err := h.store.Order(context.Background(), co.Order.ID, "")
		if err != nil || o.Status != booking.OrderPaid || len(o.Tickets) != 3 {
			t.Fatalf("order = %+v, %v", o, err)
		}
		msgs, _ := h.store.PendingOutbox(context.Background(), 10)
		if len(msgs) != 1 {
			t.Fatalf("outbox = %d messages, want 1", len(msgs))
		}
		// The relay publishes twice (as after a crash before marking): the
		// stream keeps one copy, and delivering twice records once.
		for range 2 {
			if _, err := h.stream.Publish(context.Background(), streamMessage{ID: msgs[0].ID, Topic: msgs[0].Topic, Payload: msgs[0].Payload}); err != nil {
				t.Fatal(err)
			}
		}
		if h.stream.Len() != 1 {
			t.Fatalf("stream holds %d messages, want 1", h.stream.Len())
		}
		consume(t, h)
		if err := h.svc.DeliverTickets(context.Background(), streamMessage{ID: msgs[0].ID, Topic: msgs[0].Topic, Payload: msgs[0].Payload}); err != nil {
			t.Fatal(err)
		}
		o, _ = h.store.Order(context.Background(), co.Order.ID, "")
		seen := map[string]bool{}
		for _, tk := range o.Tickets {
			if tk.Delivery == nil || seen[tk.Seat] {
				t.Fatalf("tickets = %+v", o.Tickets)
			}
			seen[tk.Seat] = true
		}
		h.checkInvariants()
	})
}

// TestWebhookSignatures refuses forged and stale webhooks with 400 and
// changes nothing.
func TestWebhookSignatures(t *testing.T) {
	h := newHarness(t, newMemStore())
	id := h.createEvent(smallVenue())
	var hold holdJSON
	h.req("POST", fmt.Sprintf("/api/events/%d/holds", id), "fan", map[string]any{"seats": []string{"A-2-1"}}).want(t, 201).decode(t, &hold)
	var co checkoutJSON
	h.req("POST", "/api/holds/"+hold.ID+"/checkout", "fan", nil).want(t, 200).decode(t, &co)
	obj := fmt.Sprintf(`{"id":%q,"amount":12000,"currency":"EUR","status":"succeeded","metadata":{"order_id":%q}}`, co.Payment.ProviderPaymentID, co.Order.ID)
	body := []byte(`{"id":"evt_forged","type":"payment_intent.succeeded","created":1,"data":{"object":` + obj + `}}`)
	cases := []struct {
		name, sig string
	}{
		{"no signature", ""},
		{"wrong secret", payments.Sign([]byte("guess"), h.clock.Now(), body)},
		{"stale", payments.Sign([]byte("whsec_test"), h.clock.Now().Add(-301*time.Second), body)},
		{"from the future", payments.Sign([]byte("whsec_test"), h.clock.Now().Add(301*time.Second), body)},
		{"garbage", "t=abc,v1=zz"},
	}
	for _, c := range cases {
		r := h.req("POST", "/api/payments/webhook", "", body, payments.SignatureHeader, c.sig).want(t, 400)
		if r.json(t)["error"] != booking.CodeInvalidSignature {
			t.Fatalf("%s: %s", c.name, r.body)
		}
	}
	if o, _ := h.store.Order(context.Background(), co.Order.ID, ""); o.Status != booking.OrderPendingPayment {
		t.Fatalf("a refused webhook changed the order: %s", o.Status)
	}
	// The same body, properly signed, is accepted.
	h.req("POST", "/api/payments/webhook", "", body, payments.SignatureHeader, payments.Sign([]byte("whsec_test"), h.clock.Now(), body)).want(t, 200)
	if o, _ := h.store.Order(context.Background(), co.Order.ID, ""); o.Status != booking.OrderPaid {
		t.Fatalf("signed webhook not applied: %s", o.Status)
	}
}

// TestPaymentAfterExpiry: a payment that lands after its hold expired takes
// the same seats again when they are free, and is refunded when they are not.
func TestPaymentAfterExpiry(t *testing.T) {
	backends(t, func(t *testing.T, newStore func(*testing.T) booking.Store) {
		h := newHarness(t, newStore(t))
		id := h.createEvent(smallVenue())
		start := func(customer string, seats ...string) checkoutJSON {
			var hold holdJSON
			h.req("POST", fmt.Sprintf("/api/events/%d/holds", id), customer, map[string]any{"seats": seats}).want(t, 201).decode(t, &hold)
			var co checkoutJSON
			h.req("POST", "/api/holds/"+hold.ID+"/checkout", customer, nil).want(t, 200).decode(t, &co)
			return co
		}
		free := start("early", "A-1-1")
		taken := start("unlucky", "A-2-1", "A-2-2")
		h.clock.Advance(11 * time.Minute)
		if _, err := h.svc.Sweep(context.Background()); err != nil {
			t.Fatal(err)
		}
		h.req("POST", fmt.Sprintf("/api/events/%d/holds", id), "quick", map[string]any{"seats": []string{"A-2-2"}}).want(t, 201)

		h.payOnPage(free.Payment.PayURL)
		h.payOnPage(taken.Payment.PayURL)
		h.fake.DeliverDue(context.Background())

		o, _ := h.store.Order(context.Background(), free.Order.ID, "")
		if o.Status != booking.OrderPaid || len(o.Tickets) != 1 {
			t.Fatalf("late payment with free seats = %+v", o)
		}
		o, _ = h.store.Order(context.Background(), taken.Order.ID, "")
		if o.Status != booking.OrderRefunded || len(o.Tickets) != 0 {
			t.Fatalf("late payment with a taken seat = %+v; want refunded", o)
		}
		if p, _ := h.fake.Payment(taken.Payment.ProviderPaymentID); p.Status != payments.StatusRefunded {
			t.Fatalf("provider payment = %s, want refunded", p.Status)
		}
		// The refund's own webhook arrives and changes nothing more.
		h.fake.DeliverDue(context.Background())
		h.checkInvariants()
	})
}

// TestRefundRetried: the provider is down when the refund is due; the
// retrier issues it later.
func TestRefundRetried(t *testing.T) {
	h := newHarness(t, newMemStore())
	id := h.createEvent(smallVenue())
	var hold holdJSON
	h.req("POST", fmt.Sprintf("/api/events/%d/holds", id), "fan", map[string]any{"zone": "FLOOR", "quantity": 4}).want(t, 201).decode(t, &hold)
	var co checkoutJSON
	h.req("POST", "/api/holds/"+hold.ID+"/checkout", "fan", nil).want(t, 200).decode(t, &co)
	h.clock.Advance(time.Hour)
	h.req("POST", fmt.Sprintf("/api/events/%d/holds", id), "other", map[string]any{"zone": "FLOOR", "quantity": 4}).want(t, 201)
	h.payOnPage(co.Payment.PayURL)
	h.fake.SetUnavailable(true)
	if _, refused := h.fake.DeliverDue(context.Background()); refused != 1 {
		t.Fatalf("succeeded webhook should fail while the refund cannot be made; refused %d", refused)
	}
	h.fake.SetUnavailable(false)
	if n, err := h.svc.RetryRefunds(context.Background()); err != nil || n != 1 {
		t.Fatalf("RetryRefunds = %d, %v", n, err)
	}
	if o, _ := h.store.Order(context.Background(), co.Order.ID, ""); o.Status != booking.OrderRefunded {
		t.Fatalf("order = %s, want refunded", o.Status)
	}
	h.checkInvariants()
}

// TestSoldOutCommand: once every place is sold, event reads and failed holds
// tell the gateway to switch the room to sold out.
func TestSoldOutCommand(t *testing.T) {
	h := newHarness(t, newMemStore())
	id := h.createEvent(map[string]any{
		"name": "Tiny", "starts_at": "2026-04-01T20:00:00Z",
		"sections": []map[string]any{{"id": "A", "rows": 1, "seats_per_row": 2, "price": "10.00"}},
	})
	var hold holdJSON
	h.req("POST", fmt.Sprintf("/api/events/%d/holds", id), "fan", map[string]any{"section": "A", "quantity": 2}).want(t, 201).decode(t, &hold)
	r := h.req("POST", fmt.Sprintf("/api/events/%d/holds", id), "late", map[string]any{"section": "A", "quantity": 1}).want(t, 409)
	if r.header.Get(booking.CommandHeader) != "" {
		t.Fatal("held (not sold) seats announced a sell-out")
	}
	var co checkoutJSON
	h.req("POST", "/api/holds/"+hold.ID+"/checkout", "fan", nil).want(t, 200).decode(t, &co)
	h.payOnPage(co.Payment.PayURL)
	h.fake.DeliverDue(context.Background())
	h.clock.Advance(2 * time.Second) // past the seat map's one-second cache
	r = h.req("GET", fmt.Sprintf("/api/events/%d", id), "late", nil).want(t, 200)
	if r.header.Get(booking.CommandHeader) != booking.CommandSoldOut {
		t.Fatalf("sold-out event: command %q", r.header.Get(booking.CommandHeader))
	}
	r = h.req("POST", fmt.Sprintf("/api/events/%d/holds", id), "late", map[string]any{"section": "A", "quantity": 1}).want(t, 409)
	if r.header.Get(booking.CommandHeader) != booking.CommandSoldOut {
		t.Fatalf("hold on a sold-out event: command %q", r.header.Get(booking.CommandHeader))
	}
}

// TestFifthSeatOverHTTP: the cap answers 422 whichever way the fifth seat is
// asked for.
func TestFifthSeatOverHTTP(t *testing.T) {
	h := newHarness(t, newMemStore())
	id := h.createEvent(smallVenue())
	path := fmt.Sprintf("/api/events/%d/holds", id)
	h.req("POST", path, "fan", map[string]any{"seats": []string{"A-1-1", "A-1-2"}}).want(t, 201)
	h.req("POST", path, "fan", map[string]any{"zone": "FLOOR", "quantity": 2}).want(t, 201)
	for _, body := range []map[string]any{
		{"seats": []string{"A-2-5"}},
		{"section": "A", "quantity": 1},
		{"zone": "FLOOR", "quantity": 1},
	} {
		r := h.req("POST", path, "fan", body).want(t, http.StatusUnprocessableEntity)
		if r.json(t)["error"] != booking.CodeOverLimit {
			t.Fatalf("fifth seat: %s", r.body)
		}
	}
}

// TestDeclinedPayment: a declined card releases the seats at once.
func TestDeclinedPayment(t *testing.T) {
	h := newHarness(t, newMemStore())
	id := h.createEvent(smallVenue())
	var hold holdJSON
	h.req("POST", fmt.Sprintf("/api/events/%d/holds", id), "fan", map[string]any{"seats": []string{"A-1-1"}}).want(t, 201).decode(t, &hold)
	var co checkoutJSON
	h.req("POST", "/api/holds/"+hold.ID+"/checkout", "fan", nil).want(t, 200).decode(t, &co)
	resp, err := http.PostForm(co.Payment.PayURL, map[string][]string{"action": {"decline"}})
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	h.fake.DeliverDue(context.Background())
	var o booking.Order
	h.req("GET", "/api/orders/"+co.Order.ID, "fan", nil).want(t, 200).decode(t, &o)
	if o.Status != booking.OrderPaymentFailed || o.Payment.Status != booking.PaymentFailed {
		t.Fatalf("declined order = %+v", o)
	}
	h.req("POST", fmt.Sprintf("/api/events/%d/holds", id), "rival", map[string]any{"seats": []string{"A-1-1"}}).want(t, 201)
	h.checkInvariants()
}

// TestCheckoutFailedOnOurSideSaysRetry: a checkout the payment provider
// fails (it is down) answers 503 and tells the gateway to requeue the fan
// (retry), who held seats through no fault of theirs; once the provider is
// back the same checkout goes through, without the command. A customer's own
// error (a hold that is not theirs, one that does not exist, an expired one)
// never says retry.
func TestCheckoutFailedOnOurSideSaysRetry(t *testing.T) {
	h := newHarness(t, newMemStore())
	id := h.createEvent(smallVenue())
	var hold holdJSON
	h.req("POST", fmt.Sprintf("/api/events/%d/holds", id), "fan", map[string]any{"zone": "FLOOR", "quantity": 2}).want(t, 201).decode(t, &hold)
	h.fake.SetUnavailable(true)
	r := h.req("POST", "/api/holds/"+hold.ID+"/checkout", "fan", nil).want(t, 503)
	if got := r.header.Get(booking.CommandHeader); got != booking.CommandRetry {
		t.Errorf("a checkout the provider failed says %q, want %q", got, booking.CommandRetry)
	}
	h.fake.SetUnavailable(false)
	r = h.req("POST", "/api/holds/"+hold.ID+"/checkout", "fan", nil).want(t, 200)
	if got := r.header.Get(booking.CommandHeader); got != "" {
		t.Errorf("a checkout that went through says %q", got)
	}
	var other holdJSON
	h.req("POST", fmt.Sprintf("/api/events/%d/holds", id), "other", map[string]any{"zone": "FLOOR", "quantity": 1}).want(t, 201).decode(t, &other)
	for _, c := range []struct {
		name, customer, hold string
	}{
		{"another customer's hold", "fan", other.ID},
		{"no such hold", "fan", "hld_missing"},
	} {
		r := h.req("POST", "/api/holds/"+c.hold+"/checkout", c.customer, nil)
		if r.status < 400 || r.status >= 500 {
			t.Errorf("%s: %d, want a 4xx", c.name, r.status)
		}
		if got := r.header.Get(booking.CommandHeader); got != "" {
			t.Errorf("%s: the customer's own error says %q", c.name, got)
		}
	}
	h.clock.Advance(time.Hour)
	r = h.req("POST", "/api/holds/"+other.ID+"/checkout", "other", nil)
	if r.status < 400 || r.status >= 500 || r.header.Get(booking.CommandHeader) != "" {
		t.Errorf("an expired hold: %d, command %q; want a 4xx and none", r.status, r.header.Get(booking.CommandHeader))
	}
	h.checkInvariants()
}

// TestCheckoutFaultNoRetry: with the rehearsal fault FaultNoRetry a checkout
// the provider failed still answers 503, but never asks for a requeue.
func TestCheckoutFaultNoRetry(t *testing.T) {
	h := newHarness(t, newMemStore())
	id := h.createEvent(smallVenue())
	var hold holdJSON
	h.req("POST", fmt.Sprintf("/api/events/%d/holds", id), "fan", map[string]any{"zone": "FLOOR", "quantity": 1}).want(t, 201).decode(t, &hold)
	api := booking.NewAPI(booking.APIConfig{
		Service: h.svc, Auth: booking.NewStaticPasses(keysOf(h.key), "onsale", h.clock), FaultNoRetry: true,
	})
	h.fake.SetUnavailable(true)
	req := httptest.NewRequest("POST", "/api/holds/"+hold.ID+"/checkout", nil)
	req.Header.Set(booking.PassHeader, h.pass("fan"))
	rec := httptest.NewRecorder()
	api.ServeHTTP(rec, req)
	if rec.Code != http.StatusServiceUnavailable || rec.Header().Get(booking.CommandHeader) != "" {
		t.Fatalf("a failed checkout under FaultNoRetry: %d, command %q; want 503 and none", rec.Code, rec.Header().Get(booking.CommandHeader))
	}
}
