package booking_test

import (
	"context"
	"fmt"
	"net/http"
	"sync"
	"testing"
	"time"

	"github.com/foyer-dev/foyer/booking"
	"github.com/foyer-dev/foyer/booking/pgstore"
	"github.com/foyer-dev/foyer/booking/pgstore/pgtest"
)

// TestDatabaseRestartDuringCheckouts cuts the database away while customers
// check out and pay: they get 503 with Retry-After, never a 500; payments
// whose webhooks bounced are applied when the provider delivers again; and
// the invariants hold.
func TestDatabaseRestartDuringCheckouts(t *testing.T) {
	dbURL, proxy := pgtest.NewCuttableDatabase(t)
	store, err := pgstore.Open(context.Background(), dbURL, pgstore.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(store.Close)
	h := newHarness(t, store)
	id := h.createEvent(smallVenue())

	const fans = 8
	holds := make([]holdJSON, fans)
	for i := range fans {
		h.req("POST", fmt.Sprintf("/api/events/%d/holds", id), fan(i), map[string]any{"section": "A", "quantity": 1}).
			want(t, 201).decode(t, &holds[i])
	}

	// Checkouts race the cut.
	results := make([]response, fans)
	var wg sync.WaitGroup
	for i := range fans {
		wg.Go(func() {
			if i >= fans/2 {
				time.Sleep(20 * time.Millisecond)
			}
			results[i] = h.req("POST", "/api/holds/"+holds[i].ID+"/checkout", fan(i), nil)
		})
	}
	time.Sleep(10 * time.Millisecond)
	proxy.Cut()
	wg.Wait()
	unavailable := 0
	for i, r := range results {
		switch r.status {
		case http.StatusOK:
		case http.StatusServiceUnavailable:
			unavailable++
			if r.header.Get("Retry-After") == "" || r.json(t)["error"] != booking.CodeUnavailable {
				t.Fatalf("fan %d: 503 without Retry-After or code: %v %s", i, r.header, r.body)
			}
		default:
			t.Fatalf("fan %d: checkout during the outage answered %d: %s", i, r.status, r.body)
		}
	}
	if unavailable == 0 {
		t.Fatal("no checkout saw the outage")
	}
	r := h.req("POST", fmt.Sprintf("/api/events/%d/holds", id), "newcomer", map[string]any{"section": "A", "quantity": 1})
	if r.status != http.StatusServiceUnavailable || r.header.Get("Retry-After") == "" {
		t.Fatalf("hold during the outage: %d %v %s", r.status, r.header, r.body)
	}

	// Back up: the clients retry and pay. The first webhooks bounce off a
	// second outage; the provider delivers them again later.
	proxy.Restore()
	orders := make([]checkoutJSON, fans)
	for i := range fans {
		retry(t, func() response { return h.req("POST", "/api/holds/"+holds[i].ID+"/checkout", fan(i), nil) }).decode(t, &orders[i])
		h.payOnPage(orders[i].Payment.PayURL)
	}
	proxy.Cut()
	if accepted, _ := h.fake.DeliverDue(context.Background()); accepted == 2*fans {
		t.Fatal("every webhook was accepted with the database down")
	}
	proxy.Restore()
	h.clock.Advance(time.Minute) // past the provider's retry backoff
	deadline := time.Now().Add(20 * time.Second)
	for h.fake.Pending() > 0 && time.Now().Before(deadline) {
		h.clock.Advance(time.Minute)
		h.fake.DeliverDue(context.Background())
	}
	if h.fake.Pending() > 0 {
		t.Fatalf("%d webhooks never accepted after the restart", h.fake.Pending())
	}
	// The webhooks were served by the background pool: idle connections of
	// the requests' pool cut by the second outage fail once each, as
	// unavailable, when next used. A client retries, and so does the test.
	for i, co := range orders {
		var o booking.Order
		var err error
		for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(10 * time.Millisecond) {
			o, err = store.Order(context.Background(), co.Order.ID, "")
			if !booking.IsRetryable(err) || time.Now().After(deadline) {
				break
			}
		}
		if err != nil || o.Status != booking.OrderPaid || len(o.Tickets) != 1 {
			t.Fatalf("fan %d paid, order = %+v, %v", i, o, err)
		}
	}
	h.checkInvariants()
}

func fan(i int) string { return fmt.Sprintf("fan-%d", i) }

// retry repeats a request while it answers 503, as a client honouring
// Retry-After would, for at most ten seconds.
func retry(t *testing.T, do func() response) response {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for {
		r := do()
		if r.status != http.StatusServiceUnavailable || time.Now().After(deadline) {
			return r.want(t, http.StatusOK)
		}
		time.Sleep(100 * time.Millisecond)
	}
}
