package pgledger_test

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/foyer-dev/foyer/booking/payments"
	"github.com/foyer-dev/foyer/booking/payments/pgledger"
	"github.com/foyer-dev/foyer/booking/pgstore/pgtest"
)

// TestFakeOutlivesItsProcess builds a Fake, takes a payment and pays it while
// the receiver refuses webhooks, then drops the Fake and builds another on
// the same ledger, as after a crash: the payment, its idempotency key, its
// pay page and its undelivered webhooks are all still there, and the new Fake
// retries them with backoff until they are accepted.
func TestFakeOutlivesItsProcess(t *testing.T) {
	ledgers := map[string]func(t *testing.T) payments.Ledger{
		"memory": func(*testing.T) payments.Ledger { return payments.NewMemoryLedger() },
		"postgres": func(t *testing.T) payments.Ledger {
			pool, err := pgxpool.New(context.Background(), pgtest.NewDatabase(t))
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(pool.Close)
			l, err := pgledger.Open(context.Background(), pool)
			if err != nil {
				t.Fatal(err)
			}
			// Opening twice is what a second process does.
			if _, err := pgledger.Open(context.Background(), pool); err != nil {
				t.Fatal(err)
			}
			return l
		},
	}
	for name, open := range ledgers {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			outlive(t, open(t))
		})
	}
}

func outlive(t *testing.T, ledger payments.Ledger) {
	ctx := context.Background()
	secret := []byte("whsec")
	var accept atomic.Bool
	var mu sync.Mutex
	got := map[string]int{}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		if !accept.Load() {
			w.WriteHeader(http.StatusServiceUnavailable)
			return
		}
		mu.Lock()
		got[string(body)]++
		mu.Unlock()
	}))
	defer srv.Close()
	now := time.Date(2026, 3, 1, 10, 0, 0, 0, time.UTC)
	clock := func() time.Time { return now }
	newFake := func() *payments.Fake {
		return payments.NewFake(payments.FakeConfig{Secret: secret, WebhookURL: srv.URL, PublicURL: "http://shop", Now: clock, Ledger: ledger})
	}
	params := payments.CreateParams{Amount: 1200, Currency: "EUR", Metadata: map[string]string{"order_id": "o1"}}
	before := newFake()
	p, err := before.CreatePayment(ctx, params, "key-1")
	if err != nil {
		t.Fatal(err)
	}
	unpaid, err := before.CreatePayment(ctx, params, "key-2")
	if err != nil {
		t.Fatal(err)
	}
	if err := before.Pay(p.ID); err != nil {
		t.Fatal(err)
	}
	if a, r := before.DeliverDue(ctx); a != 0 || r != 2 {
		t.Fatalf("first attempts = %d accepted, %d refused; want 0, 2", a, r)
	}

	after := newFake() // the process died; a new one opens the same ledger
	if again, err := after.CreatePayment(ctx, params, "key-1"); err != nil || again.ID != p.ID {
		t.Fatalf("idempotent replay after restart = %+v, %v", again, err)
	}
	if got, err := after.RetrievePayment(ctx, p.ID); err != nil || got.Status != payments.StatusSucceeded {
		t.Fatalf("retrieve after restart = %+v, %v", got, err)
	}
	if _, err := after.RetrievePayment(ctx, "pi_nope"); !errors.Is(err, payments.ErrNotFound) {
		t.Fatalf("retrieve unknown = %v", err)
	}
	rec := httptest.NewRecorder()
	after.Handler().ServeHTTP(rec, httptest.NewRequest("GET", "/pay/"+unpaid.ID, nil))
	if rec.Code != http.StatusOK {
		t.Fatalf("pay page of a payment made before the restart = %d", rec.Code)
	}
	accept.Store(true)
	if a, _ := after.DeliverDue(ctx); a != 0 {
		t.Fatal("retried before the backoff")
	}
	now = now.Add(payments.Backoff(1))
	if a, r := after.DeliverDue(ctx); a != 2 || r != 0 || after.Pending() != 0 {
		t.Fatalf("retry = %d accepted, %d refused, %d pending", a, r, after.Pending())
	}
	if len(got) != 2 {
		t.Fatalf("receiver got %d distinct events, want processing and succeeded", len(got))
	}

	// Cancel wins over an unpaid payment; paying afterwards changes nothing.
	c, err := after.CancelPayment(ctx, unpaid.ID)
	if err != nil || c.Status != payments.StatusCanceled {
		t.Fatalf("cancel = %+v, %v", c, err)
	}
	if err := after.Pay(unpaid.ID); err != nil {
		t.Fatal(err)
	}
	if c, _ := after.RetrievePayment(ctx, unpaid.ID); c.Status != payments.StatusCanceled {
		t.Fatalf("paid after cancel: %s", c.Status)
	}
	// Cancel loses to a payment already made, and says so.
	if c, err := after.CancelPayment(ctx, p.ID); err != nil || c.Status != payments.StatusSucceeded {
		t.Fatalf("cancel of a paid payment = %+v, %v", c, err)
	}
}

// TestLedgerSharedByTwoProviders runs two Fakes on one PostgreSQL ledger, as
// two booking processes on one database do: a key used on both at once opens
// one payment, and webhooks sent by both at once reach the receiver once
// each.
func TestLedgerSharedByTwoProviders(t *testing.T) {
	ctx := context.Background()
	pool, err := pgxpool.New(ctx, pgtest.NewDatabase(t))
	if err != nil {
		t.Fatal(err)
	}
	defer pool.Close()
	ledger, err := pgledger.Open(ctx, pool)
	if err != nil {
		t.Fatal(err)
	}
	var mu sync.Mutex
	got := map[string]int{}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		mu.Lock()
		got[string(body)]++
		mu.Unlock()
	}))
	defer srv.Close()
	var fakes [2]*payments.Fake
	for i := range fakes {
		fakes[i] = payments.NewFake(payments.FakeConfig{Secret: []byte("s"), WebhookURL: srv.URL, PublicURL: "http://shop", Ledger: ledger,
			Delivery: payments.DeliveryOptions{Concurrent: true}})
	}
	const n = 10
	ids := make([]string, 2*n)
	var wg sync.WaitGroup
	for i := range 2 * n {
		wg.Go(func() {
			p, err := fakes[i%2].CreatePayment(ctx, payments.CreateParams{Amount: 100, Currency: "EUR"}, fmt.Sprintf("key-%d", i/2))
			if err != nil {
				t.Error(err)
				return
			}
			ids[i] = p.ID
		})
	}
	wg.Wait()
	for i := 0; i < 2*n; i += 2 {
		if ids[i] != ids[i+1] || ids[i] == "" {
			t.Fatalf("one key, two payments: %q and %q", ids[i], ids[i+1])
		}
		if err := fakes[0].Pay(ids[i]); err != nil {
			t.Fatal(err)
		}
	}
	for _, f := range fakes {
		wg.Go(func() { f.DeliverDue(ctx) })
	}
	wg.Wait()
	if fakes[0].Pending() != 0 || len(got) != 2*n {
		t.Fatalf("%d pending, %d distinct events received; want 0, %d", fakes[0].Pending(), len(got), 2*n)
	}
	for body, c := range got {
		if c != 1 {
			t.Fatalf("event delivered %d times: %s", c, body)
		}
	}
}
