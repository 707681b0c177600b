package pgstore

import (
	"context"
	"errors"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"

	"github.com/foyer-dev/foyer/booking"
)

// A hold sends its statements together: BEGIN, the customer's lapsed holds
// ended, the cap counted, the hold written, the places taken and COMMIT go in
// one batch, one round trip. A statement that must refuse (over the cap,
// seats gone) raises through foyer_check (migration 006), which stops the
// batch as any error would. Best available needs the seats it saw before it
// can choose, so it costs two round trips. When the quick way does not fit
// (a zone whose shards are all busy or nearly full, a section whose free
// seats sit in other shoppers' windows) the hold starts again as the careful
// transaction in holds.go, which waits and looks further.

// expireLapsedHolds ends the customer's lapsed holds on the event, as endHold
// does one by one, in one statement: their seats and zone places go back,
// and they stop counting against the cap.
const expireLapsedHolds = `
	WITH lapsed AS (
		UPDATE holds SET status = 'expired'
		WHERE event_id = $1 AND customer_id = $2 AND status = 'active' AND expires_at <= $3
		RETURNING id, quantity
	), freed AS (
		UPDATE seats SET status = 'AVAILABLE', hold_id = NULL, held_until = NULL
		WHERE hold_id IN (SELECT id FROM lapsed) AND status = 'HELD'
	), allocs AS (
		DELETE FROM zone_allocations WHERE hold_id IN (SELECT id FROM lapsed)
		RETURNING event_id, zone_id, shard, quantity
	), shards AS (
		UPDATE zone_shards z SET held = z.held - a.quantity
		FROM (SELECT event_id, zone_id, shard, sum(quantity) AS quantity FROM allocs GROUP BY 1, 2, 3) a
		WHERE z.event_id = a.event_id AND z.zone_id = a.zone_id AND z.shard = a.shard
	), quota AS (
		UPDATE customer_quotas SET seats = seats - (SELECT sum(quantity) FROM lapsed)
		WHERE event_id = $1 AND customer_id = $2 AND EXISTS (SELECT 1 FROM lapsed)
	)
	SELECT count(*) FROM lapsed`

// countQuota is takeQuota in one statement: over the cap it raises
// over_limit with what the customer holds already.
const countQuota = `
	WITH up AS (
		INSERT INTO customer_quotas (event_id, customer_id, seats) VALUES ($1, $2, $3)
		ON CONFLICT (event_id, customer_id) DO UPDATE SET seats = customer_quotas.seats + EXCLUDED.seats
		WHERE customer_quotas.seats + EXCLUDED.seats <= $4
		RETURNING seats
	)
	SELECT foyer_check(EXISTS (SELECT 1 FROM up), 'over_limit',
		(SELECT coalesce(max(seats), 0)::text FROM customer_quotas WHERE event_id = $1 AND customer_id = $2))`

const insertHold = `
	INSERT INTO holds (id, event_id, customer_id, zone_id, quantity, amount_cents, status, created_at, expires_at)
	VALUES ($1, $2, $3, NULLIF($4, ''), $5, $6, 'active', $7, $8)`

// takeListedSeats is holdSeatList in one statement: fewer seats taken than
// listed raises seats_unavailable with the ones it could not take.
const takeListedSeats = takeListedSeatsCTE + `, rec AS (` + recordHoldSeats + `
	)
	SELECT foyer_check(count(*) = cardinality($2::text[]), 'seats_unavailable',
		array_to_string(ARRAY(SELECT x FROM unnest($2::text[]) AS x WHERE x NOT IN (SELECT seat_id FROM rec)), ','))
	FROM rec`

// takeZoneShard takes q places from one shard of the zone with room for
// them, picked at random so that buyers spread over the shards. When none has
// room, or the one picked filled up meanwhile, it raises zone_busy and the
// careful path (takeZone) looks across shards.
const takeZoneShard = `
	WITH pick AS (
		SELECT shard FROM zone_shards
		WHERE event_id = $1 AND zone_id = $2 AND capacity - held - sold >= $3
		ORDER BY random() LIMIT 1
	), taken AS (
		UPDATE zone_shards z SET held = z.held + $3 FROM pick
		WHERE z.event_id = $1 AND z.zone_id = $2 AND z.shard = pick.shard AND z.capacity - z.held - z.sold >= $3
		RETURNING z.shard
	), rec AS (
		INSERT INTO zone_allocations (hold_id, event_id, zone_id, shard, quantity)
		SELECT $4, $1, $2, shard, $3 FROM taken
		ON CONFLICT (hold_id, shard) DO UPDATE SET quantity = zone_allocations.quantity + EXCLUDED.quantity
		RETURNING shard
	)
	SELECT foyer_check(EXISTS (SELECT 1 FROM rec), 'zone_busy', '')`

// takeChosenSeats takes the seats best available chose among those its scan
// locked.
const takeChosenSeats = `
	WITH taken AS (
		UPDATE seats SET status = 'HELD', hold_id = $3, held_until = $4
		WHERE event_id = $1 AND id = ANY($2)
		RETURNING id
	)` + recordHoldSeats

// errCareful: the quick way does not fit this hold; take the careful one.
var errCareful = errors.New("pgstore: hold needs the careful path")

// holdPipelined makes the hold in one round trip (two for best available),
// or answers errCareful, having rolled back, when it must be made the
// careful way.
func (s *Store) holdPipelined(ctx context.Context, req booking.HoldRequest, h booking.Hold, now time.Time) (booking.Hold, error) {
	conn, err := s.poolFor(ctx).Acquire(ctx)
	if err != nil {
		return h, err
	}
	defer conn.Release()
	b := &pgx.Batch{}
	b.Queue("BEGIN")
	b.Queue(expireLapsedHolds, h.EventID, h.CustomerID, now)
	b.Queue(countQuota, h.EventID, h.CustomerID, h.Quantity, req.MaxPerCustomer)
	b.Queue(insertHold, h.ID, h.EventID, h.CustomerID, h.Zone, h.Quantity, int64(h.Amount), h.CreatedAt, h.ExpiresAt)
	switch {
	case len(req.Seats) > 0:
		b.Queue(takeListedSeats, h.EventID, req.Seats, h.ID, h.ExpiresAt, now)
		b.Queue("COMMIT")
	case req.Zone != "":
		b.Queue(takeZoneShard, h.EventID, h.Zone, h.Quantity, h.ID)
		b.Queue("COMMIT")
	default:
		b.Queue(unlockedAvailableSeats, h.EventID, req.Section, h.Quantity+4)
	}
	br := conn.SendBatch(ctx, b)
	var cands []booking.Candidate
	for i := 0; i < b.Len() && err == nil; i++ {
		if req.Section != "" && i == b.Len()-1 {
			cands, err = collectCandidates(br.Query())
			continue
		}
		_, err = br.Exec()
	}
	if cerr := br.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		rollback(conn)
		return h, refusal(err, req)
	}
	switch {
	case len(req.Seats) > 0:
		h.Seats = slices.Clone(req.Seats) // sorted by Validate
		return h, nil
	case req.Zone != "":
		return h, nil
	}
	chosen := candidateIDs(booking.ChooseBestAvailable(cands, h.Quantity))
	if chosen == nil {
		rollback(conn)
		return h, errCareful
	}
	b = &pgx.Batch{}
	b.Queue(takeChosenSeats, h.EventID, chosen, h.ID, h.ExpiresAt)
	b.Queue("COMMIT")
	if err := conn.SendBatch(ctx, b).Close(); err != nil {
		rollback(conn)
		return h, err
	}
	slices.Sort(chosen)
	h.Seats = chosen
	return h, nil
}

// rollback ends a transaction a batch left open or failed. Should even that
// fail, the connection is closed rather than returned to the pool mid-
// transaction.
func rollback(conn interface {
	Exec(context.Context, string, ...any) (pgconn.CommandTag, error)
	Conn() *pgx.Conn
}) {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if _, err := conn.Exec(ctx, "ROLLBACK"); err != nil {
		_ = conn.Conn().Close(ctx)
	}
}

// refusal turns what foyer_check raised into the booking error it stands
// for; other errors pass through.
func refusal(err error, req booking.HoldRequest) error {
	var pgErr *pgconn.PgError
	if !errors.As(err, &pgErr) || pgErr.Code != "P0001" {
		return err
	}
	switch pgErr.Message {
	case "over_limit":
		have, _ := strconv.Atoi(pgErr.Detail)
		return booking.OverLimit(req.MaxPerCustomer, have)
	case "seats_unavailable":
		var taken []string
		if pgErr.Detail != "" {
			taken = strings.Split(pgErr.Detail, ",")
		}
		return booking.SeatsUnavailable(taken)
	case "zone_busy":
		return errCareful
	}
	return err
}
