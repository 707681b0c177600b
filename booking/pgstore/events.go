package pgstore

import (
	"context"
	"errors"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/foyer-dev/foyer/booking"
)

// CreateEvent writes the event, its sections, zones (split into shards) and
// every seat in one transaction.
func (s *Store) CreateEvent(ctx context.Context, spec booking.EventSpec, now time.Time) (booking.Event, error) {
	if err := spec.Validate(); err != nil {
		return booking.Event{}, err
	}
	var e booking.Event
	err := s.inTx(ctx, func(tx pgx.Tx) error {
		var id int64
		if err := tx.QueryRow(ctx,
			`INSERT INTO events (name, starts_at, currency, created_at) VALUES ($1, $2, $3, $4) RETURNING id`,
			spec.Name, spec.StartsAt, spec.Currency, now).Scan(&id); err != nil {
			return err
		}
		e = spec.Event(id, now)
		var seatRows [][]any
		for i, sec := range e.Sections {
			if _, err := tx.Exec(ctx,
				`INSERT INTO sections (event_id, id, position, rows, seats_per_row, price_cents) VALUES ($1, $2, $3, $4, $5, $6)`,
				id, sec.ID, i, sec.Rows, sec.SeatsPerRow, int64(sec.Price)); err != nil {
				return err
			}
			for r := 1; r <= sec.Rows; r++ {
				for n := 1; n <= sec.SeatsPerRow; n++ {
					seatRows = append(seatRows, []any{id, booking.SeatID(sec.ID, r, n), sec.ID, r, n})
				}
			}
		}
		if _, err := tx.CopyFrom(ctx, pgx.Identifier{"seats"},
			[]string{"event_id", "id", "section_id", "row_no", "seat_no"}, pgx.CopyFromRows(seatRows)); err != nil {
			return err
		}
		for i, z := range e.Zones {
			if _, err := tx.Exec(ctx,
				`INSERT INTO zones (event_id, id, position, capacity, price_cents) VALUES ($1, $2, $3, $4, $5)`,
				id, z.ID, i, z.Capacity, int64(z.Price)); err != nil {
				return err
			}
			for shard, capacity := range splitCapacity(z.Capacity, s.opts.ZoneShards) {
				if _, err := tx.Exec(ctx,
					`INSERT INTO zone_shards (event_id, zone_id, shard, capacity) VALUES ($1, $2, $3, $4)`,
					id, z.ID, shard, capacity); err != nil {
					return err
				}
			}
		}
		return nil
	})
	if err != nil {
		return booking.Event{}, err
	}
	s.events.Store(e.ID, e)
	return e, nil
}

// splitCapacity spreads capacity over at most n shards, none empty.
func splitCapacity(capacity, n int) []int {
	n = max(1, min(n, capacity))
	out := make([]int, n)
	for i := range out {
		out[i] = capacity / n
		if i < capacity%n {
			out[i]++
		}
	}
	return out
}

// Events lists events, soonest first.
func (s *Store) Events(ctx context.Context) ([]booking.Event, error) {
	return loadEach(ctx, s, s.Event, `SELECT id FROM events ORDER BY starts_at, id LIMIT 1000`)
}

// loadEach loads with load each row whose id query selects, in its order.
func loadEach[ID, T any](ctx context.Context, s *Store, load func(context.Context, ID) (T, error), query string, args ...any) ([]T, error) {
	rows, err := s.poolFor(ctx).Query(ctx, query, args...)
	if err != nil {
		return nil, classify(err)
	}
	ids, err := pgx.CollectRows(rows, pgx.RowTo[ID])
	if err != nil {
		return nil, classify(err)
	}
	out := make([]T, 0, len(ids))
	for _, id := range ids {
		v, err := load(ctx, id)
		if err != nil {
			return nil, err
		}
		out = append(out, v)
	}
	return out, nil
}

// Event returns one event. Events are immutable, so they are cached.
func (s *Store) Event(ctx context.Context, id int64) (booking.Event, error) {
	if e, ok := s.events.Load(id); ok {
		return e.(booking.Event), nil
	}
	e, err := s.loadEvent(ctx, s.poolFor(ctx), id)
	if err != nil {
		return booking.Event{}, err
	}
	s.events.Store(id, e)
	return e, nil
}

type querier interface {
	Query(ctx context.Context, sql string, args ...any) (pgx.Rows, error)
	QueryRow(ctx context.Context, sql string, args ...any) pgx.Row
	SendBatch(ctx context.Context, b *pgx.Batch) pgx.BatchResults
}

func (s *Store) loadEvent(ctx context.Context, q querier, id int64) (booking.Event, error) {
	e := booking.Event{ID: id}
	err := q.QueryRow(ctx, `SELECT name, starts_at, currency, created_at FROM events WHERE id = $1`, id).
		Scan(&e.Name, &e.StartsAt, &e.Currency, &e.CreatedAt)
	if errors.Is(err, pgx.ErrNoRows) {
		return booking.Event{}, errEventNotFound(id)
	}
	if err != nil {
		return booking.Event{}, classify(err)
	}
	e.StartsAt, e.CreatedAt = e.StartsAt.UTC(), e.CreatedAt.UTC()
	rows, err := q.Query(ctx, `SELECT id, rows, seats_per_row, price_cents FROM sections WHERE event_id = $1 ORDER BY position`, id)
	if err != nil {
		return booking.Event{}, classify(err)
	}
	e.Sections, err = pgx.CollectRows(rows, func(r pgx.CollectableRow) (booking.Section, error) {
		var sec booking.Section
		err := r.Scan(&sec.ID, &sec.Rows, &sec.SeatsPerRow, (*int64)(&sec.Price))
		return sec, err
	})
	if err != nil {
		return booking.Event{}, classify(err)
	}
	rows, err = q.Query(ctx, `SELECT id, capacity, price_cents FROM zones WHERE event_id = $1 ORDER BY position`, id)
	if err != nil {
		return booking.Event{}, classify(err)
	}
	e.Zones, err = pgx.CollectRows(rows, func(r pgx.CollectableRow) (booking.Zone, error) {
		var z booking.Zone
		err := r.Scan(&z.ID, &z.Capacity, (*int64)(&z.Price))
		return z, err
	})
	if err != nil {
		return booking.Event{}, classify(err)
	}
	return e, nil
}

// Inventory reads the seats that are not available and the zone counters.
func (s *Store) Inventory(ctx context.Context, eventID int64, now time.Time) ([]booking.SeatState, []booking.ZoneState, error) {
	if _, err := s.Event(ctx, eventID); err != nil {
		return nil, nil, err
	}
	rows, err := s.poolFor(ctx).Query(ctx, `
		SELECT section_id, row_no, seat_no, status FROM seats
		WHERE event_id = $1 AND (status = 'SOLD' OR (status = 'HELD' AND held_until > $2))`, eventID, now)
	if err != nil {
		return nil, nil, classify(err)
	}
	seats, err := pgx.CollectRows(rows, func(r pgx.CollectableRow) (booking.SeatState, error) {
		var st booking.SeatState
		err := r.Scan(&st.Section, &st.Row, &st.Number, (*string)(&st.Status))
		return st, err
	})
	if err != nil {
		return nil, nil, classify(err)
	}
	rows, err = s.poolFor(ctx).Query(ctx, `
		SELECT zone_id, sum(held)::int, sum(sold)::int FROM zone_shards WHERE event_id = $1 GROUP BY zone_id`, eventID)
	if err != nil {
		return nil, nil, classify(err)
	}
	zones, err := pgx.CollectRows(rows, func(r pgx.CollectableRow) (booking.ZoneState, error) {
		var z booking.ZoneState
		err := r.Scan(&z.ID, &z.Held, &z.Sold)
		return z, err
	})
	if err != nil {
		return nil, nil, classify(err)
	}
	return seats, zones, nil
}

func errEventNotFound(id int64) error {
	return booking.Errorf(booking.KindNotFound, booking.CodeEventNotFound, "event %d does not exist", id)
}
