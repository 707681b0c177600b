package redisstore

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"strconv"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/foyer-dev/foyer/waitingroom"
)

// accountBuckets is how many hashes a room's account places are spread over.
// A hash of up to hash-max-listpack-entries (512 by default) small fields is
// kept as one packed listpack, about 40 bytes an account, where one big hash
// would cost 80 (a dict entry and two strings each). 4096 buckets stay packed
// up to about 1.8 million accounts per room; the key of each costs ~140
// bytes, which 100,000 accounts share at ~24 a bucket (docs/configuration.md, "The account
// block", has the figures).
const accountBuckets = 4096

// accountBucket is the key of the hash holding account's place: under the
// room's hash tag, so a Cluster keeps it on the room's shard.
func accountBucket(prefix, room string, account waitingroom.AccountKey) string {
	n := binary.BigEndian.Uint16(account[:2]) % accountBuckets
	return prefix + ":{" + room + "}:acct:" + strconv.Itoa(int(n))
}

// JoinAccount implements waitingroom.Store: one round trip.
func (s *Store) JoinAccount(ctx context.Context, room string, req waitingroom.AccountJoin, now time.Time, lim waitingroom.Limits) (waitingroom.AccountPlace, error) {
	visitor, ok := waitingroom.ParseVisitorID(req.Visitor)
	if !ok {
		return waitingroom.AccountPlace{}, errors.New("redisstore: malformed visitor id")
	}
	var spent uint64
	if req.HasSpent {
		spent = req.Spent + 1
	}
	keys := append(roomKeys(s.prefix, room), accountBucket(s.prefix, room, req.Account))
	keys, weigh := s.weighArgs(keys, room, req.Joiner, lim)
	args := append([]any{now.UnixMicro(), lim.Open, lim.Cap, lim.Session.Microseconds(), lim.Retention.Microseconds(), s.ttlMillis(),
		string(req.Account[:]), req.Visitor, string(visitor[:]), spent,
		now.Unix(), int64(lim.Retention / time.Second)}, weigh...)
	args = append(args, phaseQueueArg(lim))
	v, err := accountScript.Run(ctx, s.client, keys, args...).Result()
	if errors.Is(err, redis.Nil) {
		return waitingroom.AccountPlace{}, waitingroom.ErrNoRoom
	}
	if err != nil {
		s.reloadTopology(err)
		return waitingroom.AccountPlace{}, fmt.Errorf("redisstore: join account %s: %w", room, err)
	}
	if n, ok := v.(int64); ok && n == settlingReply {
		return waitingroom.AccountPlace{}, waitingroom.ErrSettling
	}
	a, ok := v.([]any)
	if ok && len(a) == 2 {
		r, err := ints(a, 2)
		if err != nil {
			return waitingroom.AccountPlace{}, fmt.Errorf("redisstore: join account %s: %w", room, err)
		}
		why, err := refusal(r[0])
		if err != nil {
			return waitingroom.AccountPlace{}, fmt.Errorf("redisstore: join account %s: %w", room, err)
		}
		return waitingroom.AccountPlace{JoinResult: waitingroom.JoinResult{Refused: why, RetryAfter: time.Duration(r[1]) * time.Microsecond}}, nil
	}
	if !ok || len(a) != 6 {
		return waitingroom.AccountPlace{}, fmt.Errorf("redisstore: join account %s: unexpected reply %v", room, v)
	}
	raw, _ := a[4].(string)
	held, ok := waitingroom.VisitorFromBytes([]byte(raw))
	if !ok {
		return waitingroom.AccountPlace{}, fmt.Errorf("redisstore: join account %s: malformed visitor in reply", room)
	}
	var n [5]int64
	for i, x := range []any{a[0], a[1], a[2], a[3], a[5]} {
		if n[i], err = toInt(x); err != nil {
			return waitingroom.AccountPlace{}, fmt.Errorf("redisstore: join account %s: %w", room, err)
		}
	}
	out := waitingroom.AccountPlace{
		JoinResult: waitingroom.JoinResult{Key: uint64(n[1])},
		Visitor:    held,
		Joined:     time.Unix(n[4], 0).In(now.Location()),
		Existing:   n[0] == 1,
	}
	if n[2] == 1 {
		out.Admitted = true
		out.Expires = fromMicros(n[3], now)
	}
	return out, nil
}

// dropAccounts deletes every account bucket of room (see Drop), a few
// hundred keys per command.
func (s *Store) dropAccounts(ctx context.Context, room string) error {
	keys := accountKeys(s.prefix, room)
	for len(keys) > 0 {
		n := min(len(keys), 512)
		if err := s.client.Del(ctx, keys[:n]...).Err(); err != nil {
			return err
		}
		keys = keys[n:]
	}
	return nil
}

// accountKeys lists every account bucket of room.
func accountKeys(prefix, room string) []string {
	keys := make([]string, accountBuckets)
	base := prefix + ":{" + room + "}:acct:"
	for i := range keys {
		keys[i] = base + strconv.Itoa(i)
	}
	return keys
}
