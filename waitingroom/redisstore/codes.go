package redisstore

import (
	"context"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/foyer-dev/foyer/waitingroom"
)

// Access codes (waitingroom.CodeKeeper) live beside the room's line, apart
// from it:
//
//   - "<prefix>:{<room>}:codes", a hash: a code's ID (its keyed hash) to
//     "<max uses>,<lane>";
//   - "<prefix>:{<room>}:codeuses", a hash: a code's ID to its uses.
//
// Both carry the room's hash tag, so a try is one script on the room's shard
// with the network's join_limit key (lua/coderedeem.lua), and both expire
// after the store's ttl without a batch or a use.
const (
	codesKeyName    = "codes"
	codeUsesKeyName = "codeuses"
)

func (s *Store) codeKeys(room string) []string {
	base := s.prefix + ":{" + room + "}:"
	return []string{base + codesKeyName, base + codeUsesKeyName}
}

// AddCodes implements waitingroom.Store.
func (s *Store) AddCodes(ctx context.Context, room string, codes []waitingroom.CodeEntry) error {
	args := make([]any, 0, 1+2*len(codes))
	args = append(args, s.ttlMillis())
	for _, c := range codes {
		args = append(args, c.ID, strconv.Itoa(c.MaxUses)+","+c.Lane)
	}
	v, err := codeAddScript.Run(ctx, s.client, s.codeKeys(room), args...).Result()
	if err != nil {
		s.reloadTopology(err)
		return fmt.Errorf("redisstore: codes %s: %w", room, err)
	}
	if n, _ := toInt(v); n != 1 {
		return waitingroom.ErrCodeExists
	}
	return nil
}

// RedeemCode implements waitingroom.Store.
func (s *Store) RedeemCode(ctx context.Context, room string, try waitingroom.CodeAttempt, now time.Time, lim waitingroom.Limits) (waitingroom.CodeResult, error) {
	keys := append(roomKeys(s.prefix, room), s.codeKeys(room)...)
	if !lim.JoinLimit.IsZero() && try.Client != "" {
		keys = append(keys, roomKey(s.prefix, room, limitKeyName, try.Client))
	}
	args := make([]any, 0, 4+len(try.IDs))
	args = append(args, now.UnixMicro(), lim.JoinLimit.Interval().Microseconds(), lim.JoinLimit.BurstSize(), s.ttlMillis())
	for _, id := range try.IDs {
		args = append(args, id)
	}
	v, err := s.runOn(ctx, "redeem", codeRedeemScript, room, keys, args...)
	if err != nil {
		return waitingroom.CodeResult{}, err
	}
	a, ok := v.([]any)
	if !ok || len(a) != 4 {
		return waitingroom.CodeResult{}, fmt.Errorf("redisstore: redeem %s: unexpected reply %v", room, v)
	}
	r, err := ints(a[:2], 2)
	if err != nil {
		return waitingroom.CodeResult{}, err
	}
	res := waitingroom.CodeResult{Lane: str(a[2]), ID: str(a[3])}
	switch r[0] {
	case 0:
		res.Status = waitingroom.CodeAccepted
	case 1:
		res.Status = waitingroom.CodeWrong
	case 2:
		res.Status = waitingroom.CodeUsedUp
	case 3:
		res.Status, res.RetryAfter = waitingroom.CodeLimited, time.Duration(r[1])*time.Microsecond
	default:
		return waitingroom.CodeResult{}, fmt.Errorf("redisstore: redeem %s: unknown status %d", room, r[0])
	}
	return res, nil
}

// ReturnCodeUse implements waitingroom.Store. A use is only ever taken by
// coderedeem.lua; the script gives it back without going below zero.
func (s *Store) ReturnCodeUse(ctx context.Context, room, id string) error {
	if err := codeReturnScript.Run(ctx, s.client, s.codeKeys(room)[1:], id).Err(); err != nil {
		s.reloadTopology(err)
		return fmt.Errorf("redisstore: return a code use %s: %w", room, err)
	}
	return nil
}

// CodeUses implements waitingroom.Store.
func (s *Store) CodeUses(ctx context.Context, room string) ([]waitingroom.CodeUse, error) {
	keys := s.codeKeys(room)
	codes, err := s.client.HGetAll(ctx, keys[0]).Result()
	if err != nil {
		return nil, fmt.Errorf("redisstore: codes %s: %w", room, err)
	}
	uses, err := s.client.HGetAll(ctx, keys[1]).Result()
	if err != nil {
		return nil, fmt.Errorf("redisstore: codes %s: %w", room, err)
	}
	out := make([]waitingroom.CodeUse, 0, len(codes))
	for id, rec := range codes {
		most, lane, ok := strings.Cut(rec, ",")
		n, err := strconv.Atoi(most)
		if !ok || err != nil {
			return nil, fmt.Errorf("redisstore: codes %s: bad record %q", room, rec)
		}
		used, _ := strconv.Atoi(uses[id])
		out = append(out, waitingroom.CodeUse{CodeEntry: waitingroom.CodeEntry{ID: id, Lane: lane, MaxUses: n}, Used: used})
	}
	waitingroom.SortCodeUses(out)
	return out, nil
}
