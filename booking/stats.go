package booking

import (
	"context"
	"time"
)

// Stats is a snapshot of the store for monitoring: what a metrics scrape
// reports. Every count is over the whole store, so processes sharing one
// database report the same figures.
type Stats struct {
	// ActiveHolds counts holds still active and not yet expired at the
	// snapshot's time; HeldPlaces the places they hold.
	ActiveHolds int
	HeldPlaces  int
	// Orders and Payments count by status.
	Orders   map[OrderStatus]int
	Payments map[PaymentStatus]int
	// Tickets issued and not cancelled by a refund, and how many tickets
	// were delivered.
	Tickets    int
	Deliveries int
	// PaidWithoutTickets counts paid orders that have no ticket: always 0
	// unless something is badly wrong.
	PaidWithoutTickets int
	// OutboxPending counts unpublished outbox messages; OutboxOldest is the
	// creation time of the oldest of them (zero when none is pending).
	OutboxPending int
	OutboxOldest  time.Time
	// IdempotencyRecords counts saved idempotency keys (bounded by pruning).
	IdempotencyRecords int
}

// StatsReader is implemented by stores that can report Stats. Both bundled
// stores do; it is not part of Store so that a store may leave it out.
type StatsReader interface {
	Stats(ctx context.Context, now time.Time) (Stats, error)
}
