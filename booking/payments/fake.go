package payments

import (
	"bytes"
	"cmp"
	"context"
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"maps"
	"net/http"
	"slices"
	"sync"
	"time"

	"github.com/foyer-dev/foyer/internal/loop"
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
	// Ledger keeps payments and undelivered webhooks. Default: memory, lost
	// with the process.
	Ledger Ledger
	// Lease is how long a claimed delivery is left to its sender before it
	// is sent again (after a crash mid-send). Default: 30 s.
	Lease  time.Duration
	Logger *slog.Logger
	// Faults fail a share of payments on purpose, for tests and rehearsals;
	// none in the zero value.
	Faults Faults
}

// Fake is an in-process payment provider. It is safe for concurrent use, and
// several Fakes on one durable Ledger act as one provider.
type Fake struct {
	cfg    FakeConfig
	ledger Ledger
	faults *faultState

	mu          sync.Mutex
	delivery    DeliveryOptions
	unavailable bool
	sent        int
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
	if cfg.Ledger == nil {
		cfg.Ledger = NewMemoryLedger()
	}
	if cfg.Lease <= 0 {
		cfg.Lease = 30 * time.Second
	}
	return &Fake{cfg: cfg, ledger: cfg.Ledger, delivery: cfg.Delivery, faults: newFaultState(cfg.Faults)}
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

func (f *Fake) options() (DeliveryOptions, bool) {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.delivery, f.unavailable
}

// unavailable wraps a ledger failure: to the caller the provider is down,
// and the call is safe to retry with the same idempotency key.
func unavailable(err error) error {
	if err == nil || errors.Is(err, ErrUnavailable) {
		return err
	}
	return fmt.Errorf("%w: %v", ErrUnavailable, err)
}

// update runs fn in one ledger step. An error fn returns is the caller's
// answer as is; any other (the ledger could not begin or commit) means the
// provider is unavailable, and the call is safe to retry.
func (f *Fake) update(ctx context.Context, fn func(tx LedgerTx) error) error {
	var fnErr error
	err := f.ledger.Update(ctx, func(tx LedgerTx) error {
		fnErr = fn(tx)
		return fnErr
	})
	if err != nil && err != fnErr { // identity: was it fn's own error?
		return unavailable(err)
	}
	return err
}

// claim applies Stripe's idempotency rules inside tx: it reports a stored
// result, or the fingerprint to store the new one under.
func claim(tx LedgerTx, op, key string, params any) (fingerprint string, prev Record, seen bool, err error) {
	if key == "" || len(key) > MaxIdempotencyKeyLength {
		return "", Record{}, false, ErrInvalidIdempotencyKey
	}
	b, _ := json.Marshal(params)
	sum := sha256.Sum256(append([]byte(op+"\n"), b...))
	fingerprint = hex.EncodeToString(sum[:])
	prev, seen, err = tx.Idempotent(key)
	if err != nil {
		return "", Record{}, false, unavailable(err)
	}
	if seen && prev.Fingerprint != fingerprint {
		return "", Record{}, false, ErrIdempotencyKeyReused
	}
	return fingerprint, prev, seen, nil
}

// once runs an idempotent call op in one ledger step: a key seen before
// answers its stored record; else fn makes the record, stored under the key
// in the same step.
func (f *Fake) once(ctx context.Context, op, key string, params any, fn func(tx LedgerTx) (Record, error)) (Record, error) {
	var out Record
	err := f.update(ctx, func(tx LedgerTx) error {
		fp, prev, seen, err := claim(tx, op, key, params)
		if err != nil {
			return err
		}
		if seen {
			out = prev
			return nil
		}
		if out, err = fn(tx); err != nil {
			return err
		}
		out.Fingerprint = fp
		return unavailable(tx.SaveIdempotent(key, out))
	})
	return out, err
}

// CreatePayment opens a payment the customer completes on the pay page.
func (f *Fake) CreatePayment(ctx context.Context, p CreateParams, key string) (Payment, error) {
	if _, down := f.options(); down || f.faults.fails(key) {
		return Payment{}, ErrUnavailable
	}
	rec, err := f.once(ctx, "create", key, p, func(tx LedgerTx) (Record, error) {
		if p.Amount <= 0 || len(p.Currency) != 3 {
			return Record{}, errors.New("amount must be positive and currency a 3-letter code")
		}
		id := "pi_" + randomHex(12)
		out := Payment{
			ID: id, Amount: p.Amount, Currency: p.Currency, Status: StatusRequiresPayment,
			Metadata: maps.Clone(p.Metadata), PayURL: f.cfg.PublicURL + "/pay/" + id, ReturnURL: p.ReturnURL,
		}
		return Record{Payment: out}, unavailable(tx.SavePayment(out))
	})
	if err != nil {
		return Payment{}, err
	}
	return clonePayment(rec.Payment), nil
}

// Refund returns a succeeded payment's money.
func (f *Fake) Refund(ctx context.Context, p RefundParams, key string) (Refund, error) {
	opts, down := f.options()
	if down {
		return Refund{}, ErrUnavailable
	}
	rec, err := f.once(ctx, "refund", key, p, func(tx LedgerTx) (Record, error) {
		pay, ok, err := tx.Payment(p.PaymentID)
		if err != nil {
			return Record{}, unavailable(err)
		}
		if !ok {
			return Record{}, ErrNotFound
		}
		if pay.Status != StatusSucceeded {
			return Record{}, fmt.Errorf("payment %s is %s, only a succeeded payment can be refunded", pay.ID, pay.Status)
		}
		amount := p.Amount
		if amount == 0 {
			amount = pay.Amount
		}
		pay.Status, pay.AmountRefunded = StatusRefunded, amount
		out := Refund{ID: "re_" + randomHex(12), PaymentID: pay.ID, Amount: amount, Status: StatusSucceeded}
		if err := tx.SavePayment(pay); err != nil {
			return Record{}, unavailable(err)
		}
		return Record{Refund: out}, f.enqueue(tx, opts, EventChargeRefunded, pay)
	})
	return rec.Refund, err
}

// RetrievePayment returns a payment as the provider holds it: how a shop
// finds out what became of a payment whose webhook never came.
func (f *Fake) RetrievePayment(ctx context.Context, id string) (Payment, error) {
	if _, down := f.options(); down {
		return Payment{}, ErrUnavailable
	}
	p, ok, err := f.ledger.Payment(ctx, id)
	if err != nil {
		return Payment{}, unavailable(err)
	}
	if !ok {
		return Payment{}, ErrNotFound
	}
	return p, nil
}

// CancelPayment closes a payment the customer has not paid, so it can no
// longer be paid. A payment that was settled meanwhile is returned as it
// stands: the caller sees which of the two won.
func (f *Fake) CancelPayment(ctx context.Context, id string) (Payment, error) {
	if _, down := f.options(); down {
		return Payment{}, ErrUnavailable
	}
	return f.settle(ctx, id, StatusCanceled)
}

// RefundPayment gives a succeeded payment's money back in full, as a
// provider's dashboard does when the organiser refunds a buyer: a
// charge.refunded event is queued for delivery. Its idempotency key is the
// payment's own, so refunding a payment twice refunds it once.
func (f *Fake) RefundPayment(id string) (Refund, error) {
	return f.Refund(context.Background(), RefundParams{PaymentID: id}, "dashboard-refund-"+id)
}

// Pay completes a payment as if the customer had paid: a processing event
// and a succeeded event are queued for delivery.
func (f *Fake) Pay(id string) error {
	_, err := f.settle(context.Background(), id, StatusProcessing, StatusSucceeded)
	return err
}

// Decline fails a payment as if the card had been refused.
func (f *Fake) Decline(id string) error {
	_, err := f.settle(context.Background(), id, StatusFailed)
	return err
}

// settle moves an open payment through statuses, queueing the event of each,
// in one step: the status and its webhooks are stored together. Settling a
// payment twice does nothing, as on a real pay page.
func (f *Fake) settle(ctx context.Context, id string, statuses ...string) (Payment, error) {
	opts, _ := f.options()
	var out Payment
	err := f.update(ctx, func(tx LedgerTx) error {
		pay, ok, err := tx.Payment(id)
		if err != nil {
			return unavailable(err)
		}
		if !ok {
			return ErrNotFound
		}
		out = pay
		if pay.Status != StatusRequiresPayment {
			return nil
		}
		for _, st := range statuses {
			pay.Status = st
			if err := f.enqueue(tx, opts, eventTypes[st], pay); err != nil {
				return err
			}
		}
		out = pay
		return unavailable(tx.SavePayment(pay))
	})
	return out, err
}

// eventTypes names the webhook event of each payment status.
var eventTypes = map[string]string{
	StatusProcessing: EventPaymentProcessing,
	StatusSucceeded:  EventPaymentSucceeded,
	StatusFailed:     EventPaymentFailed,
	StatusCanceled:   EventPaymentCanceled,
}

// Payment returns a payment as the provider sees it.
func (f *Fake) Payment(id string) (Payment, bool) {
	p, ok, err := f.ledger.Payment(context.Background(), id)
	if err != nil {
		f.cfg.Logger.Warn("reading a payment", "payment", id, "error", err)
	}
	return p, ok
}

func (f *Fake) enqueue(tx LedgerTx, opts DeliveryOptions, typ string, obj Payment) error {
	id, body := NewEvent(typ, obj, f.cfg.Now())
	due := f.cfg.Now().Add(opts.Delay)
	for range max(1, opts.Copies) {
		if err := tx.Enqueue(Delivery{ID: "whd_" + randomHex(12), EventID: id, Body: body, Due: due}); err != nil {
			return unavailable(err)
		}
	}
	return nil
}

// Pending is the number of deliveries not yet accepted by the receiver.
func (f *Fake) Pending() int {
	n, err := f.ledger.Pending(context.Background())
	if err != nil {
		f.cfg.Logger.Warn("counting webhook deliveries", "error", err)
	}
	return n
}

// Delivered is the number of deliveries this Fake saw accepted.
func (f *Fake) Delivered() int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.sent
}

// Backoff is how long a refused delivery waits before its next attempt:
// 2 s, 4 s, ... doubling to a minute, and then every minute until the
// receiver accepts it. A provider never gives up on a webhook.
func Backoff(attempts int) time.Duration {
	return min(time.Duration(1)<<min(attempts, 6)*time.Second, time.Minute)
}

// DeliverDue sends every delivery that is due, once. Deliveries the receiver
// does not accept with a 2xx stay queued and are retried with Backoff, like a
// real provider's retries. It reports how many were accepted and refused.
func (f *Fake) DeliverDue(ctx context.Context) (accepted, refused int) {
	now := f.cfg.Now()
	opts, _ := f.options()
	batch, err := f.ledger.Claim(ctx, now, f.cfg.Lease, 200)
	if err != nil {
		f.cfg.Logger.Warn("claiming webhook deliveries", "error", err)
		return 0, 0
	}
	if opts.OutOfOrder {
		slices.Reverse(batch)
	}
	results := make([]bool, len(batch))
	deliver := func(i int) {
		d := batch[i]
		results[i] = f.send(ctx, d, now)
		var err error
		if results[i] {
			err = f.ledger.Acknowledge(ctx, d.ID)
		} else {
			err = f.ledger.Reschedule(ctx, d.ID, now.Add(Backoff(d.Attempts+1)), d.Attempts+1)
		}
		if err != nil {
			// The lease runs out and the delivery is sent again: a duplicate,
			// which receivers dedupe by event id.
			f.cfg.Logger.Warn("recording a webhook delivery", "delivery", d.ID, "error", err)
		}
	}
	var wg sync.WaitGroup
	if opts.Concurrent {
		for i := range batch {
			wg.Go(func() { deliver(i) })
		}
	} else {
		// One payment's events go in the batch's order, one after another;
		// different payments' go side by side, a few at once, as a real
		// provider's do. One at a time, a busy sale's payments waited tens of
		// seconds for their webhook, and the fans' sessions with them.
		queues := byPayment(batch)
		work := make(chan []int)
		for range min(webhookSenders, len(queues)) {
			wg.Go(func() {
				for q := range work {
					for _, i := range q {
						deliver(i)
					}
				}
			})
		}
		for _, q := range queues {
			work <- q
		}
		close(work)
	}
	wg.Wait()
	for _, ok := range results {
		if ok {
			accepted++
		} else {
			refused++
		}
	}
	f.mu.Lock()
	f.sent += accepted
	f.mu.Unlock()
	return accepted, refused
}

// webhookSenders is how many payments' webhooks are sent at once.
const webhookSenders = 8

// byPayment splits a batch into one queue of indexes per payment, each in
// the batch's order; queues come in the order of their first delivery. A
// body that names no payment is a queue of its own.
func byPayment(batch []Delivery) [][]int {
	var queues [][]int
	at := map[string]int{}
	for i, d := range batch {
		var ev struct {
			Data struct {
				Object struct {
					ID      string `json:"id"`
					Payment string `json:"payment"` // a refund's payment
				} `json:"object"`
			} `json:"data"`
		}
		key := ""
		if json.Unmarshal(d.Body, &ev) == nil {
			key = cmp.Or(ev.Data.Object.Payment, ev.Data.Object.ID)
		}
		if q, ok := at[key]; ok && key != "" {
			queues[q] = append(queues[q], i)
			continue
		}
		at[key] = len(queues)
		queues = append(queues, []int{i})
	}
	return queues
}

func (f *Fake) send(ctx context.Context, d Delivery, now time.Time) bool {
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, f.cfg.WebhookURL, bytes.NewReader(d.Body))
	if err != nil {
		return false
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set(SignatureHeader, Sign(f.cfg.Secret, now, d.Body))
	resp, err := f.cfg.Client.Do(req)
	if err != nil {
		f.cfg.Logger.Warn("webhook delivery failed", "event", d.EventID, "error", err)
		return false
	}
	resp.Body.Close()
	if resp.StatusCode/100 != 2 {
		f.cfg.Logger.Warn("webhook refused", "event", d.EventID, "status", resp.StatusCode)
		return false
	}
	return true
}

// Run delivers due webhooks every interval until ctx ends.
func (f *Fake) Run(ctx context.Context, interval time.Duration) {
	loop.Every(ctx, interval, func(ctx context.Context) { f.DeliverDue(ctx) })
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
