package pgstore

import (
	"context"
	"encoding/json"
	"errors"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"

	"github.com/foyer-dev/foyer/booking"
)

// BeginCheckout extends an active hold and opens its order and payment, its
// create request pinned, once per hold, in two round trips: BEGIN and the
// reads, then the writes and COMMIT.
func (s *Store) BeginCheckout(ctx context.Context, holdID, customerID string, extendTo, now time.Time, request func(booking.Order) ([]byte, error)) (booking.Order, error) {
	var o booking.Order
	err := s.inBatchTx(ctx, func(tx *batchTx) error {
		// The hold, locked, and its order if it has one: one round trip.
		b := &pgx.Batch{}
		readHold := queueHold(b, holdID, customerID, true)
		var existing *string
		b.Queue(`SELECT (SELECT id FROM orders WHERE hold_id = $1)`, holdID).QueryRow(func(r pgx.Row) error {
			return r.Scan(&existing)
		})
		h, err := readHold(tx.SendBatch(ctx, b).Close())
		if err != nil {
			return err
		}
		if existing != nil {
			b = &pgx.Batch{}
			read := queueOrder(b, *existing, "", false)
			o, err = read(tx.commit(ctx, b))
			return err
		}
		if err := booking.CheckoutAllowed(h, now); err != nil {
			return err
		}
		e, err := s.Event(ctx, h.EventID)
		if err != nil {
			return err
		}
		// The writes need no answer from each other: one round trip.
		b = &pgx.Batch{}
		if extendTo.After(h.ExpiresAt) {
			h.ExpiresAt = extendTo.UTC()
			b.Queue(`UPDATE holds SET expires_at = $2 WHERE id = $1`, h.ID, h.ExpiresAt)
			b.Queue(`UPDATE seats SET held_until = $2 WHERE hold_id = $1 AND status = 'HELD'`, h.ID, h.ExpiresAt)
		}
		o = booking.NewOrder(h, e.Currency, now)
		if request != nil {
			if o.Payment.CreateRequest, err = request(o); err != nil {
				return err
			}
		}
		b.Queue(`
			INSERT INTO orders (id, hold_id, event_id, customer_id, status, amount_cents, currency, created_at)
			VALUES ($1, $2, $3, $4, $5, $6, $7, $8)`,
			o.ID, o.HoldID, o.EventID, o.CustomerID, string(o.Status), int64(o.Amount), o.Currency, o.CreatedAt)
		b.Queue(`
			INSERT INTO payments (id, order_id, status, amount_cents, idempotency_key, refund_key, create_request)
			VALUES ($1, $2, $3, $4, $5, $6, $7)`,
			o.Payment.ID, o.ID, string(o.Payment.Status), int64(o.Payment.Amount), o.Payment.IdempotencyKey, o.Payment.RefundKey,
			o.Payment.CreateRequest)
		return tx.commit(ctx, b)
	})
	return o, err
}

// PinPaymentRequest stores the create request unless one is stored. The row
// lock of the UPDATE queues concurrent pins; the later one sees the first
// one's request and keeps it.
func (s *Store) PinPaymentRequest(ctx context.Context, orderID string, req []byte) ([]byte, error) {
	var pinned []byte
	err := s.poolFor(ctx).QueryRow(ctx, `
		UPDATE payments SET create_request = coalesce(create_request, $2)
		WHERE order_id = $1 RETURNING create_request`, orderID, req).Scan(&pinned)
	if errors.Is(err, pgx.ErrNoRows) {
		return nil, errOrderNotFound(orderID)
	}
	if err != nil {
		return nil, classify(err)
	}
	return pinned, nil
}

// AttachPayment records the provider's payment id and pay page, once, and
// reads the order back, in one round trip: the batch is one implicit
// transaction. A concurrent attach waits on the payment's row lock until
// this one commits and then keeps what it finds; the reads, each with a
// snapshot taken after the UPDATE, see the payment attached first.
func (s *Store) AttachPayment(ctx context.Context, orderID, providerPaymentID, payURL string) (booking.Order, error) {
	b := &pgx.Batch{}
	b.Queue(`
		UPDATE payments SET provider_payment_id = coalesce(provider_payment_id, NULLIF($2, '')), pay_url = coalesce(pay_url, NULLIF($3, ''))
		WHERE order_id = $1`, orderID, providerPaymentID, payURL).Exec(func(tag pgconn.CommandTag) error {
		if tag.RowsAffected() == 0 {
			return errOrderNotFound(orderID)
		}
		return nil
	})
	read := queueOrder(b, orderID, "", false)
	o, err := read(s.poolFor(ctx).SendBatch(ctx, b).Close())
	return o, classify(err)
}

// ConfirmPayment applies a payment-succeeded event once: tickets, sold seats
// and an outbox message in one transaction, or refund_pending when the
// places are gone.
func (s *Store) ConfirmPayment(ctx context.Context, c booking.PaymentConfirmation, now time.Time) (booking.Order, error) {
	o, err := s.confirmQuick(ctx, c, now)
	if !errors.Is(err, errCareful) {
		return o, err
	}
	return s.confirmCareful(ctx, c, now)
}

// confirmQuick is the usual confirmation, in three round trips: a new event
// for an order awaiting its payment of the right amount, whose hold still
// has every place. Anything else it rolls back and answers errCareful, and
// confirmCareful, which handles every case, starts again.
func (s *Store) confirmQuick(ctx context.Context, c booking.PaymentConfirmation, now time.Time) (booking.Order, error) {
	var o booking.Order
	err := s.inBatchTx(ctx, func(tx *batchTx) error {
		b := &pgx.Batch{}
		read := queueOrder(b, c.OrderID, "", true)
		var err error
		if o, err = read(tx.SendBatch(ctx, b).Close()); err != nil {
			return err
		}
		if o.Status != booking.OrderPendingPayment || c.Amount != o.Amount {
			return errCareful
		}
		b = &pgx.Batch{}
		readConfirmation := queueConfirmation(b, c, o, now, true)
		fresh, h, stillHeld, err := readConfirmation(tx.SendBatch(ctx, b).Close())
		if err != nil {
			return err
		}
		if !fresh || h.Status != booking.HoldActive || stillHeld != len(h.Seats) {
			return errCareful
		}
		b, read, err = sellBatch(h, o, now)
		if err != nil {
			return err
		}
		o, err = read(tx.commit(ctx, b))
		return err
	})
	return o, err
}

// recordConfirmation records a provider event and, when it is new and the
// order awaits it ($5), marks the payment succeeded. It answers whether the
// event was new.
const recordConfirmation = `
	WITH ev AS (
		INSERT INTO provider_events (id, order_id, received_at) VALUES ($1, $2, $3) ON CONFLICT DO NOTHING RETURNING 1
	), pay AS (
		UPDATE payments SET status = 'succeeded', provider_payment_id = coalesce(provider_payment_id, NULLIF($4, ''))
		WHERE order_id = $2 AND $5 AND EXISTS (SELECT 1 FROM ev)
	)
	SELECT EXISTS (SELECT 1 FROM ev)`

const countStillHeld = `SELECT count(*) FROM seats WHERE hold_id = $1 AND status = 'HELD'`

// queueConfirmation queues on b what both ways of confirming read in one
// round trip: the event recorded (and the payment marked, when mark), the
// order's hold (locked, when mark) and how many of its places are still
// held. The function it returns reads, from the batch's result, whether the
// event was new, the hold and that count.
func queueConfirmation(b *pgx.Batch, c booking.PaymentConfirmation, o booking.Order, now time.Time, mark bool) func(error) (bool, booking.Hold, int, error) {
	var fresh bool
	var stillHeld int
	b.Queue(recordConfirmation, c.ProviderEventID, o.ID, now, c.ProviderPaymentID, mark).QueryRow(func(r pgx.Row) error { return r.Scan(&fresh) })
	readHold := queueHold(b, o.HoldID, o.CustomerID, mark)
	b.Queue(countStillHeld, o.HoldID).QueryRow(func(r pgx.Row) error { return r.Scan(&stillHeld) })
	return func(err error) (bool, booking.Hold, int, error) {
		h, err := readHold(err)
		return fresh, h, stillHeld, err
	}
}

// confirmCareful applies any confirmation: late, repeated, of another
// amount, or for a hold that lost places, which it takes again if it can.
func (s *Store) confirmCareful(ctx context.Context, c booking.PaymentConfirmation, now time.Time) (booking.Order, error) {
	var o booking.Order
	err := s.inTx(ctx, func(tx pgx.Tx) error {
		var err error
		// The order row lock makes concurrent deliveries of one payment queue
		// here; the provider event id then tells the second one it is late.
		o, err = loadOrderForUpdate(ctx, tx, c.OrderID)
		if err != nil {
			return err
		}
		// The event recorded, the payment marked (only when the event is
		// new and the order awaits it), the hold locked and what of it is
		// still held: one round trip. On the rare path that stops here the
		// hold's reads are wasted, never wrong.
		pending := o.Status == booking.OrderPendingPayment
		b := &pgx.Batch{}
		readConfirmation := queueConfirmation(b, c, o, now, pending)
		fresh, h, stillHeld, err := readConfirmation(tx.SendBatch(ctx, b).Close())
		if err != nil {
			return err
		}
		if !fresh || !pending {
			o, err = loadOrder(ctx, tx, o.ID, "")
			return err
		}
		secured := false
		if c.Amount == o.Amount {
			if secured, err = s.secure(ctx, tx, &h, stillHeld, c.MaxPerCustomer, now); err != nil {
				return err
			}
		}
		if !secured {
			if h.Status == booking.HoldActive {
				if err := endHold(ctx, tx, holdRowOf(h), booking.HoldExpired); err != nil {
					return err
				}
			}
			if _, err := tx.Exec(ctx, `UPDATE orders SET status = 'refund_pending' WHERE id = $1`, o.ID); err != nil {
				return err
			}
			o, err = loadOrder(ctx, tx, o.ID, "")
			return err
		}
		b, read, err := sellBatch(h, o, now)
		if err != nil {
			return err
		}
		o, err = read(tx.SendBatch(ctx, b).Close())
		return err
	})
	return o, err
}

func holdRowOf(h booking.Hold) holdRow {
	return holdRow{id: h.ID, customerID: h.CustomerID, eventID: h.EventID, quantity: h.Quantity}
}

// secure makes sure the hold's places belong to the order: still held (even
// past expiry, if nobody took them), or taken again. It runs the re-take in a
// savepoint so a failed attempt leaves no trace.
// stillHeld is the number of the hold's seats still held, read under the
// hold's lock.
func (s *Store) secure(ctx context.Context, tx pgx.Tx, h *booking.Hold, stillHeld, maxPerCustomer int, now time.Time) (bool, error) {
	if h.Status == booking.HoldActive {
		if stillHeld == len(h.Seats) {
			return true, nil
		}
		if err := endHold(ctx, tx, holdRowOf(*h), booking.HoldExpired); err != nil {
			return false, err
		}
		h.Status = booking.HoldExpired
	}
	sp, err := tx.Begin(ctx)
	if err != nil {
		return false, err
	}
	err = s.retake(ctx, sp, *h, maxPerCustomer, now)
	var be *booking.Error
	if errors.As(err, &be) {
		return false, sp.Rollback(ctx)
	}
	if err != nil {
		return false, err
	}
	h.Status = booking.HoldActive
	return true, sp.Commit(ctx)
}

// retake takes a lapsed hold's places again for its late payment.
func (s *Store) retake(ctx context.Context, tx pgx.Tx, h booking.Hold, maxPerCustomer int, now time.Time) error {
	if err := takeQuota(ctx, tx, h.EventID, h.CustomerID, h.Quantity, maxPerCustomer); err != nil {
		return err
	}
	if len(h.Seats) > 0 {
		if _, err := holdSeatList(ctx, tx, h.EventID, h.ID, h.Seats, now, now); err != nil {
			return err
		}
	}
	if h.Zone != "" {
		if err := s.takeZone(ctx, tx, h.EventID, h.Zone, h.ID, h.Quantity, now); err != nil {
			return err
		}
	}
	_, err := tx.Exec(ctx, `UPDATE holds SET status = 'active' WHERE id = $1`, h.ID)
	return err
}

// sellBatch is the batch that turns the held places into sold ones with
// tickets, writes the outbox message and reads the paid order back, in the
// caller's transaction and one round trip: none of its statements needs
// another's answer. read turns the batch's outcome into the order.
func sellBatch(h booking.Hold, o booking.Order, now time.Time) (b *pgx.Batch, read func(error) (booking.Order, error), err error) {
	o.Seats, o.Zone, o.Quantity = h.Seats, h.Zone, h.Quantity
	tickets := booking.NewTickets(o)
	ids := make([]string, len(tickets))
	seats := make([]*string, len(tickets))
	zones := make([]*string, len(tickets))
	for i, t := range tickets {
		ids[i], seats[i], zones[i] = t.ID, nullable(t.Seat), nullable(t.Zone)
	}
	payload, err := json.Marshal(booking.OrderPaidPayload{OrderID: o.ID, EventID: o.EventID, CustomerID: o.CustomerID, TicketIDs: ids})
	if err != nil {
		return nil, nil, err
	}
	b = &pgx.Batch{}
	b.Queue(`
		UPDATE seats SET status = 'SOLD', hold_id = NULL, held_until = NULL, order_id = $2
		WHERE hold_id = $1 AND status = 'HELD'`, h.ID, o.ID)
	b.Queue(`
		UPDATE zone_shards z SET held = z.held - a.quantity, sold = z.sold + a.quantity
		FROM zone_allocations a
		WHERE a.hold_id = $1 AND z.event_id = a.event_id AND z.zone_id = a.zone_id AND z.shard = a.shard`, h.ID)
	b.Queue(`UPDATE holds SET status = 'ordered' WHERE id = $1`, h.ID)
	b.Queue(`
		INSERT INTO tickets (id, order_id, event_id, seat_id, zone_id)
		SELECT t.id, $2, $3, t.seat_id, t.zone_id FROM unnest($1::text[], $4::text[], $5::text[]) AS t(id, seat_id, zone_id)`,
		ids, o.ID, o.EventID, seats, zones)
	b.Queue(`UPDATE orders SET status = 'paid', paid_at = $2 WHERE id = $1`, o.ID, now)
	b.Queue(`INSERT INTO outbox (topic, payload, created_at) VALUES ($1, $2, $3)`, booking.TopicOrderPaid, payload, now)
	return b, queueOrder(b, o.ID, "", false), nil
}

func nullable(s string) *string {
	if s == "" {
		return nil
	}
	return &s
}

// FailPayment releases a pending order's hold after a declined payment.
func (s *Store) FailPayment(ctx context.Context, orderID, providerEventID string, now time.Time) (booking.Order, error) {
	var o booking.Order
	err := s.inTx(ctx, func(tx pgx.Tx) error {
		var err error
		if o, err = loadOrderForUpdate(ctx, tx, orderID); err != nil {
			return err
		}
		if o.Status != booking.OrderPendingPayment {
			return nil
		}
		tag, err := tx.Exec(ctx, `INSERT INTO provider_events (id, order_id, received_at) VALUES ($1, $2, $3) ON CONFLICT DO NOTHING`,
			providerEventID, o.ID, now)
		if err != nil || tag.RowsAffected() == 0 {
			return err
		}
		h, err := loadHold(ctx, tx, o.HoldID, o.CustomerID, true)
		if err != nil {
			return err
		}
		if h.Status == booking.HoldActive {
			if err := endHold(ctx, tx, holdRowOf(h), booking.HoldReleased); err != nil {
				return err
			}
		}
		if _, err := tx.Exec(ctx, `UPDATE orders SET status = 'payment_failed' WHERE id = $1`, o.ID); err != nil {
			return err
		}
		if _, err := tx.Exec(ctx, `UPDATE payments SET status = 'failed' WHERE order_id = $1`, o.ID); err != nil {
			return err
		}
		o, err = loadOrder(ctx, tx, o.ID, "")
		return err
	})
	return o, err
}

// RefundOrder records an order's refund in one transaction, under the
// order's row lock: a concurrent refund of the same order waits for it and
// then finds the order refunded. A paid order's live tickets are cancelled,
// its seats and zone places go back on sale, its hold stops counting
// against the customer's cap, and an order.refunded outbox message is
// written.
func (s *Store) RefundOrder(ctx context.Context, req booking.RefundRequest, now time.Time) (booking.RefundResult, error) {
	var res booking.RefundResult
	err := s.inTx(ctx, func(tx pgx.Tx) error {
		o, err := loadOrderForUpdate(ctx, tx, req.OrderID)
		if err != nil {
			return err
		}
		res = booking.RefundResult{Order: o}
		already, err := booking.RefundAllowed(o, req)
		if err != nil || already {
			res.AlreadyRefunded = already
			return err
		}
		if o.Status == booking.OrderPaid {
			if res.Returned, err = returnPlaces(ctx, tx, o, req.Reason, now); err != nil {
				return err
			}
		}
		b := &pgx.Batch{}
		b.Queue(`UPDATE orders SET status = 'refunded', refund_reason = $2, refunded_at = $3 WHERE id = $1`, o.ID, string(req.Reason), now)
		b.Queue(`UPDATE payments SET status = 'refunded' WHERE order_id = $1`, o.ID)
		read := queueOrder(b, o.ID, "", false)
		res.Order, err = read(tx.SendBatch(ctx, b).Close())
		return err
	})
	if err != nil {
		return booking.RefundResult{Order: res.Order, AlreadyRefunded: res.AlreadyRefunded}, err
	}
	return res, nil
}

// returnPlaces cancels a paid order's live tickets and puts their places
// back on sale, in the caller's transaction and one round trip after the
// tickets are cancelled; it writes the order.refunded message and reports
// how many places came back.
func returnPlaces(ctx context.Context, tx pgx.Tx, o booking.Order, reason booking.RefundReason, now time.Time) (int, error) {
	rows, err := tx.Query(ctx, `
		UPDATE tickets SET cancelled_at = $2 WHERE order_id = $1 AND cancelled_at IS NULL RETURNING id`, o.ID, now)
	if err != nil {
		return 0, err
	}
	ids, err := pgx.CollectRows(rows, pgx.RowTo[string])
	if err != nil {
		return 0, err
	}
	payload, err := json.Marshal(booking.OrderRefundedPayload{
		OrderID: o.ID, EventID: o.EventID, CustomerID: o.CustomerID, Reason: reason, TicketIDs: ids, Returned: len(ids),
	})
	if err != nil {
		return 0, err
	}
	b := &pgx.Batch{}
	b.Queue(`
		UPDATE seats SET status = 'AVAILABLE', order_id = NULL
		WHERE event_id = $2 AND order_id = $1 AND status = 'SOLD' AND id = ANY (SELECT seat_id FROM hold_seats WHERE hold_id = $3)`,
		o.ID, o.EventID, o.HoldID)
	b.Queue(`
		UPDATE zone_shards z SET sold = z.sold - a.quantity
		FROM zone_allocations a
		WHERE a.hold_id = $1 AND z.event_id = a.event_id AND z.zone_id = a.zone_id AND z.shard = a.shard`, o.HoldID)
	b.Queue(`DELETE FROM zone_allocations WHERE hold_id = $1`, o.HoldID)
	b.Queue(`UPDATE customer_quotas SET seats = seats - $3 WHERE event_id = $1 AND customer_id = $2`, o.EventID, o.CustomerID, o.Quantity)
	b.Queue(`UPDATE holds SET status = 'released' WHERE id = $1`, o.HoldID)
	b.Queue(`INSERT INTO outbox (topic, payload, created_at) VALUES ($1, $2, $3)`, booking.TopicOrderRefunded, payload, now)
	return len(ids), tx.SendBatch(ctx, b).Close()
}

// Order returns an order with its tickets and deliveries.
func (s *Store) Order(ctx context.Context, id, customerID string) (booking.Order, error) {
	o, err := loadOrder(ctx, s.poolFor(ctx), id, customerID)
	return o, classify(err)
}

// OrdersAwaitingRefund lists refund_pending orders.
func (s *Store) OrdersAwaitingRefund(ctx context.Context, limit int) ([]booking.Order, error) {
	return s.ordersWhere(ctx, `SELECT id FROM orders WHERE status = 'refund_pending' ORDER BY id LIMIT $1`, limit)
}

// OrdersPendingPayment lists orders still awaiting their payment.
func (s *Store) OrdersPendingPayment(ctx context.Context, createdBefore time.Time, limit int) ([]booking.Order, error) {
	return s.ordersWhere(ctx, `
		SELECT id FROM orders WHERE status = 'pending_payment' AND created_at < $1
		ORDER BY created_at, id LIMIT $2`, createdBefore, limit)
}

// ordersWhere loads the orders whose ids a query selects, in its order.
func (s *Store) ordersWhere(ctx context.Context, query string, args ...any) ([]booking.Order, error) {
	order := func(ctx context.Context, id string) (booking.Order, error) { return s.Order(ctx, id, "") }
	return loadEach(ctx, s, order, query, args...)
}

// loadOrderForUpdate locks the order's row and reads it, in the one round
// trip of loadOrder: the lock is the batch's first statement, so the reads
// after it see what the previous holder of the lock committed.
func loadOrderForUpdate(ctx context.Context, tx pgx.Tx, id string) (booking.Order, error) {
	return readOrder(ctx, tx, id, "", true)
}

// loadOrder reads an order, its hold's seats and its tickets in one round
// trip: the three statements go in one batch, the seats found through the
// order's hold rather than after reading it.
func loadOrder(ctx context.Context, q querier, id, customerID string) (booking.Order, error) {
	return readOrder(ctx, q, id, customerID, false)
}

func readOrder(ctx context.Context, q querier, id, customerID string, lock bool) (booking.Order, error) {
	b := &pgx.Batch{}
	read := queueOrder(b, id, customerID, lock)
	return read(q.SendBatch(ctx, b).Close())
}

// queueOrder queues an order's reads on a batch, after whatever the batch
// holds already, and returns what turns the batch's outcome into the order.
func queueOrder(b *pgx.Batch, id, customerID string, lock bool) func(error) (booking.Order, error) {
	var o booking.Order
	var providerID, payURL *string
	if lock {
		b.Queue(`SELECT id FROM orders WHERE id = $1 FOR UPDATE`, id).QueryRow(func(r pgx.Row) error {
			var locked string
			return r.Scan(&locked)
		})
	}
	b.Queue(`
		SELECT o.id, o.hold_id, o.event_id, o.customer_id, o.status, o.amount_cents, o.currency, o.created_at, o.paid_at,
		       coalesce(o.refund_reason, ''), o.refunded_at, h.quantity, coalesce(h.zone_id, ''),
		       p.id, p.provider_payment_id, p.status, p.amount_cents, p.pay_url, p.idempotency_key, p.refund_key, p.create_request
		FROM orders o JOIN holds h ON h.id = o.hold_id JOIN payments p ON p.order_id = o.id
		WHERE o.id = $1 AND ($2 = '' OR o.customer_id = $2)`, id, customerID).QueryRow(func(r pgx.Row) error {
		return r.Scan(
			&o.ID, &o.HoldID, &o.EventID, &o.CustomerID, (*string)(&o.Status), (*int64)(&o.Amount), &o.Currency, &o.CreatedAt, &o.PaidAt,
			(*string)(&o.RefundReason), &o.RefundedAt, &o.Quantity, &o.Zone,
			&o.Payment.ID, &providerID, (*string)(&o.Payment.Status), (*int64)(&o.Payment.Amount), &payURL,
			&o.Payment.IdempotencyKey, &o.Payment.RefundKey, &o.Payment.CreateRequest)
	})
	b.Queue(`SELECT seat_id FROM hold_seats WHERE hold_id = (SELECT hold_id FROM orders WHERE id = $1) ORDER BY seat_id`, id).Query(func(rows pgx.Rows) error {
		var err error
		o.Seats, err = pgx.CollectRows(rows, pgx.RowTo[string])
		return err
	})
	b.Queue(`
		SELECT t.id, t.order_id, t.event_id, coalesce(t.seat_id, ''), coalesce(t.zone_id, ''), t.cancelled_at, d.code, d.delivered_at
		FROM tickets t LEFT JOIN deliveries d ON d.ticket_id = t.id
		WHERE t.order_id = $1 ORDER BY t.seat_id NULLS LAST, t.id`, id).Query(func(rows pgx.Rows) error {
		var err error
		o.Tickets, err = pgx.CollectRows(rows, func(r pgx.CollectableRow) (booking.Ticket, error) {
			var t booking.Ticket
			var code *string
			var at *time.Time
			if err := r.Scan(&t.ID, &t.OrderID, &t.EventID, &t.Seat, &t.Zone, &t.CancelledAt, &code, &at); err != nil {
				return t, err
			}
			if t.CancelledAt != nil {
				c := t.CancelledAt.UTC()
				t.CancelledAt = &c
			}
			if code != nil && at != nil {
				t.Delivery = &booking.Delivery{TicketID: t.ID, Code: *code, DeliveredAt: at.UTC()}
			}
			return t, nil
		})
		return err
	})
	return func(err error) (booking.Order, error) {
		if errors.Is(err, pgx.ErrNoRows) {
			return booking.Order{}, errOrderNotFound(id)
		}
		if err != nil {
			return booking.Order{}, err
		}
		o.CreatedAt = o.CreatedAt.UTC()
		if o.PaidAt != nil {
			t := o.PaidAt.UTC()
			o.PaidAt = &t
		}
		if o.RefundedAt != nil {
			t := o.RefundedAt.UTC()
			o.RefundedAt = &t
		}
		if providerID != nil {
			o.Payment.ProviderPaymentID = *providerID
		}
		if payURL != nil {
			o.Payment.PayURL = *payURL
		}
		return o, nil
	}
}

func errOrderNotFound(id string) error {
	return booking.Errorf(booking.KindNotFound, booking.CodeOrderNotFound, "no order %q", id)
}
