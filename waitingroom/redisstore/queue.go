package redisstore

import (
	"context"
	"fmt"
	"time"

	"github.com/foyer-dev/foyer/waitingroom"
)

// Init implements waitingroom.Store.
func (s *Store) Init(ctx context.Context, room string, seed waitingroom.Seed) error {
	c := seed.Counters
	inc := seed.Incarnation
	if inc == "" {
		inc = waitingroom.NewIncarnation()
	}
	_, err := s.run(ctx, "init", initScript, room,
		c.Seq, c.Serving, c.Admitted, c.Claimed, c.Abandoned,
		seed.Held, seed.HeldUntil.UnixMicro(), seed.DrawClosed, seed.DrawSize,
		s.ttlMillis(), inc)
	return err
}

// Join implements waitingroom.Store. It is one round trip; for a fan who waits,
// it writes nothing but the order-key counter.
func (s *Store) Join(ctx context.Context, room, visitor string, now time.Time, lim waitingroom.Limits) (waitingroom.JoinResult, error) {
	v, err := s.run(ctx, "join", joinScript, room,
		now.UnixMicro(), visitor, lim.Open, lim.Cap,
		lim.Session.Microseconds(), lim.Retention.Microseconds(), s.ttlMillis())
	if err != nil {
		return waitingroom.JoinResult{}, err
	}
	r, err := ints(v, 3)
	if err != nil {
		return waitingroom.JoinResult{}, fmt.Errorf("redisstore: join %s: %w", room, err)
	}
	res := waitingroom.JoinResult{Key: uint64(r[0])}
	if r[1] == 1 {
		res.Admitted = true
		res.Expires = fromMicros(r[2], now)
	}
	return res, nil
}

// Claim implements waitingroom.Store. It is one round trip.
func (s *Store) Claim(ctx context.Context, room, visitor string, place uint64, now time.Time, lim waitingroom.Limits) (waitingroom.ClaimResult, error) {
	v, err := s.run(ctx, "claim", claimScript, room,
		now.UnixMicro(), visitor, place, lim.Cap,
		lim.Session.Microseconds(), lim.Retention.Microseconds(), s.ttlMillis())
	if err != nil {
		return waitingroom.ClaimResult{}, err
	}
	r, err := ints(v, 2)
	if err != nil {
		return waitingroom.ClaimResult{}, fmt.Errorf("redisstore: claim %s: %w", room, err)
	}
	switch r[0] {
	case 0:
		return waitingroom.ClaimResult{Status: waitingroom.Claimed, Expires: fromMicros(r[1], now)}, nil
	case 1:
		return waitingroom.ClaimResult{Status: waitingroom.NotYet}, nil
	case 2:
		return waitingroom.ClaimResult{Status: waitingroom.Full}, nil
	case 3:
		return waitingroom.ClaimResult{Status: waitingroom.Finished}, nil
	}
	return waitingroom.ClaimResult{}, fmt.Errorf("redisstore: claim %s: unknown status %d", room, r[0])
}

// Release implements waitingroom.Store.
func (s *Store) Release(ctx context.Context, room, visitor, passID string, passExpiry, now time.Time, _ waitingroom.Limits) error {
	// Decided here, at full clock precision: a pass that has expired already
	// needs no revocation.
	if !passExpiry.After(now) {
		passID = ""
	}
	_, err := s.run(ctx, "release", releaseScript, room,
		visitor, passID, passExpiry.UnixMicro(), s.ttlMillis())
	return err
}

// Advance implements waitingroom.Store. Only the first call in a given unix
// second, from whichever node, does anything.
func (s *Store) Advance(ctx context.Context, room string, now time.Time, lim waitingroom.Limits) error {
	_, err := s.run(ctx, "advance", advanceScript, room,
		now.UnixMicro(), now.Unix(), lim.Open, lim.CloseDraw, lim.Rate, lim.Cap,
		lim.Grace.Microseconds(), waitingroom.ReturnerWindow.Microseconds(),
		maxCatchUpTicks, s.ttlMillis())
	return err
}
