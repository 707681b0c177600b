package booking

import (
	"context"
	"time"
)

// Store is the inventory: the only place where seats change hands. Every method
// that depends on time takes now as a parameter, so expiry is decided by the
// caller's clock and tests can move it. Domain failures come back as *Error
// with a Kind; an unreachable database comes back as KindUnavailable.
//
// Implementations: memstore (embedded, one process) and pgstore (PostgreSQL,
// the source of truth). Both pass inventorytest.Run.
type Store interface {
	// CreateEvent stores a validated venue description and all its seats.
	CreateEvent(ctx context.Context, spec EventSpec, now time.Time) (Event, error)
	// Events lists events, soonest first.
	Events(ctx context.Context) ([]Event, error)
	// Event returns one event, or KindNotFound.
	Event(ctx context.Context, id int64) (Event, error)
	// Inventory returns the effective state of every seat that is not
	// available, and the occupancy of every zone.
	Inventory(ctx context.Context, eventID int64, now time.Time) ([]SeatState, []ZoneState, error)

	// Hold takes the places a request asks for, all or none, and counts them
	// against the customer's cap in the same transaction.
	Hold(ctx context.Context, req HoldRequest, now time.Time) (Hold, error)
	// GetHold returns a hold of the customer's, or KindNotFound.
	GetHold(ctx context.Context, id, customerID string) (Hold, error)
	// ReleaseHold returns an active hold's places. Releasing a hold that is
	// already released or expired succeeds and changes nothing.
	ReleaseHold(ctx context.Context, id, customerID string, now time.Time) (Hold, error)

	// BeginCheckout extends an active, unexpired hold to extendTo and creates
	// its order and payment records, or returns the ones an earlier call made.
	// A new order's payment is stored with its create request pinned: what
	// request makes of the new order (nil pins nothing), in the same
	// transaction, so that the pin costs no round trip of its own; request
	// runs inside that transaction (or lock) and must not use the store. The order
	// returned carries the pinned request in Payment.CreateRequest, nil for
	// an order that has none yet.
	BeginCheckout(ctx context.Context, holdID, customerID string, extendTo, now time.Time, request func(Order) ([]byte, error)) (Order, error)
	// PinPaymentRequest stores req as the provider create request of an
	// order's payment unless one is stored already, and returns the stored
	// one. A provider refuses an idempotency key sent again with other
	// parameters; processes configured differently, or a new release, send
	// the pinned request and so always the first one.
	PinPaymentRequest(ctx context.Context, orderID string, req []byte) ([]byte, error)
	// AttachPayment records the provider's id and pay page for a payment,
	// unless one is recorded already, and returns the order as it stands
	// afterwards: with the payment attached first, whichever call made it.
	AttachPayment(ctx context.Context, orderID, providerPaymentID, payURL string) (Order, error)
	// ConfirmPayment marks an order paid, writing its tickets and an outbox
	// message in one transaction. A hold that expired is taken again if its
	// places are free; if not, the order becomes refund_pending. A confirmation
	// whose ProviderEventID was seen before changes nothing. It returns the
	// order as it stands afterwards.
	ConfirmPayment(ctx context.Context, c PaymentConfirmation, now time.Time) (Order, error)
	// FailPayment records that the provider declined an order's payment: a
	// pending order becomes payment_failed and its hold is released. Like
	// ConfirmPayment it applies each provider event once, and it never
	// touches an order that is no longer pending.
	FailPayment(ctx context.Context, orderID, providerEventID string, now time.Time) (Order, error)
	// RefundOrder records a refund, atomically: the order becomes refunded
	// for the request's reason and its payment refunded; a paid order's
	// tickets are cancelled, its places go back on sale (and off the
	// customer's cap) and an order.refunded outbox message is written, all
	// in one transaction. RefundAllowed says which orders may be refunded;
	// a repeat for the same reason changes nothing and says so. Concurrent
	// refunds of one order queue on it: one refunds, the others repeat.
	RefundOrder(ctx context.Context, req RefundRequest, now time.Time) (RefundResult, error)
	// Order returns an order with its tickets and their deliveries. An empty
	// customerID reads any order (for workers), otherwise only the customer's.
	Order(ctx context.Context, id, customerID string) (Order, error)
	// OrdersAwaitingRefund lists orders left in refund_pending, for retries.
	OrdersAwaitingRefund(ctx context.Context, limit int) ([]Order, error)
	// OrdersPendingPayment lists up to limit orders still pending_payment
	// that were created before createdBefore, oldest first, for the
	// reconciler.
	OrdersPendingPayment(ctx context.Context, createdBefore time.Time, limit int) ([]Order, error)

	// SweepExpiredHolds returns the places of up to limit holds that expired
	// before now, and reports how many it swept.
	SweepExpiredHolds(ctx context.Context, now time.Time, limit int) (int, error)

	// PendingOutbox returns unpublished outbox messages, oldest first.
	PendingOutbox(ctx context.Context, limit int) ([]OutboxMessage, error)
	// MarkPublished records that the relay has published these messages.
	MarkPublished(ctx context.Context, ids []int64, now time.Time) error
	// UndeliveredOutbox returns messages published before publishedBefore
	// that no consumer has marked delivered, oldest first: the ones a stream
	// that lost its data must be given again.
	UndeliveredOutbox(ctx context.Context, publishedBefore time.Time, limit int) ([]OutboxMessage, error)
	// MarkDelivered records that a consumer has handled these messages.
	MarkDelivered(ctx context.Context, ids []int64, now time.Time) error
	// RecordDelivery stores a ticket's delivery once; it reports false when
	// the ticket had already been delivered (and keeps the first record).
	RecordDelivery(ctx context.Context, d Delivery) (bool, error)

	// BeginIdempotent claims an idempotency key; see IdempotencyResult.
	BeginIdempotent(ctx context.Context, key IdempotencyKey, now time.Time) (IdempotencyResult, error)
	// CompleteIdempotent saves the response of a claimed key for replay.
	CompleteIdempotent(ctx context.Context, key IdempotencyKey, resp SavedResponse) error
	// AbandonIdempotent forgets a claimed key whose request did not finish, so
	// the client may retry it.
	AbandonIdempotent(ctx context.Context, key IdempotencyKey) error
	// PruneIdempotency deletes up to limit idempotency records (finished or
	// not) created at or before cutoff, and reports how many it deleted.
	PruneIdempotency(ctx context.Context, cutoff time.Time, limit int) (int, error)

	// CheckInvariants verifies, across all events, that sold + held never
	// exceeds capacity, that every seat has at most one ticket and that no
	// paid order is without tickets.
	CheckInvariants(ctx context.Context) (InvariantReport, error)

	// Close releases the store's resources.
	Close()
}

// DefaultMaxPerCustomer is the cap on seats per customer per event.
const DefaultMaxPerCustomer = 4
