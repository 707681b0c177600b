package payments

import (
	"context"
	"time"
)

// Ledger keeps a Fake's state: its payments, its idempotency records and the
// queue of webhooks not yet acknowledged. A real provider outlives the shop's
// processes; a Fake on a durable ledger does too, so a payment made before a
// crash still has its pay page afterwards and its webhook is still delivered.
//
// NewMemoryLedger keeps the state in memory (it dies with the process);
// package pgledger keeps it in PostgreSQL.
type Ledger interface {
	// Update runs fn as one atomic step: its writes all happen or none do.
	// fn reads before it writes and returns an error to write nothing.
	Update(ctx context.Context, fn func(tx LedgerTx) error) error
	// Payment reads one payment, or reports false.
	Payment(ctx context.Context, id string) (Payment, bool, error)
	// Claim hands out up to limit deliveries due at now, oldest first, and
	// moves each one's due time to now+lease: a sender that dies mid-send
	// leaves them to be sent again when the lease ends.
	Claim(ctx context.Context, now time.Time, lease time.Duration, limit int) ([]Delivery, error)
	// Acknowledge forgets a delivery the receiver accepted.
	Acknowledge(ctx context.Context, id string) error
	// Reschedule records a refused attempt and when to try again.
	Reschedule(ctx context.Context, id string, due time.Time, attempts int) error
	// Pending counts the deliveries not yet acknowledged.
	Pending(ctx context.Context) (int, error)
}

// LedgerTx is the view of a Ledger inside Update.
type LedgerTx interface {
	// Idempotent returns the record stored under an idempotency key. Within
	// a transaction the key is reserved: a concurrent Update for the same key
	// waits for this one.
	Idempotent(key string) (Record, bool, error)
	SaveIdempotent(key string, r Record) error
	// Payment reads a payment for update: a concurrent Update of the same
	// payment waits for this one.
	Payment(id string) (Payment, bool, error)
	SavePayment(p Payment) error
	Enqueue(d Delivery) error
}

// Record is what an idempotency key replays: the first call's fingerprint
// and result.
type Record struct {
	Fingerprint string  `json:"fingerprint"`
	Payment     Payment `json:"payment"`
	Refund      Refund  `json:"refund"`
}

// Delivery is one webhook delivery: an event body and when to send it.
type Delivery struct {
	ID       string
	EventID  string
	Body     []byte
	Due      time.Time
	Attempts int
	// Seq orders deliveries by the time they were queued.
	Seq int64
}
