package booking_test

import (
	"context"
	"fmt"
	"net/http"
	"testing"
	"time"

	"github.com/foyer-dev/foyer/booking"
	"github.com/foyer-dev/foyer/booking/payments"
	"github.com/foyer-dev/foyer/waitingroom/pass"
)

// idempotencyCounter is what both stores offer to count their records.
type idempotencyCounter interface {
	IdempotencyRecords(ctx context.Context) (int, error)
}

func idempotencyRecords(t *testing.T, s booking.Store) int {
	t.Helper()
	n, err := s.(idempotencyCounter).IdempotencyRecords(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	return n
}

// TestUntrustedInputLeavesNothing: webhooks that are not signed by the
// provider and passes that are not for this room or from this gateway are
// refused before anything is stored, an idempotency record included.
func TestUntrustedInputLeavesNothing(t *testing.T) {
	backends(t, func(t *testing.T, newStore func(*testing.T) booking.Store) {
		h := newHarness(t, newStore(t))
		id := h.createEvent(smallVenue())
		holds := fmt.Sprintf("/api/events/%d/holds", id)
		body := `{"id":"evt_forged","type":"payment_intent.succeeded","data":{"object":{"id":"pi_x","amount":100}}}`
		now := h.clock.Now()
		other, err := pass.GenerateSigner()
		if err != nil {
			t.Fatal(err)
		}
		passAs := func(k *pass.Signer, iss, room string) string {
			tok, err := k.Sign(pass.Claims{Room: room, Subject: "fan", IssuedAt: now, ExpiresAt: now.Add(time.Hour)}, iss)
			if err != nil {
				t.Fatal(err)
			}
			return tok
		}
		cases := []struct {
			name    string
			method  string
			path    string
			body    string
			headers []string
			status  int
			code    string
		}{
			{"unsigned webhook", "POST", "/api/payments/webhook", body, nil, 400, booking.CodeInvalidSignature},
			{"webhook signed with another secret", "POST", "/api/payments/webhook", body,
				[]string{payments.SignatureHeader, payments.Sign([]byte("guess"), now, []byte(body))}, 400, booking.CodeInvalidSignature},
			{"stale webhook signature", "POST", "/api/payments/webhook", body,
				[]string{payments.SignatureHeader, payments.Sign([]byte("whsec_test"), now.Add(-10*time.Minute), []byte(body))}, 400, booking.CodeInvalidSignature},
			{"signature of another body", "POST", "/api/payments/webhook", body,
				[]string{payments.SignatureHeader, payments.Sign([]byte("whsec_test"), now, []byte(body+" "))}, 400, booking.CodeInvalidSignature},
			{"garbage signature", "POST", "/api/payments/webhook", body, []string{payments.SignatureHeader, "t=x,v1=zz"}, 400, booking.CodeInvalidSignature},
			{"pass for another room", "POST", holds, `{"section":"A","quantity":1}`,
				[]string{booking.PassHeader, passAs(h.key, pass.DefaultIssuer, "another-room")}, 401, booking.CodeUnauthorized},
			{"pass from another issuer", "POST", holds, `{"section":"A","quantity":1}`,
				[]string{booking.PassHeader, passAs(h.key, "another-gateway", "onsale")}, 401, booking.CodeUnauthorized},
			{"pass signed by another key", "POST", holds, `{"section":"A","quantity":1}`,
				[]string{booking.PassHeader, passAs(other, pass.DefaultIssuer, "onsale")}, 401, booking.CodeUnauthorized},
		}
		before := snapshot(t, h, id)
		for i, c := range cases {
			t.Run(c.name, func(t *testing.T) {
				// Every request carries its own fresh key: a stored claim
				// would show up as one more record.
				headers := append([]string{booking.IdempotencyHeader, fmt.Sprintf("key-%d", i)}, c.headers...)
				r := h.req(c.method, c.path, "", c.body, headers...)
				if r.status != c.status || r.json(t)["error"] != c.code || r.json(t)["message"] == "" {
					t.Fatalf("status %d %s, want %d %s", r.status, r.body, c.status, c.code)
				}
				if n := idempotencyRecords(t, h.store); n != 0 {
					t.Fatalf("%d idempotency records after a refused request; want 0", n)
				}
			})
		}
		if after := snapshot(t, h, id); fmt.Sprint(before) != fmt.Sprint(after) {
			t.Fatalf("refused input changed state:\nbefore %+v\nafter  %+v", before, after)
		}
	})
}

// TestReplayKeepsHeaders: a replayed response carries the headers of the
// first one that matter: Location of a new hold, and the sold-out command
// the gateway must act on even if the first answer was lost on the way.
func TestReplayKeepsHeaders(t *testing.T) {
	backends(t, func(t *testing.T, newStore func(*testing.T) booking.Store) {
		h := newHarness(t, newStore(t))
		id := h.createEvent(map[string]any{
			"name": "One place", "starts_at": "2026-04-01T20:00:00Z",
			"zones": []map[string]any{{"id": "FLOOR", "capacity": 1, "price": "80.00"}},
		})
		holds := fmt.Sprintf("/api/events/%d/holds", id)
		cases := []struct {
			name     string
			customer string
			prepare  func()
			status   int
			header   string
			want     func(r response) string
		}{
			{"Location of a new hold", "first", nil, http.StatusCreated, "Location",
				func(r response) string { return "/api/holds/" + r.json(t)["id"].(string) }},
			{"sold-out command", "second", func() {
				// first buys the only place.
				var hold holdJSON
				h.req("POST", holds, "first", map[string]any{"zone": "FLOOR", "quantity": 1}, booking.IdempotencyHeader, "k").decode(t, &hold)
				var co checkoutJSON
				h.req("POST", "/api/holds/"+hold.ID+"/checkout", "first", nil).want(t, 200).decode(t, &co)
				h.payOnPage(co.Payment.PayURL)
				if a, _ := h.fake.DeliverDue(context.Background()); a == 0 {
					t.Fatal("the payment's webhook was not accepted")
				}
				h.clock.Advance(2 * time.Second) // past the seat map's cache
			}, http.StatusConflict, booking.CommandHeader, func(response) string { return booking.CommandSoldOut }},
		}
		for _, c := range cases {
			t.Run(c.name, func(t *testing.T) {
				if c.prepare != nil {
					c.prepare()
				}
				first := h.req("POST", holds, c.customer, map[string]any{"zone": "FLOOR", "quantity": 1}, booking.IdempotencyHeader, "k").want(t, c.status)
				want := c.want(first)
				if got := first.header.Get(c.header); got != want {
					t.Fatalf("first response %s = %q, want %q", c.header, got, want)
				}
				again := h.req("POST", holds, c.customer, map[string]any{"zone": "FLOOR", "quantity": 1}, booking.IdempotencyHeader, "k").want(t, c.status)
				if again.header.Get("Idempotent-Replayed") != "true" || string(again.body) != string(first.body) {
					t.Fatalf("second response is not a replay: %v %s", again.header, again.body)
				}
				if got := again.header.Get(c.header); got != want {
					t.Fatalf("replayed %s = %q, want %q", c.header, got, want)
				}
			})
		}
	})
}

// TestIdempotencyRecordsExpire: records live 24 hours (as at Stripe), and
// the pruner, run on the service's clock, removes them after that.
func TestIdempotencyRecordsExpire(t *testing.T) {
	backends(t, func(t *testing.T, newStore func(*testing.T) booking.Store) {
		h := newHarness(t, newStore(t))
		id := h.createEvent(smallVenue())
		holds := fmt.Sprintf("/api/events/%d/holds", id)
		for i := range 3 {
			h.req("POST", holds, fan(i), map[string]any{"section": "A", "quantity": 1}, booking.IdempotencyHeader, "k").want(t, http.StatusCreated)
		}
		h.clock.Advance(booking.IdempotencyKeyTTL - time.Second)
		if n, err := h.svc.PruneIdempotency(context.Background()); err != nil || n != 0 {
			t.Fatalf("pruned %d, %v before the lifetime ended", n, err)
		}
		if n := idempotencyRecords(t, h.store); n != 3 {
			t.Fatalf("%d records, want 3", n)
		}
		h.clock.Advance(time.Second)
		if n, err := h.svc.PruneIdempotency(context.Background()); err != nil || n != 3 {
			t.Fatalf("pruned %d, %v at the end of the lifetime; want 3", n, err)
		}
		if n := idempotencyRecords(t, h.store); n != 0 {
			t.Fatalf("%d records after pruning, want 0", n)
		}
	})
}
