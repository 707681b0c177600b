package pgledger_test

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"testing"

	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/foyer-dev/foyer/booking/payments"
	"github.com/foyer-dev/foyer/booking/payments/pgledger"
	"github.com/foyer-dev/foyer/booking/pgstore/pgtest"
)

// TestConcurrentCreatesWithOneKey sends the same create, under one
// idempotency key, from many goroutines through three Fakes that each have
// their own connection pool on one database, as three processes would. The
// first create wins and every other one waits for it and replays it: one
// payment per key, the same one for every caller, and never an error. A
// create under a key already taken with other parameters is refused as a
// reuse, never reported as an outage, and opens nothing.
func TestConcurrentCreatesWithOneKey(t *testing.T) {
	ctx := context.Background()
	db := pgtest.NewDatabase(t)
	var fakes []*payments.Fake
	var pool *pgxpool.Pool
	for i := range 3 {
		p, err := pgxpool.New(ctx, db)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(p.Close)
		l, err := pgledger.Open(ctx, p)
		if err != nil {
			t.Fatal(err)
		}
		pool = p
		fakes = append(fakes, payments.NewFake(payments.FakeConfig{
			Secret: []byte("whsec"), PublicURL: fmt.Sprintf("http://process-%d", i), Ledger: l,
		}))
	}
	const keys, callers = 4, 16
	params := func(key int, returnURL string) payments.CreateParams {
		return payments.CreateParams{Amount: 1200, Currency: "EUR", ReturnURL: returnURL,
			Metadata: map[string]string{"order_id": fmt.Sprintf("o%d", key)}}
	}
	got := make([][callers]payments.Payment, keys)
	errs := make([][callers]error, keys)
	var wg sync.WaitGroup
	for k := range keys {
		for c := range callers {
			wg.Go(func() {
				got[k][c], errs[k][c] = fakes[c%len(fakes)].CreatePayment(ctx, params(k, "http://shop/orders/o"), fmt.Sprintf("checkout-%d", k))
			})
		}
	}
	wg.Wait()
	for k := range keys {
		for c := range callers {
			if errs[k][c] != nil {
				t.Fatalf("key %d, caller %d: %v", k, c, errs[k][c])
			}
			if got[k][c].ID != got[k][0].ID || got[k][c].PayURL != got[k][0].PayURL {
				t.Fatalf("key %d: callers got %+v and %+v", k, got[k][0], got[k][c])
			}
		}
	}
	count := func(table string) int {
		var n int
		if err := pool.QueryRow(ctx, "SELECT count(*) FROM "+table).Scan(&n); err != nil {
			t.Fatal(err)
		}
		return n
	}
	if p, k := count("fakepay_payments"), count("fakepay_idempotency"); p != keys || k != keys {
		t.Fatalf("%d payments and %d idempotency records for %d keys", p, k, keys)
	}

	// Two different requests race for one fresh key.
	var mu sync.Mutex
	winners := map[string]payments.CreateParams{}
	for c := range callers {
		wg.Go(func() {
			want := params(9, fmt.Sprintf("http://process-%d/orders/o9", c%2))
			p, err := fakes[c%len(fakes)].CreatePayment(ctx, want, "checkout-9")
			switch {
			case errors.Is(err, payments.ErrIdempotencyKeyReused):
			case err != nil:
				t.Errorf("caller %d: %v", c, err)
			default:
				mu.Lock()
				winners[p.ID] = want
				mu.Unlock()
				if p.ReturnURL != want.ReturnURL {
					t.Errorf("caller %d sent %s and was given a payment for %s", c, want.ReturnURL, p.ReturnURL)
				}
			}
		})
	}
	wg.Wait()
	if len(winners) != 1 || count("fakepay_payments") != keys+1 {
		t.Fatalf("one key with two requests opened %d payments (%d stored); want 1", len(winners), count("fakepay_payments")-keys)
	}
}
