package pgstore

import (
	"context"
	"errors"
	"net/http"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/foyer-dev/foyer/booking"
)

// BeginIdempotent claims a key with one upsert: a fresh key, a saved response
// past its lifetime or a claim abandoned by a dead process is taken over;
// anything else is reported as it stands.
func (s *Store) BeginIdempotent(ctx context.Context, k booking.IdempotencyKey, now time.Time) (booking.IdempotencyResult, error) {
	var claimed bool
	err := s.poolFor(ctx).QueryRow(ctx, `
		INSERT INTO idempotency_keys (scope, key, fingerprint, created_at) VALUES ($1, $2, $3, $4)
		ON CONFLICT (scope, key) DO UPDATE
		SET fingerprint = EXCLUDED.fingerprint, created_at = EXCLUDED.created_at, status_code = NULL, body = NULL, headers = NULL
		WHERE (idempotency_keys.status_code IS NOT NULL AND idempotency_keys.created_at <= $5)
		   OR (idempotency_keys.status_code IS NULL AND idempotency_keys.created_at <= $6)
		RETURNING true`,
		k.Scope, k.Key, k.Fingerprint, now, now.Add(-booking.IdempotencyKeyTTL), now.Add(-booking.IdempotencyClaimTimeout)).Scan(&claimed)
	if err == nil {
		return booking.IdempotencyResult{State: booking.IdempotencyNew}, nil
	}
	if !errors.Is(err, pgx.ErrNoRows) {
		return booking.IdempotencyResult{}, classify(err)
	}
	var fingerprint string
	var status *int
	var body []byte
	var header http.Header
	err = s.poolFor(ctx).QueryRow(ctx, `SELECT fingerprint, status_code, body, headers FROM idempotency_keys WHERE scope = $1 AND key = $2`,
		k.Scope, k.Key).Scan(&fingerprint, &status, &body, &header)
	if errors.Is(err, pgx.ErrNoRows) {
		// Abandoned between our two statements: the client may simply retry.
		return booking.IdempotencyResult{State: booking.IdempotencyInFlight}, nil
	}
	if err != nil {
		return booking.IdempotencyResult{}, classify(err)
	}
	switch {
	case fingerprint != k.Fingerprint:
		return booking.IdempotencyResult{State: booking.IdempotencyMismatch}, nil
	case status == nil:
		return booking.IdempotencyResult{State: booking.IdempotencyInFlight}, nil
	}
	return booking.IdempotencyResult{State: booking.IdempotencyReplay, Response: booking.SavedResponse{Status: *status, Body: body, Header: header}}, nil
}

// CompleteIdempotent saves the response for replay.
func (s *Store) CompleteIdempotent(ctx context.Context, k booking.IdempotencyKey, resp booking.SavedResponse) error {
	_, err := s.poolFor(ctx).Exec(ctx, `
		UPDATE idempotency_keys SET status_code = $4, body = $5, headers = $6
		WHERE scope = $1 AND key = $2 AND fingerprint = $3 AND status_code IS NULL`,
		k.Scope, k.Key, k.Fingerprint, resp.Status, resp.Body, resp.Header)
	return classify(err)
}

// AbandonIdempotent forgets an unfinished claim.
func (s *Store) AbandonIdempotent(ctx context.Context, k booking.IdempotencyKey) error {
	_, err := s.poolFor(ctx).Exec(ctx, `
		DELETE FROM idempotency_keys WHERE scope = $1 AND key = $2 AND fingerprint = $3 AND status_code IS NULL`,
		k.Scope, k.Key, k.Fingerprint)
	return classify(err)
}

// PruneIdempotency deletes up to limit records created at or before cutoff,
// oldest first, walking the created_at index. SKIP LOCKED lets two processes
// prune at once without waiting on each other's rows.
func (s *Store) PruneIdempotency(ctx context.Context, cutoff time.Time, limit int) (int, error) {
	tag, err := s.poolFor(ctx).Exec(ctx, `
		DELETE FROM idempotency_keys WHERE (scope, key) IN (
			SELECT scope, key FROM idempotency_keys WHERE created_at <= $1
			ORDER BY created_at LIMIT $2 FOR UPDATE SKIP LOCKED)`, cutoff, limit)
	if err != nil {
		return 0, classify(err)
	}
	return int(tag.RowsAffected()), nil
}

// IdempotencyRecords counts the records kept, for tests and metrics.
func (s *Store) IdempotencyRecords(ctx context.Context) (int, error) {
	var n int
	err := s.poolFor(ctx).QueryRow(ctx, `SELECT count(*) FROM idempotency_keys`).Scan(&n)
	return n, classify(err)
}
