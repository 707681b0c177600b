package payments

import (
	"bytes"
	"context"
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"log/slog"
	"maps"
	"net/http"
	"slices"
	"sync"
	"time"
)

// DeliveryOptions make webhook delivery as awkward as a real provider's can
// be. The zero value delivers each event once, in order, as soon as asked.
type DeliveryOptions struct {
	// Delay holds every event back this long before its first attempt.
	Delay time.Duration
	// Copies delivers every event this many times (0 or 1: once).
	Copies int
	// OutOfOrder sends each batch of due deliveries newest first.
	OutOfOrder bool
	// Concurrent sends a batch's deliveries all at once.
	Concurrent bool
}

// FakeConfig configures a Fake.
type FakeConfig struct {
	// Secret signs webhooks; the receiver verifies with the same secret.
	Secret []byte
	// WebhookURL receives the events.
	WebhookURL string
	// PublicURL is the base of the pay page links handed to customers.
	PublicURL string
	// Now is the provider's clock; it stamps signatures and delays.
	Now func() time.Time
	// Client sends webhooks. Default: a client with a 10 s timeout.
	Client   *http.Client
	Delivery DeliveryOptions
	Logger   *slog.Logger
}

// Fake is an in-process payment provider. It is safe for concurrent use.
type Fake struct {
	cfg FakeConfig

	mu          sync.Mutex
	delivery    DeliveryOptions
	unavailable bool
	payments    map[string]*Payment
	idempotency map[string]idempotent
	queue       []*delivery
	sent        int
}

type idempotent struct {
	fingerprint string
	payment     Payment
	refund      Refund
}

type delivery struct {
	eventID  string
	body     []byte
	due      time.Time
	attempts int
}

var _ Provider = (*Fake)(nil)

// NewFake returns a fake provider.
func NewFake(cfg FakeConfig) *Fake {
	if cfg.Now == nil {
		cfg.Now = time.Now
	}
	if cfg.Client == nil {
		cfg.Client = &http.Client{Timeout: 10 * time.Second}
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.New(slog.DiscardHandler)
	}
	return &Fake{
		cfg: cfg, delivery: cfg.Delivery,
		payments: map[string]*Payment{}, idempotency: map[string]idempotent{},
	}
}

// SetDelivery changes how webhooks are delivered from now on.
func (f *Fake) SetDelivery(o DeliveryOptions) {
	f.mu.Lock()
	f.delivery = o
	f.mu.Unlock()
}

// SetUnavailable makes API calls fail with ErrUnavailable, as in an outage.
func (f *Fake) SetUnavailable(down bool) {
	f.mu.Lock()
	f.unavailable = down
	f.mu.Unlock()
}

// claim applies Stripe's idempotency rules. It reports a stored result, or
// reserves nothing and lets the caller store one with remember.
func (f *Fake) claim(op, key string, params any) (fingerprint string, prev idempotent, seen bool, err error) {
	if key == "" || len(key) > MaxIdempotencyKeyLength {
		return "", idempotent{}, false, ErrInvalidIdempotencyKey
	}
	b, _ := json.Marshal(params)
	sum := sha256.Sum256(append([]byte(op+"\n"), b...))
	fingerprint = hex.EncodeToString(sum[:])
	prev, seen = f.idempotency[key]
	if seen && prev.fingerprint != fingerprint {
		return "", idempotent{}, false, ErrIdempotencyKeyReused
	}
	return fingerprint, prev, seen, nil
}

// CreatePayment opens a payment the customer completes on the pay page.
func (f *Fake) CreatePayment(_ context.Context, p CreateParams, key string) (Payment, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.unavailable {
		return Payment{}, ErrUnavailable
	}
	fp, prev, seen, err := f.claim("create", key, p)
	if err != nil {
		return Payment{}, err
	}
	if seen {
		return clonePayment(prev.payment), nil
	}
	if p.Amount <= 0 || len(p.Currency) != 3 {
		return Payment{}, fmt.Errorf("amount must be positive and currency a 3-letter code")
	}
	id := "pi_" + randomHex(12)
	pay := &Payment{
		ID: id, Amount: p.Amount, Currency: p.Currency, Status: StatusRequiresPayment,
		Metadata: maps.Clone(p.Metadata), PayURL: f.cfg.PublicURL + "/pay/" + id, ReturnURL: p.ReturnURL,
	}
	f.payments[id] = pay
	f.idempotency[key] = idempotent{fingerprint: fp, payment: clonePayment(*pay)}
	return clonePayment(*pay), nil
}

// Refund returns a succeeded payment's money.
func (f *Fake) Refund(_ context.Context, p RefundParams, key string) (Refund, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.unavailable {
		return Refund{}, ErrUnavailable
	}
	fp, prev, seen, err := f.claim("refund", key, p)
	if err != nil {
		return Refund{}, err
	}
	if seen {
		return prev.refund, nil
	}
	pay, ok := f.payments[p.PaymentID]
	if !ok {
		return Refund{}, ErrNotFound
	}
	if pay.Status != StatusSucceeded {
		return Refund{}, fmt.Errorf("payment %s is %s, only a succeeded payment can be refunded", pay.ID, pay.Status)
	}
	amount := p.Amount
	if amount == 0 {
		amount = pay.Amount
	}
	pay.Status = StatusRefunded
	r := Refund{ID: "re_" + randomHex(12), PaymentID: pay.ID, Amount: amount, Status: StatusSucceeded}
	f.idempotency[key] = idempotent{fingerprint: fp, refund: r}
	f.enqueueLocked(EventChargeRefunded, *pay)
	return r, nil
}

// Pay completes a payment as if the customer had paid: a processing event
// and a succeeded event are queued for delivery.
func (f *Fake) Pay(id string) error {
	return f.settle(id, StatusProcessing, StatusSucceeded)
}

// Decline fails a payment as if the card had been refused.
func (f *Fake) Decline(id string) error {
	return f.settle(id, StatusFailed)
}

// settle moves an open payment through statuses, queueing the event of each.
// Settling a payment twice does nothing, as on a real pay page.
func (f *Fake) settle(id string, statuses ...string) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	pay, ok := f.payments[id]
	if !ok {
		return ErrNotFound
	}
	if pay.Status != StatusRequiresPayment {
		return nil
	}
	for _, st := range statuses {
		pay.Status = st
		f.enqueueLocked(eventTypes[st], *pay)
	}
	return nil
}

// eventTypes names the webhook event of each payment status.
var eventTypes = map[string]string{
	StatusProcessing: EventPaymentProcessing,
	StatusSucceeded:  EventPaymentSucceeded,
	StatusFailed:     EventPaymentFailed,
}

// Payment returns a payment as the provider sees it.
func (f *Fake) Payment(id string) (Payment, bool) {
	f.mu.Lock()
	defer f.mu.Unlock()
	p, ok := f.payments[id]
	if !ok {
		return Payment{}, false
	}
	return clonePayment(*p), true
}

func (f *Fake) enqueueLocked(typ string, obj Payment) {
	object, _ := json.Marshal(obj)
	ev := Event{ID: "evt_" + randomHex(12), Type: typ, Created: f.cfg.Now().Unix()}
	ev.Data.Object = object
	body, _ := json.Marshal(ev)
	due := f.cfg.Now().Add(f.delivery.Delay)
	for range max(1, f.delivery.Copies) {
		f.queue = append(f.queue, &delivery{eventID: ev.ID, body: body, due: due})
	}
}

// Pending is the number of deliveries not yet accepted by the receiver.
func (f *Fake) Pending() int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return len(f.queue)
}

// Delivered is the number of deliveries the receiver accepted.
func (f *Fake) Delivered() int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.sent
}

// DeliverDue sends every delivery that is due, once. Deliveries the receiver
// does not accept with a 2xx stay queued and are retried with backoff, like a
// real provider's retries. It reports how many were accepted and refused.
func (f *Fake) DeliverDue(ctx context.Context) (accepted, refused int) {
	f.mu.Lock()
	now := f.cfg.Now()
	opts := f.delivery
	var batch []*delivery
	rest := f.queue[:0:0]
	for _, d := range f.queue {
		if !now.Before(d.due) {
			batch = append(batch, d)
		} else {
			rest = append(rest, d)
		}
	}
	f.queue = rest
	f.mu.Unlock()
	if opts.OutOfOrder {
		slices.Reverse(batch)
	}
	results := make([]bool, len(batch))
	if opts.Concurrent {
		var wg sync.WaitGroup
		for i, d := range batch {
			wg.Go(func() { results[i] = f.send(ctx, d, now) })
		}
		wg.Wait()
	} else {
		for i, d := range batch {
			results[i] = f.send(ctx, d, now)
		}
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	for i, d := range batch {
		if results[i] {
			accepted++
			f.sent++
			continue
		}
		refused++
		d.attempts++
		d.due = now.Add(min(time.Duration(1<<min(d.attempts, 6))*time.Second, time.Minute))
		f.queue = append(f.queue, d)
	}
	return accepted, refused
}

func (f *Fake) send(ctx context.Context, d *delivery, now time.Time) bool {
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, f.cfg.WebhookURL, bytes.NewReader(d.body))
	if err != nil {
		return false
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set(SignatureHeader, Sign(f.cfg.Secret, now, d.body))
	resp, err := f.cfg.Client.Do(req)
	if err != nil {
		f.cfg.Logger.Warn("webhook delivery failed", "event", d.eventID, "error", err)
		return false
	}
	resp.Body.Close()
	if resp.StatusCode/100 != 2 {
		f.cfg.Logger.Warn("webhook refused", "event", d.eventID, "status", resp.StatusCode)
		return false
	}
	return true
}

// Run delivers due webhooks every interval until ctx ends.
func (f *Fake) Run(ctx context.Context, interval time.Duration) {
	t := time.NewTicker(interval)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
			f.DeliverDue(ctx)
		}
	}
}

func clonePayment(p Payment) Payment {
	p.Metadata = maps.Clone(p.Metadata)
	return p
}

func randomHex(n int) string {
	b := make([]byte, n)
	_, _ = rand.Read(b)
	return hex.EncodeToString(b)
}
