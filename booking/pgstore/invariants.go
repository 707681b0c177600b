package pgstore

import (
	"context"
	"fmt"

	"github.com/jackc/pgx/v5"

	"github.com/foyer-dev/foyer/booking"
)

// invariantChecks are queries that return one row per violation, as text.
// They read the rows themselves, not the counters, so a drifting counter is
// caught too.
var invariantChecks = []string{
	// One live ticket per seat (the unique index says so; this proves it
	// held). Tickets cancelled by a refund admit nobody and count nowhere.
	`SELECT format('event %s: seat %s has %s live tickets', event_id, seat_id, count(*))
	 FROM tickets WHERE seat_id IS NOT NULL AND cancelled_at IS NULL GROUP BY event_id, seat_id HAVING count(*) > 1`,
	// A seat is sold exactly when it has a live ticket.
	`SELECT format('event %s: seat %s is %s with %s tickets', s.event_id, s.id, s.status, count(t.id))
	 FROM seats s LEFT JOIN tickets t ON t.event_id = s.event_id AND t.seat_id = s.id AND t.cancelled_at IS NULL
	 GROUP BY s.event_id, s.id, s.status
	 HAVING (s.status = 'SOLD') <> (count(t.id) = 1) OR count(t.id) > 1`,
	// sold + held <= capacity for each zone shard, and tickets match sold.
	`SELECT format('event %s: zone %s shard %s has held %s + sold %s over capacity %s', event_id, zone_id, shard, held, sold, capacity)
	 FROM zone_shards WHERE held < 0 OR sold < 0 OR held + sold > capacity`,
	`SELECT format('event %s: zone %s sold %s but has %s tickets', z.event_id, z.zone_id, z.sold, coalesce(t.n, 0))
	 FROM (SELECT event_id, zone_id, sum(sold) AS sold FROM zone_shards GROUP BY event_id, zone_id) z
	 LEFT JOIN (SELECT event_id, zone_id, count(*) AS n FROM tickets WHERE zone_id IS NOT NULL AND cancelled_at IS NULL GROUP BY event_id, zone_id) t
	   ON t.event_id = z.event_id AND t.zone_id = z.zone_id
	 WHERE z.sold <> coalesce(t.n, 0)`,
	// sold + held <= capacity for each event.
	`SELECT format('event %s: sold %s + held %s over capacity %s', e.id, st.sold, st.held, cap.n)
	 FROM events e
	 JOIN (SELECT event_id, count(*) FILTER (WHERE status = 'SOLD') AS sold,
	              count(*) FILTER (WHERE status = 'HELD') AS held
	       FROM seats GROUP BY event_id) st ON st.event_id = e.id
	 JOIN (SELECT event_id, sum(rows * seats_per_row) AS n FROM sections GROUP BY event_id) cap ON cap.event_id = e.id
	 WHERE st.sold + st.held > cap.n`,
	// A paid order has its live tickets, and no other order has any.
	`SELECT format('order %s is paid and has no ticket', o.id)
	 FROM orders o WHERE o.status = 'paid' AND NOT EXISTS (SELECT 1 FROM tickets t WHERE t.order_id = o.id AND t.cancelled_at IS NULL)`,
	`SELECT format('order %s is %s and has %s live tickets', o.id, o.status, count(*))
	 FROM orders o JOIN tickets t ON t.order_id = o.id AND t.cancelled_at IS NULL
	 WHERE o.status <> 'paid' GROUP BY o.id, o.status`,
	// A customer's counted seats match their active holds and orders.
	`SELECT format('event %s: customer count %s, holds and orders say %s', coalesce(q.event_id, h.event_id), coalesce(q.seats, 0), coalesce(h.n, 0))
	 FROM customer_quotas q
	 FULL JOIN (SELECT event_id, customer_id, sum(quantity) AS n FROM holds WHERE status IN ('active', 'ordered')
	            GROUP BY event_id, customer_id) h ON h.event_id = q.event_id AND h.customer_id = q.customer_id
	 WHERE coalesce(q.seats, 0) <> coalesce(h.n, 0)`,
}

// CheckInvariants runs every check in one repeatable-read snapshot.
func (s *Store) CheckInvariants(ctx context.Context) (booking.InvariantReport, error) {
	var r booking.InvariantReport
	err := pgx.BeginTxFunc(ctx, s.poolFor(ctx), pgx.TxOptions{IsoLevel: pgx.RepeatableRead, AccessMode: pgx.ReadOnly}, func(tx pgx.Tx) error {
		if err := tx.QueryRow(ctx, `SELECT (SELECT count(*) FROM events), (SELECT count(*) FROM seats), (SELECT count(*) FROM tickets WHERE cancelled_at IS NULL)`).
			Scan(&r.Events, &r.Seats, &r.Tickets); err != nil {
			return err
		}
		for _, q := range invariantChecks {
			rows, err := tx.Query(ctx, q)
			if err != nil {
				return fmt.Errorf("invariant query: %w", err)
			}
			found, err := pgx.CollectRows(rows, pgx.RowTo[string])
			if err != nil {
				return err
			}
			r.Violations = append(r.Violations, found...)
		}
		return nil
	})
	return r, classify(err)
}
