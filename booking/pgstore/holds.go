package pgstore

import (
	"context"
	"errors"
	"slices"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/foyer-dev/foyer/booking"
)

// Hold takes the requested places, all or none, and counts them against the
// customer's cap, in one transaction.
func (s *Store) Hold(ctx context.Context, req booking.HoldRequest, now time.Time) (booking.Hold, error) {
	q, err := req.Validate()
	if err != nil {
		return booking.Hold{}, err
	}
	e, err := s.Event(ctx, req.EventID)
	if err != nil {
		return booking.Hold{}, err
	}
	amount, err := holdAmount(e, req, q)
	if err != nil {
		return booking.Hold{}, err
	}
	newHold := func() booking.Hold {
		return booking.Hold{
			ID: booking.NewID("hold"), EventID: e.ID, CustomerID: req.CustomerID, Zone: req.Zone,
			Quantity: q, Amount: amount, Status: booking.HoldActive,
			CreatedAt: now.UTC(), ExpiresAt: now.Add(req.TTL).UTC(),
		}
	}
	// The quick way first (holdpipeline.go); a contention failure is retried
	// once, as inTx does.
	for attempt := 0; attempt < 2; attempt++ {
		h, err := s.holdPipelined(ctx, req, newHold(), now)
		if errors.Is(err, errCareful) {
			break
		}
		if !isContention(err) {
			return h, classify(err)
		}
	}
	var h booking.Hold
	err = s.inTx(ctx, func(tx pgx.Tx) error {
		h = newHold()
		if err := expireCustomerHolds(ctx, tx, e.ID, req.CustomerID, now); err != nil {
			return err
		}
		if err := takeQuota(ctx, tx, e.ID, req.CustomerID, q, req.MaxPerCustomer); err != nil {
			return err
		}
		if _, err := tx.Exec(ctx, `
			INSERT INTO holds (id, event_id, customer_id, zone_id, quantity, amount_cents, status, created_at, expires_at)
			VALUES ($1, $2, $3, NULLIF($4, ''), $5, $6, 'active', $7, $8)`,
			h.ID, h.EventID, h.CustomerID, h.Zone, q, int64(amount), h.CreatedAt, h.ExpiresAt); err != nil {
			return err
		}
		var err error
		switch {
		case len(req.Seats) > 0:
			h.Seats, err = holdSeatList(ctx, tx, e.ID, h.ID, req.Seats, h.ExpiresAt, now)
		case req.Section != "":
			h.Seats, err = holdBestAvailable(ctx, tx, e.ID, h.ID, req.Section, q, h.ExpiresAt, now)
		default:
			err = s.takeZone(ctx, tx, e.ID, req.Zone, h.ID, q, now)
		}
		return err
	})
	return h, err
}

// holdAmount prices the request and refuses seats, sections and zones the
// event does not have, before any transaction starts.
func holdAmount(e booking.Event, req booking.HoldRequest, q int) (booking.Money, error) {
	switch {
	case len(req.Seats) > 0:
		var total booking.Money
		var missing []string
		for _, id := range req.Seats {
			secID, row, num, _ := booking.ParseSeatID(id)
			sec, ok := e.Section(secID)
			if !ok || row > sec.Rows || num > sec.SeatsPerRow {
				missing = append(missing, id)
				continue
			}
			total += sec.Price
		}
		if len(missing) > 0 {
			return 0, &booking.Error{Kind: booking.KindNotFound, Code: booking.CodeSeatNotFound, Message: "no such seats in this event", Seats: missing}
		}
		return total, nil
	case req.Section != "":
		sec, ok := e.Section(req.Section)
		if !ok {
			return 0, booking.Errorf(booking.KindNotFound, booking.CodeSectionNotFound, "no section %q", req.Section)
		}
		return sec.Price * booking.Money(q), nil
	default:
		z, ok := e.Zone(req.Zone)
		if !ok {
			return 0, booking.Errorf(booking.KindNotFound, booking.CodeZoneNotFound, "no zone %q", req.Zone)
		}
		return z.Price * booking.Money(q), nil
	}
}

// takeQuota adds q to the customer's count for the event unless that passes
// the cap. The row lock it takes also serializes one customer's concurrent
// holds, so two tabs cannot both squeeze under the cap.
func takeQuota(ctx context.Context, tx pgx.Tx, eventID int64, customerID string, q, limit int) error {
	if limit <= 0 {
		limit = booking.DefaultMaxPerCustomer
	}
	var n int
	err := tx.QueryRow(ctx, `
		INSERT INTO customer_quotas (event_id, customer_id, seats) VALUES ($1, $2, $3)
		ON CONFLICT (event_id, customer_id) DO UPDATE SET seats = customer_quotas.seats + EXCLUDED.seats
		WHERE customer_quotas.seats + EXCLUDED.seats <= $4
		RETURNING seats`, eventID, customerID, q, limit).Scan(&n)
	if errors.Is(err, pgx.ErrNoRows) {
		var have int
		if err := tx.QueryRow(ctx, `SELECT seats FROM customer_quotas WHERE event_id = $1 AND customer_id = $2`,
			eventID, customerID).Scan(&have); err != nil {
			return err
		}
		return booking.OverLimit(limit, have)
	}
	return err
}

// recordHoldSeats ends the statements that take seats: the seats a hold got
// are written to hold_seats in the same round trip. A re-take writes the same
// rows again, hence the upsert.
// takeListedSeatsCTE locks the seats listed in $2 of event $1 in id order
// (target) and takes for hold $3, until $4, those free at $5 (taken): the
// start of both statements that hold listed seats.
const takeListedSeatsCTE = `
		WITH target AS (
			SELECT id FROM seats WHERE event_id = $1 AND id = ANY($2) ORDER BY id FOR UPDATE
		), taken AS (
			UPDATE seats s SET status = 'HELD', hold_id = $3, held_until = $4
			FROM target
			WHERE s.event_id = $1 AND s.id = target.id
			  AND (s.status = 'AVAILABLE' OR (s.status = 'HELD' AND s.held_until <= $5))
			RETURNING s.id
		)`

const recordHoldSeats = `
		INSERT INTO hold_seats (hold_id, event_id, seat_id) SELECT $3, $1, id FROM taken
		ON CONFLICT (hold_id, seat_id) DO UPDATE SET event_id = EXCLUDED.event_id
		RETURNING seat_id`

// holdSeatList is the conditional UPDATE: the listed seats are locked in id
// order (two overlapping holds queue instead of deadlocking) and only those
// free at now are taken. Fewer rows than asked means the hold fails whole.
func holdSeatList(ctx context.Context, tx pgx.Tx, eventID int64, holdID string, seats []string, until, now time.Time) ([]string, error) {
	rows, err := tx.Query(ctx, takeListedSeatsCTE+recordHoldSeats, eventID, seats, holdID, until, now)
	if err != nil {
		return nil, err
	}
	got, err := pgx.CollectRows(rows, pgx.RowTo[string])
	if err != nil {
		return nil, err
	}
	if len(got) < len(seats) {
		var taken []string
		for _, id := range seats {
			if !slices.Contains(got, id) {
				taken = append(taken, id)
			}
		}
		return nil, booking.SeatsUnavailable(taken)
	}
	slices.Sort(got)
	return got, nil
}

// holdRow is the part of a hold the store needs to end it.
type holdRow struct {
	id, customerID string
	eventID        int64
	quantity       int
}

// expireCustomerHolds ends the customer's lapsed holds on the event so they
// stop counting against the cap before the sweeper comes round.
func expireCustomerHolds(ctx context.Context, tx pgx.Tx, eventID int64, customerID string, now time.Time) error {
	rows, err := tx.Query(ctx, `
		SELECT id, customer_id, event_id, quantity FROM holds
		WHERE event_id = $1 AND customer_id = $2 AND status = 'active' AND expires_at <= $3
		FOR UPDATE`, eventID, customerID, now)
	if err != nil {
		return err
	}
	return endHolds(ctx, tx, rows, booking.HoldExpired)
}

func endHolds(ctx context.Context, tx pgx.Tx, rows pgx.Rows, status booking.HoldStatus) error {
	holds, err := pgx.CollectRows(rows, scanHoldRow)
	if err != nil {
		return err
	}
	for _, h := range holds {
		if err := endHold(ctx, tx, h, status); err != nil {
			return err
		}
	}
	return nil
}

func scanHoldRow(r pgx.CollectableRow) (holdRow, error) {
	var h holdRow
	err := r.Scan(&h.id, &h.customerID, &h.eventID, &h.quantity)
	return h, err
}

// endHold returns what an active hold still holds and uncounts it from the
// customer's cap. The caller has locked the hold row. Seats that another hold
// took after this one lapsed are not touched: they no longer carry its id.
func endHold(ctx context.Context, tx pgx.Tx, h holdRow, status booking.HoldStatus) error {
	if _, err := tx.Exec(ctx, `
		UPDATE seats SET status = 'AVAILABLE', hold_id = NULL, held_until = NULL
		WHERE hold_id = $1 AND status = 'HELD'`, h.id); err != nil {
		return err
	}
	if _, err := tx.Exec(ctx, `
		UPDATE zone_shards z SET held = z.held - a.quantity
		FROM zone_allocations a
		WHERE a.hold_id = $1 AND z.event_id = a.event_id AND z.zone_id = a.zone_id AND z.shard = a.shard`, h.id); err != nil {
		return err
	}
	if _, err := tx.Exec(ctx, `DELETE FROM zone_allocations WHERE hold_id = $1`, h.id); err != nil {
		return err
	}
	if _, err := tx.Exec(ctx, `
		UPDATE customer_quotas SET seats = seats - $3 WHERE event_id = $1 AND customer_id = $2`,
		h.eventID, h.customerID, h.quantity); err != nil {
		return err
	}
	_, err := tx.Exec(ctx, `UPDATE holds SET status = $2 WHERE id = $1`, h.id, string(status))
	return err
}

// GetHold returns the customer's hold.
func (s *Store) GetHold(ctx context.Context, id, customerID string) (booking.Hold, error) {
	h, err := loadHold(ctx, s.poolFor(ctx), id, customerID, false)
	return h, classify(err)
}

func loadHold(ctx context.Context, q querier, id, customerID string, lock bool) (booking.Hold, error) {
	b := &pgx.Batch{}
	read := queueHold(b, id, customerID, lock)
	return read(q.SendBatch(ctx, b).Close())
}

// queueHold queues a hold's reads on a batch and returns what turns the
// batch's outcome into the hold. The hold and its seats travel together: the
// seats of a hold never change once it is taken, so reading them beside the
// row (and its lock) sees the same as reading them after.
func queueHold(b *pgx.Batch, id, customerID string, lock bool) func(error) (booking.Hold, error) {
	sql := `SELECT id, event_id, customer_id, coalesce(zone_id, ''), quantity, amount_cents, status, created_at, expires_at
		FROM holds WHERE id = $1 AND customer_id = $2`
	if lock {
		sql += " FOR UPDATE"
	}
	var h booking.Hold
	b.Queue(sql, id, customerID).QueryRow(func(r pgx.Row) error {
		err := r.Scan(&h.ID, &h.EventID, &h.CustomerID, &h.Zone, &h.Quantity,
			(*int64)(&h.Amount), (*string)(&h.Status), &h.CreatedAt, &h.ExpiresAt)
		if errors.Is(err, pgx.ErrNoRows) {
			return booking.Errorf(booking.KindNotFound, booking.CodeHoldNotFound, "no hold %q", id)
		}
		return err
	})
	b.Queue(`SELECT seat_id FROM hold_seats WHERE hold_id = $1 ORDER BY seat_id`, id).Query(func(rows pgx.Rows) error {
		var err error
		h.Seats, err = pgx.CollectRows(rows, pgx.RowTo[string])
		return err
	})
	return func(err error) (booking.Hold, error) {
		if err != nil {
			return booking.Hold{}, err
		}
		h.CreatedAt, h.ExpiresAt = h.CreatedAt.UTC(), h.ExpiresAt.UTC()
		return h, nil
	}
}

// ReleaseHold gives an active hold's places back.
func (s *Store) ReleaseHold(ctx context.Context, id, customerID string, now time.Time) (booking.Hold, error) {
	var h booking.Hold
	err := s.inTx(ctx, func(tx pgx.Tx) error {
		var err error
		h, err = loadHold(ctx, tx, id, customerID, true)
		if err != nil {
			return err
		}
		switch h.Status {
		case booking.HoldOrdered:
			return booking.Errorf(booking.KindConflict, booking.CodeHoldNotActive, "hold %s is paid for", id)
		case booking.HoldActive:
			h.Status = booking.HoldReleased
			if !now.Before(h.ExpiresAt) {
				h.Status = booking.HoldExpired
			}
			return endHold(ctx, tx, holdRow{id: h.ID, customerID: h.CustomerID, eventID: h.EventID, quantity: h.Quantity}, h.Status)
		}
		return nil
	})
	return h, err
}

// sweepBatch is how many lapsed holds one sweeper transaction ends; small
// batches keep its locks short.
const sweepBatch = 50

// SweepExpiredHolds ends up to limit lapsed holds, skipping any that a
// concurrent transaction has locked (it will be back next round).
func (s *Store) SweepExpiredHolds(ctx context.Context, now time.Time, limit int) (int, error) {
	total := 0
	for total < limit {
		n := 0
		err := s.inTx(ctx, func(tx pgx.Tx) error {
			rows, err := tx.Query(ctx, `
				SELECT id, customer_id, event_id, quantity FROM holds
				WHERE status = 'active' AND expires_at <= $1
				ORDER BY expires_at LIMIT $2
				FOR UPDATE SKIP LOCKED`, now, min(sweepBatch, limit-total))
			if err != nil {
				return err
			}
			holds, err := pgx.CollectRows(rows, scanHoldRow)
			if err != nil {
				return err
			}
			for _, h := range holds {
				if err := endHold(ctx, tx, h, booking.HoldExpired); err != nil {
					return err
				}
			}
			n = len(holds)
			return nil
		})
		if err != nil {
			return total, err
		}
		total += n
		if n == 0 {
			break
		}
	}
	return total, nil
}
