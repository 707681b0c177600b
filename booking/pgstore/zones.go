package pgstore

import (
	"context"
	"math/rand/v2"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/foyer-dev/foyer/booking"
)

// takeZone counts q places of a general-admission zone for a hold. It starts
// at a random shard so concurrent buyers spread over the zone's rows, and
// takes the places from one shard when one has room, which is almost always.
// Near the end of a zone, when no single shard has room, it ends the zone's
// lapsed holds and gathers the places across shards under lock.
func (s *Store) takeZone(ctx context.Context, tx pgx.Tx, eventID int64, zone, holdID string, q int, now time.Time) error {
	shards, err := s.zoneShards(ctx, tx, eventID, zone)
	if err != nil {
		return err
	}
	start := rand.IntN(len(shards))
	for i := range shards {
		// The counter and the allocation in one round trip: the shard's row
		// lock is held for as short a time as the transaction allows.
		tag, err := tx.Exec(ctx, `
			WITH taken AS (
				UPDATE zone_shards SET held = held + $4
				WHERE event_id = $1 AND zone_id = $2 AND shard = $3 AND capacity - held - sold >= $4
				RETURNING shard
			)
			INSERT INTO zone_allocations (hold_id, event_id, zone_id, shard, quantity)
			SELECT $5, $1, $2, shard, $4 FROM taken
			ON CONFLICT (hold_id, shard) DO UPDATE SET quantity = zone_allocations.quantity + EXCLUDED.quantity`,
			eventID, zone, shards[(start+i)%len(shards)], q, holdID)
		if err != nil {
			return err
		}
		if tag.RowsAffected() == 1 {
			return nil
		}
	}
	rows, err := tx.Query(ctx, `
		SELECT id, customer_id, event_id, quantity FROM holds
		WHERE event_id = $1 AND zone_id = $2 AND status = 'active' AND expires_at <= $3
		ORDER BY id FOR UPDATE SKIP LOCKED`, eventID, zone, now)
	if err != nil {
		return err
	}
	if err := endHolds(ctx, tx, rows, booking.HoldExpired); err != nil {
		return err
	}
	rows, err = tx.Query(ctx, `
		SELECT shard, capacity - held - sold FROM zone_shards
		WHERE event_id = $1 AND zone_id = $2 ORDER BY shard FOR UPDATE`, eventID, zone)
	if err != nil {
		return err
	}
	type free struct{ shard, n int }
	frees, err := pgx.CollectRows(rows, func(r pgx.CollectableRow) (free, error) {
		var f free
		err := r.Scan(&f.shard, &f.n)
		return f, err
	})
	if err != nil {
		return err
	}
	total := 0
	for _, f := range frees {
		total += f.n
	}
	if total < q {
		return booking.SoldOutIn("zone "+zone, q)
	}
	need := q
	for _, f := range frees {
		take := min(need, f.n)
		if take == 0 {
			continue
		}
		if _, err := tx.Exec(ctx, `UPDATE zone_shards SET held = held + $4 WHERE event_id = $1 AND zone_id = $2 AND shard = $3`,
			eventID, zone, f.shard, take); err != nil {
			return err
		}
		if err := allocate(ctx, tx, holdID, eventID, zone, f.shard, take); err != nil {
			return err
		}
		need -= take
		if need == 0 {
			break
		}
	}
	return nil
}

// zoneShards lists a zone's shard numbers. They never change after the
// event is created, so they are read once.
func (s *Store) zoneShards(ctx context.Context, tx pgx.Tx, eventID int64, zone string) ([]int, error) {
	key := zoneKey{eventID, zone}
	if v, ok := s.shards.Load(key); ok {
		return v.([]int), nil
	}
	rows, err := tx.Query(ctx, `SELECT shard FROM zone_shards WHERE event_id = $1 AND zone_id = $2 ORDER BY shard`, eventID, zone)
	if err != nil {
		return nil, err
	}
	shards, err := pgx.CollectRows(rows, pgx.RowTo[int])
	if err != nil {
		return nil, err
	}
	if len(shards) == 0 {
		return nil, booking.Errorf(booking.KindNotFound, booking.CodeZoneNotFound, "no zone %q", zone)
	}
	s.shards.Store(key, shards)
	return shards, nil
}

type zoneKey struct {
	eventID int64
	zone    string
}

func allocate(ctx context.Context, tx pgx.Tx, holdID string, eventID int64, zone string, shard, q int) error {
	_, err := tx.Exec(ctx, `
		INSERT INTO zone_allocations (hold_id, event_id, zone_id, shard, quantity) VALUES ($1, $2, $3, $4, $5)
		ON CONFLICT (hold_id, shard) DO UPDATE SET quantity = zone_allocations.quantity + EXCLUDED.quantity`,
		holdID, eventID, zone, shard, q)
	return err
}
