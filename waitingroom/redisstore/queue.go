package redisstore

import (
	"context"
	"fmt"
	"strconv"
	"time"

	"github.com/foyer-dev/foyer/waitingroom"
)

// Init implements waitingroom.Store.
func (s *Store) Init(ctx context.Context, room string, seed waitingroom.Recall) error {
	c := seed.Counters
	inc := seed.Incarnation
	if inc == "" {
		inc = waitingroom.NewIncarnation()
	}
	args := []any{c.Seq, c.Serving, c.Admitted, c.Claimed, c.Abandoned,
		seed.Held, seed.HeldUntil.UnixMicro(), seed.DrawClosed, seed.DrawSize,
		s.ttlMillis(), inc, formatEpochs(seed.Epochs), survivors(seed)}
	for _, b := range seed.Batches {
		args = append(args, batchMember(b))
	}
	_, err := s.run(ctx, "init", initScript, room, args...)
	return err
}

// Join implements waitingroom.Store. It is one round trip; for a fan who waits,
// it writes nothing but the order-key counter.
func (s *Store) Join(ctx context.Context, room, visitor string, now time.Time, lim waitingroom.Limits) (waitingroom.JoinResult, error) {
	return waitingroom.JoinOne(ctx, s.JoinMany, room, visitor, now, lim)
}

// JoinMany implements waitingroom.Store: one round trip for the whole batch,
// weighing included (see joinchecks.go).
func (s *Store) JoinMany(ctx context.Context, room string, joiners []waitingroom.Joiner, now time.Time, lim waitingroom.Limits) ([]waitingroom.JoinResult, error) {
	if len(joiners) == 0 {
		return nil, nil
	}
	keys := roomKeys(s.prefix, room)
	keys, checks := s.weighing(keys, room, joiners, lim)
	args := []any{now.UnixMicro(), lim.Open, lim.Cap,
		lim.Session.Microseconds(), lim.Retention.Microseconds(), s.ttlMillis(),
		len(joiners), packVisitors(joiners),
		lim.JoinLimit.Interval().Microseconds(), lim.JoinLimit.BurstSize(), checks, joinLanes(joiners, lim), phaseQueueArg(lim)}
	v, err := s.runOn(ctx, "join", joinScript, room, keys, args...)
	if err != nil {
		return nil, err
	}
	if n, ok := v.(int64); ok && n == settlingReply {
		return nil, waitingroom.ErrSettling
	}
	a, ok := v.([]any)
	if !ok || len(a) < 3 {
		return nil, fmt.Errorf("redisstore: join %s: unexpected reply %v", room, v)
	}
	r, err := ints(a[:3], 3)
	if err != nil {
		return nil, fmt.Errorf("redisstore: join %s: %w", room, err)
	}
	out := make([]waitingroom.JoinResult, len(joiners))
	if len(a) > 3 {
		if err := refusals(a[3], out); err != nil {
			return nil, fmt.Errorf("redisstore: join %s: %w", room, err)
		}
	}
	if len(a) > 4 {
		if err := lanePlaces(a[4], out, fromMicros(r[2], now)); err != nil {
			return nil, fmt.Errorf("redisstore: join %s: %w", room, err)
		}
		return out, nil
	}
	first, admitted := r[0], int(r[1])
	if first < 0 || admitted < 0 || admitted > len(joiners) {
		return nil, fmt.Errorf("redisstore: join %s: unexpected reply %v", room, r)
	}
	var expires time.Time
	if admitted > 0 {
		expires = fromMicros(r[2], now)
	}
	placed := 0
	for i := range out {
		if out[i].Refused != waitingroom.NotRefused {
			continue
		}
		out[i].Key = uint64(first) + uint64(placed)
		if placed < admitted {
			out[i].Admitted = true
			out[i].Expires = expires
		}
		placed++
	}
	return out, nil
}

// Claim implements waitingroom.Store. It is one round trip.
func (s *Store) Claim(ctx context.Context, room, visitor string, place uint64, now time.Time, lim waitingroom.Limits) (waitingroom.ClaimResult, error) {
	v, err := s.run(ctx, "claim", claimScript, room,
		now.UnixMicro(), visitor, place, lim.Cap,
		lim.Session.Microseconds(), lim.Retention.Microseconds(), s.ttlMillis(),
		waitingroom.ReturnerWindow.Microseconds(), lim.ReturnWindow.Microseconds(), lim.Open)
	if err != nil {
		return waitingroom.ClaimResult{}, err
	}
	return claimResult(v, "claim", room, now)
}

// Reclaim implements waitingroom.Store. It is one round trip.
func (s *Store) Reclaim(ctx context.Context, room, visitor string, ends, now time.Time, lim waitingroom.Limits) (waitingroom.ClaimResult, error) {
	v, err := s.run(ctx, "reclaim", reclaimScript, room,
		now.UnixMicro(), visitor, ends.UnixMicro(), lim.Cap,
		lim.Retention.Microseconds(), s.ttlMillis(), lim.Open)
	if err != nil {
		return waitingroom.ClaimResult{}, err
	}
	return claimResult(v, "reclaim", room, now)
}

// claimResult reads claim.lua's (and reclaim.lua's) {status, session end}.
func claimResult(v any, op, room string, now time.Time) (waitingroom.ClaimResult, error) {
	r, err := ints(v, 2)
	if err != nil {
		return waitingroom.ClaimResult{}, fmt.Errorf("redisstore: %s %s: %w", op, room, err)
	}
	if r[0] < 0 || r[0] >= int64(len(claimStatuses)) {
		return waitingroom.ClaimResult{}, fmt.Errorf("redisstore: %s %s: unknown status %d", op, room, r[0])
	}
	res := waitingroom.ClaimResult{Status: claimStatuses[r[0]]}
	if res.Status == waitingroom.Claimed {
		res.Expires = fromMicros(r[1], now)
	}
	return res, nil
}

// claimStatuses are the statuses claim.lua and reclaim.lua answer, by their
// code.
var claimStatuses = [...]waitingroom.ClaimStatus{
	waitingroom.Claimed,
	waitingroom.NotYet,
	waitingroom.Full,
	waitingroom.Finished,
	waitingroom.Held,
	waitingroom.Passed,
	waitingroom.Requeued,
}

// Release implements waitingroom.Store.
func (s *Store) Release(ctx context.Context, room, visitor, passID string, passExpiry, now time.Time, _ waitingroom.Limits) error {
	// Decided here, at full clock precision: a pass that has expired already
	// needs no revocation.
	if !passExpiry.After(now) {
		passID = ""
	}
	_, err := s.run(ctx, "release", releaseScript, room,
		visitor, passID, passExpiry.UnixMicro(), s.ttlMillis(), passEnd(passExpiry))
	return err
}

// passEnd is a pass's end as the scripts compare it with a session's: in
// whole seconds, as the pass carries it, or "" for a call that names no
// pass (whatever session is live).
func passEnd(passExpiry time.Time) string {
	if passExpiry.IsZero() {
		return ""
	}
	return strconv.FormatInt(passExpiry.Unix(), 10)
}

// Requeue implements waitingroom.Store. It is one round trip.
func (s *Store) Requeue(ctx context.Context, room, visitor, passID string, passExpiry, now time.Time, lim waitingroom.Limits) (waitingroom.RequeueResult, error) {
	if !passExpiry.After(now) {
		passID = "" // nothing to revoke: it has expired already
	}
	v, err := s.run(ctx, "requeue", requeueScript, room,
		now.UnixMicro(), visitor, passID, passExpiry.UnixMicro(), s.ttlMillis(),
		min(lim.Requeues, waitingroom.MaxRequeues), now.Add(lim.Session+lim.Retention).UnixMicro(), passEnd(passExpiry))
	if err != nil {
		return waitingroom.RequeueResult{}, err
	}
	r, err := ints(v, 2)
	if err != nil || r[0] < 0 || r[0] > 2 {
		return waitingroom.RequeueResult{}, fmt.Errorf("redisstore: requeue %s: unexpected reply %v", room, v)
	}
	return waitingroom.RequeueResult{Status: waitingroom.RequeueStatus(r[0]), Count: int(r[1])}, nil
}

// Leave implements waitingroom.Store. It is one round trip.
func (s *Store) Leave(ctx context.Context, room, visitor string, place uint64, now time.Time, lim waitingroom.Limits) error {
	_, err := s.run(ctx, "leave", leaveScript, room,
		now.UnixMicro(), visitor, place, lim.Retention.Microseconds(), s.ttlMillis(),
		beatWindow(lim).Microseconds())
	return err
}

// Advance implements waitingroom.Store. Only the first call in a given unix
// second, from whichever node, does anything.
func (s *Store) Advance(ctx context.Context, room string, now time.Time, lim waitingroom.Limits) error {
	spec, weights := advanceLanes(lim)
	_, err := s.run(ctx, "advance", advanceScript, room,
		now.UnixMicro(), now.Unix(), lim.Open, lim.CloseDraw, lim.Rate, lim.Cap,
		lim.Grace.Microseconds(), waitingroom.ReturnerWindow.Microseconds(),
		waitingroom.MaxCatchUpTicks, s.ttlMillis(), lim.Reshuffle, lim.ReturnWindow.Microseconds(),
		lim.SessionIdle.Microseconds(), beatWindow(lim).Microseconds(),
		lim.Retention.Microseconds(), lim.Session.Microseconds(),
		waitingroom.PaceDecay, spec, weights, lim.Waitlist, lim.WaitlistUnits, phaseQueueArg(lim))
	return err
}

// beatWindow is the heartbeat window, 0 when no place is judged.
func beatWindow(lim waitingroom.Limits) time.Duration {
	if lim.WaitingIdle <= 0 {
		return 0
	}
	return waitingroom.BeatWindow(lim.WaitingIdle)
}

// packVisitors writes visitors as join.lua reads them: "<length>:<visitor>"
// one after the other, so that a batch is one argument however many it holds.
func packVisitors(joiners []waitingroom.Joiner) string {
	n := 0
	for _, j := range joiners {
		n += len(j.Visitor) + 4
	}
	b := make([]byte, 0, n)
	for _, j := range joiners {
		b = strconv.AppendInt(b, int64(len(j.Visitor)), 10)
		b = append(b, ':')
		b = append(b, j.Visitor...)
	}
	return string(b)
}
