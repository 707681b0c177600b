package pgstore

import (
	"context"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/foyer-dev/foyer/booking"
)

var _ booking.StatsReader = (*Store)(nil)

// Stats reads the monitoring snapshot in one read-only transaction. The
// counts scan orders and tickets; a scrape every few seconds is cheap next
// to the traffic of an on-sale, and the pending outbox and active holds are
// read through their partial indexes.
func (s *Store) Stats(ctx context.Context, now time.Time) (booking.Stats, error) {
	st := booking.Stats{Orders: map[booking.OrderStatus]int{}, Payments: map[booking.PaymentStatus]int{}}
	err := pgx.BeginTxFunc(ctx, s.poolFor(ctx), pgx.TxOptions{IsoLevel: pgx.RepeatableRead, AccessMode: pgx.ReadOnly}, func(tx pgx.Tx) error {
		var oldest *time.Time
		err := tx.QueryRow(ctx, `SELECT
			(SELECT count(*) FROM holds WHERE status = 'active' AND expires_at > $1),
			(SELECT coalesce(sum(quantity), 0) FROM holds WHERE status = 'active' AND expires_at > $1),
			(SELECT count(*) FROM tickets WHERE cancelled_at IS NULL),
			(SELECT count(*) FROM deliveries),
			(SELECT count(*) FROM orders o WHERE o.status = 'paid' AND NOT EXISTS (SELECT 1 FROM tickets t WHERE t.order_id = o.id AND t.cancelled_at IS NULL)),
			(SELECT count(*) FROM outbox WHERE published_at IS NULL),
			(SELECT min(created_at) FROM outbox WHERE published_at IS NULL),
			(SELECT count(*) FROM idempotency_keys)`, now).
			Scan(&st.ActiveHolds, &st.HeldPlaces, &st.Tickets, &st.Deliveries, &st.PaidWithoutTickets, &st.OutboxPending, &oldest, &st.IdempotencyRecords)
		if err != nil {
			return err
		}
		if oldest != nil {
			st.OutboxOldest = *oldest
		}
		rows, err := tx.Query(ctx, `SELECT 'o', status, count(*) FROM orders GROUP BY status
			UNION ALL SELECT 'p', status, count(*) FROM payments GROUP BY status`)
		if err != nil {
			return err
		}
		defer rows.Close()
		for rows.Next() {
			var kind, status string
			var n int
			if err := rows.Scan(&kind, &status, &n); err != nil {
				return err
			}
			if kind == "o" {
				st.Orders[booking.OrderStatus(status)] = n
			} else {
				st.Payments[booking.PaymentStatus(status)] = n
			}
		}
		return rows.Err()
	})
	return st, classify(err)
}

// Ping checks that the database answers, for readiness probes.
func (s *Store) Ping(ctx context.Context) error { return classify(s.poolFor(ctx).Ping(ctx)) }
