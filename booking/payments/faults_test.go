package payments

import (
	"context"
	"errors"
	"fmt"
	"testing"
)

// TestFakeFaultsFailAShareOfPayments: with no faults no payment fails; with
// FailShare a share of them does, each for its first FailAttempts attempts
// and then goes through, the same payments whatever the order of the calls.
func TestFakeFaultsFailAShareOfPayments(t *testing.T) {
	ctx := context.Background()
	params := CreateParams{Amount: 1200, Currency: "EUR"}
	const payments = 2000
	count := func(f *Fake) (failed map[string]bool) {
		failed = map[string]bool{}
		for i := range payments {
			key := fmt.Sprintf("order-%d", i)
			if _, err := f.CreatePayment(ctx, params, key); err != nil {
				if !errors.Is(err, ErrUnavailable) {
					t.Fatalf("%s: %v, want ErrUnavailable", key, err)
				}
				failed[key] = true
			}
		}
		return failed
	}
	if failed := count(NewFake(FakeConfig{Secret: []byte("s")})); len(failed) != 0 {
		t.Fatalf("%d payments failed with no faults", len(failed))
	}
	f := NewFake(FakeConfig{Secret: []byte("s"), Faults: Faults{FailShare: 0.02, FailAttempts: 3}})
	failed := count(f)
	if n := len(failed); n < 20 || n > 60 { // 40 expected
		t.Fatalf("%d of %d payments failed, want about 2%%", n, payments)
	}
	for key := range failed {
		for attempt := 2; attempt <= 3; attempt++ {
			if _, err := f.CreatePayment(ctx, params, key); !errors.Is(err, ErrUnavailable) {
				t.Fatalf("%s attempt %d: %v, want ErrUnavailable", key, attempt, err)
			}
		}
		if _, err := f.CreatePayment(ctx, params, key); err != nil {
			t.Fatalf("%s attempt 4: %v, want the payment", key, err)
		}
	}
	again := count(NewFake(FakeConfig{Secret: []byte("s"), Faults: Faults{FailShare: 0.02, FailAttempts: 3}}))
	if len(again) != len(failed) {
		t.Fatalf("another fake failed %d payments, the first %d: the keys alone decide", len(again), len(failed))
	}
	for key := range again {
		if !failed[key] {
			t.Fatalf("%s failed on one fake only", key)
		}
	}
}
