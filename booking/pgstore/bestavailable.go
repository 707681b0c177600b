package pgstore

import (
	"context"
	"slices"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/foyer-dev/foyer/booking"
)

// Best-available first looks for a window of free seats that no other shopper
// has locked, so concurrent shoppers take disjoint windows instead of queueing.
// The fast scan walks the index of free seats; the slow one also finds seats
// whose hold has lapsed but not been swept.
const (
	unlockedAvailableSeats = `
		SELECT id, row_no, seat_no FROM seats
		WHERE event_id = $1 AND section_id = $2 AND status = 'AVAILABLE'
		ORDER BY row_no, seat_no
		LIMIT $3
		FOR UPDATE SKIP LOCKED`
	unlockedAvailableOrLapsedSeats = `
		SELECT id, row_no, seat_no FROM seats
		WHERE event_id = $1 AND section_id = $2
		  AND (status = 'AVAILABLE' OR (status = 'HELD' AND held_until <= $4))
		ORDER BY row_no, seat_no
		LIMIT $3
		FOR UPDATE SKIP LOCKED`
)

// Near the end of an on-sale the free seats that remain may all sit in other
// shoppers' windows. Those shoppers take at most a few of them, or give up,
// and the rest are free again when their transactions end: refusing now would
// tell a fan "sold out" while seats remain. So the second pass waits for
// those transactions and reads what they left.
//
// It locks in seat id order, the order holds of listed seats lock in, so two
// waiting shoppers, or a waiting shopper and a listed-seat hold, queue instead
// of deadlocking. Lapsed seats are only taken if nobody has them locked:
// releasing a hold locks its seats in no set order, and waiting on them could
// deadlock with it.
const (
	allAvailableSeats = `
		SELECT id, row_no, seat_no FROM seats
		WHERE event_id = $1 AND section_id = $2 AND status = 'AVAILABLE'
		ORDER BY id
		FOR UPDATE`
	unlockedLapsedSeats = `
		SELECT id, row_no, seat_no FROM seats
		WHERE event_id = $1 AND section_id = $2 AND status = 'HELD' AND held_until <= $3
		ORDER BY id
		FOR UPDATE SKIP LOCKED`
	// freeSeats counts the seats that are free or will be once in-flight
	// shoppers are done with them: seats those shoppers take are still
	// AVAILABLE to this count, so it never says "too few" wrongly.
	freeSeats = `
		SELECT count(*) FROM seats
		WHERE event_id = $1 AND section_id = $2
		  AND (status = 'AVAILABLE' OR (status = 'HELD' AND held_until <= $3))`
)

// holdBestAvailable takes the q best free seats of the section for the hold,
// adjacent when it can, or answers sold out when fewer than q are free once
// every concurrent shopper is done.
func holdBestAvailable(ctx context.Context, tx pgx.Tx, eventID int64, holdID, section string, q int, until, now time.Time) ([]string, error) {
	chosen, err := chooseUnlocked(ctx, tx, eventID, section, q, now)
	if err == nil && chosen == nil {
		chosen, err = chooseAfterWaiting(ctx, tx, eventID, section, q, now)
	}
	if err != nil {
		return nil, err
	}
	if chosen == nil {
		return nil, booking.SoldOutIn("section "+section, q)
	}
	if _, err := tx.Exec(ctx, `
		WITH taken AS (
			UPDATE seats SET status = 'HELD', hold_id = $3, held_until = $4
			WHERE event_id = $1 AND id = ANY($2)
			RETURNING id
		)`+recordHoldSeats, eventID, chosen, holdID, until); err != nil {
		return nil, err
	}
	slices.Sort(chosen)
	return chosen, nil
}

// chooseUnlocked locks a small window of the best seats nobody else has
// locked and picks q of them. When the window is too small it returns nil and
// lets its locks go (a savepoint rollback), so it neither keeps other shoppers
// from those seats nor holds them while it waits. The savepoint rides in the
// same round trip as the first scan, and is never released (the transaction's
// end does that), so the usual path costs no extra round trip.
func chooseUnlocked(ctx context.Context, tx pgx.Tx, eventID int64, section string, q int, now time.Time) ([]string, error) {
	window := q + 4
	b := &pgx.Batch{}
	b.Queue(`SAVEPOINT best_available`)
	b.Queue(unlockedAvailableSeats, eventID, section, window)
	br := tx.SendBatch(ctx, b)
	_, err := br.Exec()
	var cands []booking.Candidate
	if err == nil {
		cands, err = collectCandidates(br.Query())
	}
	if cerr := br.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return nil, err
	}
	chosen := candidateIDs(booking.ChooseBestAvailable(cands, q))
	if chosen == nil {
		chosen, err = chooseSeats(ctx, tx, q, unlockedAvailableOrLapsedSeats, eventID, section, window, now)
		if err != nil {
			return nil, err
		}
	}
	if chosen == nil {
		_, err = tx.Exec(ctx, `ROLLBACK TO SAVEPOINT best_available`)
	}
	return chosen, err
}

// chooseAfterWaiting is the second pass. It first counts what could be free:
// when that is under q the section is sold out for this party, and nobody
// waits for an answer that cannot change.
func chooseAfterWaiting(ctx context.Context, tx pgx.Tx, eventID int64, section string, q int, now time.Time) ([]string, error) {
	var free int
	if err := tx.QueryRow(ctx, freeSeats, eventID, section, now).Scan(&free); err != nil {
		return nil, err
	}
	if free < q {
		return nil, nil
	}
	cands, err := lockCandidates(ctx, tx, allAvailableSeats, eventID, section)
	if err != nil {
		return nil, err
	}
	lapsed, err := lockCandidates(ctx, tx, unlockedLapsedSeats, eventID, section, now)
	if err != nil {
		return nil, err
	}
	cands = append(cands, lapsed...)
	slices.SortFunc(cands, func(a, b booking.Candidate) int {
		if a.Row != b.Row {
			return a.Row - b.Row
		}
		return a.Number - b.Number
	})
	return candidateIDs(booking.ChooseBestAvailable(cands, q)), nil
}

// chooseSeats locks candidates with query and picks q of them, or returns nil
// when there are too few.
func chooseSeats(ctx context.Context, tx pgx.Tx, q int, query string, args ...any) ([]string, error) {
	cands, err := lockCandidates(ctx, tx, query, args...)
	if err != nil {
		return nil, err
	}
	return candidateIDs(booking.ChooseBestAvailable(cands, q)), nil
}

func lockCandidates(ctx context.Context, tx pgx.Tx, query string, args ...any) ([]booking.Candidate, error) {
	return collectCandidates(tx.Query(ctx, query, args...))
}

func collectCandidates(rows pgx.Rows, err error) ([]booking.Candidate, error) {
	if err != nil {
		return nil, err
	}
	return pgx.CollectRows(rows, func(r pgx.CollectableRow) (booking.Candidate, error) {
		var c booking.Candidate
		err := r.Scan(&c.ID, &c.Row, &c.Number)
		return c, err
	})
}

func candidateIDs(chosen []booking.Candidate) []string {
	if chosen == nil {
		return nil
	}
	ids := make([]string, len(chosen))
	for i, c := range chosen {
		ids[i] = c.ID
	}
	return ids
}
