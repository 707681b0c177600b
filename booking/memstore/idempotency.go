package memstore

import (
	"context"
	"slices"
	"time"

	"github.com/foyer-dev/foyer/booking"
)

type idempotencyScope struct{ scope, key string }

type idempotencyEntry struct {
	fingerprint string
	createdAt   time.Time
	done        bool
	resp        booking.SavedResponse
}

// BeginIdempotent claims a key, or reports why it cannot.
func (s *Store) BeginIdempotent(_ context.Context, k booking.IdempotencyKey, now time.Time) (booking.IdempotencyResult, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	id := idempotencyScope{k.Scope, k.Key}
	if e, ok := s.idempotency[id]; ok {
		stale := (e.done && now.Sub(e.createdAt) >= booking.IdempotencyKeyTTL) ||
			(!e.done && now.Sub(e.createdAt) >= booking.IdempotencyClaimTimeout)
		if !stale {
			switch {
			case e.fingerprint != k.Fingerprint:
				return booking.IdempotencyResult{State: booking.IdempotencyMismatch}, nil
			case !e.done:
				return booking.IdempotencyResult{State: booking.IdempotencyInFlight}, nil
			default:
				r := e.resp
				r.Body = slices.Clone(r.Body)
				r.Header = r.Header.Clone()
				return booking.IdempotencyResult{State: booking.IdempotencyReplay, Response: r}, nil
			}
		}
	}
	s.idempotency[id] = &idempotencyEntry{fingerprint: k.Fingerprint, createdAt: now}
	return booking.IdempotencyResult{State: booking.IdempotencyNew}, nil
}

// CompleteIdempotent saves the response for replay.
func (s *Store) CompleteIdempotent(_ context.Context, k booking.IdempotencyKey, resp booking.SavedResponse) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if e, ok := s.idempotency[idempotencyScope{k.Scope, k.Key}]; ok && e.fingerprint == k.Fingerprint {
		e.done = true
		e.resp = booking.SavedResponse{Status: resp.Status, Body: slices.Clone(resp.Body), Header: resp.Header.Clone()}
	}
	return nil
}

// AbandonIdempotent forgets an unfinished claim.
func (s *Store) AbandonIdempotent(_ context.Context, k booking.IdempotencyKey) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	id := idempotencyScope{k.Scope, k.Key}
	if e, ok := s.idempotency[id]; ok && !e.done && e.fingerprint == k.Fingerprint {
		delete(s.idempotency, id)
	}
	return nil
}

// PruneIdempotency deletes records created at or before cutoff.
func (s *Store) PruneIdempotency(_ context.Context, cutoff time.Time, limit int) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return sweep(s.idempotency, limit,
		func(e *idempotencyEntry) bool { return !e.createdAt.After(cutoff) },
		func(id idempotencyScope, _ *idempotencyEntry) { delete(s.idempotency, id) }), nil
}

// IdempotencyRecords counts the records kept, for tests and metrics.
func (s *Store) IdempotencyRecords(context.Context) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return len(s.idempotency), nil
}
