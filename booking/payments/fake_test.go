package payments

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"
)

func TestFakeIdempotency(t *testing.T) {
	f := NewFake(FakeConfig{Secret: []byte("s"), PublicURL: "http://shop"})
	ctx := context.Background()
	params := CreateParams{Amount: 1200, Currency: "EUR", Metadata: map[string]string{"order_id": "o1"}}
	p1, err := f.CreatePayment(ctx, params, "k1")
	if err != nil {
		t.Fatal(err)
	}
	if p1.PayURL != "http://shop/pay/"+p1.ID || p1.Status != StatusRequiresPayment {
		t.Fatalf("payment = %+v", p1)
	}
	p2, err := f.CreatePayment(ctx, params, "k1")
	if err != nil || p2.ID != p1.ID {
		t.Fatalf("replay = %+v, %v; want the same payment", p2, err)
	}
	params.Amount = 1300
	if _, err := f.CreatePayment(ctx, params, "k1"); !errors.Is(err, ErrIdempotencyKeyReused) {
		t.Fatalf("reused key = %v", err)
	}
	if _, err := f.CreatePayment(ctx, params, strings.Repeat("k", 256)); !errors.Is(err, ErrInvalidIdempotencyKey) {
		t.Fatalf("long key = %v", err)
	}
	if _, err := f.CreatePayment(ctx, params, strings.Repeat("k", 255)); err != nil {
		t.Fatalf("255-char key = %v", err)
	}
	if _, err := f.Refund(ctx, RefundParams{PaymentID: p1.ID}, "r1"); err == nil {
		t.Fatal("refunded an unpaid payment")
	}
	if err := f.Pay(p1.ID); err != nil {
		t.Fatal(err)
	}
	r1, err := f.Refund(ctx, RefundParams{PaymentID: p1.ID}, "r2")
	if err != nil || r1.Amount != 1200 {
		t.Fatalf("refund = %+v, %v", r1, err)
	}
	r2, err := f.Refund(ctx, RefundParams{PaymentID: p1.ID}, "r2")
	if err != nil || r2.ID != r1.ID {
		t.Fatalf("refund replay = %+v, %v", r2, err)
	}
	f.SetUnavailable(true)
	if _, err := f.CreatePayment(ctx, params, "k9"); !errors.Is(err, ErrUnavailable) {
		t.Fatalf("outage = %v", err)
	}
}

func TestFakeDeliveries(t *testing.T) {
	secret := []byte("whsec")
	var mu sync.Mutex
	var got []string
	fail := true
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		if err := Verify(secret, r.Header.Get(SignatureHeader), body, time.Now(), DefaultTolerance); err != nil {
			t.Errorf("bad signature: %v", err)
		}
		mu.Lock()
		defer mu.Unlock()
		if fail {
			w.WriteHeader(http.StatusServiceUnavailable)
			return
		}
		got = append(got, string(body))
	}))
	defer srv.Close()
	now := time.Now()
	clock := func() time.Time { return now }
	f := NewFake(FakeConfig{Secret: secret, WebhookURL: srv.URL, Now: clock,
		Delivery: DeliveryOptions{Delay: time.Minute, Copies: 2, OutOfOrder: true, Concurrent: true}})
	ctx := context.Background()
	p, _ := f.CreatePayment(ctx, CreateParams{Amount: 100, Currency: "EUR"}, "k")
	if err := f.Pay(p.ID); err != nil {
		t.Fatal(err)
	}
	if a, r := f.DeliverDue(ctx); a+r != 0 {
		t.Fatalf("delivered before the delay: %d, %d", a, r)
	}
	now = now.Add(time.Minute)
	if a, r := f.DeliverDue(ctx); a != 0 || r != 4 {
		t.Fatalf("first attempt = %d accepted, %d refused; want 0, 4", a, r)
	}
	mu.Lock()
	fail = false
	mu.Unlock()
	if a, _ := f.DeliverDue(ctx); a != 0 {
		t.Fatal("retried before the backoff")
	}
	now = now.Add(time.Minute)
	if a, r := f.DeliverDue(ctx); a != 4 || r != 0 || f.Pending() != 0 {
		t.Fatalf("retry = %d accepted, %d refused, %d pending", a, r, f.Pending())
	}
	if len(got) != 4 {
		t.Fatalf("receiver got %d deliveries", len(got))
	}
}

func TestPayPage(t *testing.T) {
	f := NewFake(FakeConfig{Secret: []byte("s"), PublicURL: "http://shop"})
	p, _ := f.CreatePayment(context.Background(), CreateParams{Amount: 12000, Currency: "EUR", ReturnURL: "http://shop/orders/o1"}, "k")
	h := f.Handler()
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, httptest.NewRequest("GET", "/pay/"+p.ID, nil))
	if rec.Code != 200 || !strings.Contains(rec.Body.String(), "120.00 EUR") {
		t.Fatalf("pay page = %d %s", rec.Code, rec.Body)
	}
	req := httptest.NewRequest("POST", "/pay/"+p.ID, strings.NewReader("action=pay"))
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	rec = httptest.NewRecorder()
	h.ServeHTTP(rec, req)
	if rec.Code != http.StatusSeeOther || rec.Header().Get("Location") != "http://shop/orders/o1" {
		t.Fatalf("pay = %d %v", rec.Code, rec.Header())
	}
	if got, _ := f.Payment(p.ID); got.Status != StatusSucceeded || f.Pending() != 2 {
		t.Fatalf("after paying: %+v, %d pending", got, f.Pending())
	}
	rec = httptest.NewRecorder()
	h.ServeHTTP(rec, httptest.NewRequest("GET", "/pay/pi_nope", nil))
	if rec.Code != 404 {
		t.Fatalf("unknown payment = %d", rec.Code)
	}
}

func TestBackoff(t *testing.T) {
	want := []time.Duration{time.Second, 2 * time.Second, 4 * time.Second, 8 * time.Second, 16 * time.Second, 32 * time.Second, time.Minute, time.Minute, time.Minute}
	for n, w := range want {
		if got := Backoff(n); got != w {
			t.Errorf("Backoff(%d) = %s, want %s", n, got, w)
		}
	}
	if Backoff(1000) != time.Minute {
		t.Error("backoff is not capped at a minute")
	}
}

// downLedger is a ledger whose store cannot be reached.
type downLedger struct{ Ledger }

var errDown = errors.New("connection refused")

func (downLedger) Update(context.Context, func(LedgerTx) error) error { return errDown }
func (downLedger) Payment(context.Context, string) (Payment, bool, error) {
	return Payment{}, false, errDown
}

// TestFakeLedgerDown: with its store unreachable the provider says it is
// unavailable (retry), never that a payment does not exist.
func TestFakeLedgerDown(t *testing.T) {
	f := NewFake(FakeConfig{Secret: []byte("s"), PublicURL: "http://shop", Ledger: downLedger{}})
	if _, err := f.CreatePayment(context.Background(), CreateParams{Amount: 100, Currency: "EUR"}, "k"); !errors.Is(err, ErrUnavailable) {
		t.Fatalf("create = %v, want ErrUnavailable", err)
	}
	if _, err := f.RetrievePayment(context.Background(), "pi_1"); !errors.Is(err, ErrUnavailable) {
		t.Fatalf("retrieve = %v, want ErrUnavailable", err)
	}
	h := f.Handler()
	for _, req := range []*http.Request{
		httptest.NewRequest("GET", "/pay/pi_1", nil),
		httptest.NewRequest("POST", "/pay/pi_1", strings.NewReader("action=pay")),
	} {
		req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, req)
		if rec.Code != http.StatusServiceUnavailable || rec.Header().Get("Retry-After") == "" {
			t.Fatalf("%s pay page with the ledger down = %d %v", req.Method, rec.Code, rec.Header())
		}
	}
}

// TestFakeDeliversPaymentsSideBySide: while the receiver is slow with one
// payment's webhook, the other payments' webhooks arrive; one payment's
// events still come one at a time, in order.
func TestFakeDeliversPaymentsSideBySide(t *testing.T) {
	secret := []byte("whsec")
	release := make(chan struct{})
	var mu sync.Mutex
	inFlight := map[string]int{} // by payment
	var order []string           // event types of the slow payment, as received
	others := make(chan string, 64)
	var slow string
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		var ev Event
		if err := json.Unmarshal(body, &ev); err != nil {
			t.Errorf("webhook body: %v", err)
			return
		}
		p, err := ev.Payment()
		if err != nil {
			t.Errorf("webhook payment: %v", err)
			return
		}
		mu.Lock()
		inFlight[p.ID]++
		if inFlight[p.ID] > 1 {
			t.Errorf("payment %s: two webhooks in flight at once", p.ID)
		}
		isSlow := p.ID == slow
		if isSlow {
			order = append(order, ev.Type)
		}
		mu.Unlock()
		if isSlow {
			<-release
		} else {
			others <- p.ID
		}
		mu.Lock()
		inFlight[p.ID]--
		mu.Unlock()
	}))
	defer srv.Close()
	f := NewFake(FakeConfig{Secret: secret, WebhookURL: srv.URL, Delivery: DeliveryOptions{Copies: 2}})
	ctx := context.Background()
	var ids []string
	for i := range 4 {
		p, err := f.CreatePayment(ctx, CreateParams{Amount: 100, Currency: "EUR"}, fmt.Sprintf("k%d", i))
		if err != nil {
			t.Fatal(err)
		}
		if err := f.Pay(p.ID); err != nil {
			t.Fatal(err)
		}
		ids = append(ids, p.ID)
	}
	slow = ids[0]
	done := make(chan [2]int)
	go func() {
		a, r := f.DeliverDue(ctx)
		done <- [2]int{a, r}
	}()
	// The three other payments' webhooks, while the first payment's is
	// held up.
	seen := map[string]bool{}
	for len(seen) < 3 {
		select {
		case id := <-others:
			seen[id] = true
		case <-time.After(10 * time.Second):
			close(release) // so that the receiver can close
			<-done
			t.Fatal("the other payments' webhooks waited behind the slow one")
		}
	}
	close(release)
	got := <-done
	if got[1] != 0 || got[0] == 0 || got[0]%4 != 0 {
		t.Fatalf("delivered %v, want all accepted, as many for each payment", got)
	}
	if len(order) != got[0]/4 {
		t.Fatalf("the slow payment's webhooks: %v of %d", order, got[0])
	}
}
