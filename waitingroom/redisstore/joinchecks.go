package redisstore

import (
	"fmt"
	"strconv"
	"time"

	"github.com/foyer-dev/foyer/waitingroom"
)

// What a join is weighed by (waitingroom.Joiner), kept for every node that
// shares the store and decided in the join's own script, so it costs no
// round trip of its own (see weigh in lua/lib.lua):
//
//   - "<prefix>:{<room>}:jl:<network>", a string: the network's theoretical
//     arrival time under join_limit (a GCRA), in Unix microseconds, expiring
//     when it has passed (the network then has its whole burst again);
//   - "<prefix>:{<room>}:seed:<seed>", a string: a seed that bought a place,
//     holding until when (Unix microseconds) it is remembered, and expiring
//     then.
//
// Both carry the room's hash tag, so a Cluster keeps them on the room's shard,
// and are passed to the scripts as keys. A network or seed costs one small
// key while it matters, and nothing after (docs/bots.md, "Bots and abuse", has the
// measured bytes).
const (
	limitKeyName = "jl"
	seedKeyName  = "seed"
)

// roomKey is the key of room under prefix with the given name and suffix.
func roomKey(prefix, room, name, suffix string) string {
	return prefix + ":{" + room + "}:" + name + ":" + suffix
}

// weighing adds to keys the networks and seeds the joiners are weighed by
// (each once), and returns the keys and what join.lua reads for each joiner:
// "<network>,<seed>,<seed until>;" (indices into the keys, from 1; 0: none),
// or "" when nobody is weighed, which keeps a crowd's join as cheap as
// before.
func (s *Store) weighing(keys []string, room string, joiners []waitingroom.Joiner, lim waitingroom.Limits) ([]string, string) {
	limited := !lim.JoinLimit.IsZero()
	weighed := false
	for _, j := range joiners {
		if j.Seed != "" || limited && j.Client != "" {
			weighed = true
			break
		}
	}
	if !weighed {
		return keys, ""
	}
	index := make(map[string]int, len(joiners))
	add := func(name, suffix string) int {
		k := roomKey(s.prefix, room, name, suffix)
		if i, ok := index[k]; ok {
			return i
		}
		keys = append(keys, k)
		index[k] = len(keys)
		return len(keys)
	}
	b := make([]byte, 0, len(joiners)*24)
	for _, j := range joiners {
		li, si := 0, 0
		var until int64
		if limited && j.Client != "" {
			li = add(limitKeyName, j.Client)
		}
		if j.Seed != "" {
			si = add(seedKeyName, j.Seed)
			until = j.SeedUntil.UnixMicro()
		}
		b = strconv.AppendInt(b, int64(li), 10)
		b = append(b, ',')
		b = strconv.AppendInt(b, int64(si), 10)
		b = append(b, ',')
		b = strconv.AppendInt(b, max(until, 0), 10)
		b = append(b, ';')
	}
	return keys, string(b)
}

// weighArgs are the account script's keys and arguments for what a new place
// of j is weighed by (see lua/account.lua).
func (s *Store) weighArgs(keys []string, room string, j waitingroom.Joiner, lim waitingroom.Limits) ([]string, []any) {
	li, si := 0, 0
	var until int64
	if !lim.JoinLimit.IsZero() && j.Client != "" {
		keys = append(keys, roomKey(s.prefix, room, limitKeyName, j.Client))
		li = len(keys)
	}
	if j.Seed != "" {
		keys = append(keys, roomKey(s.prefix, room, seedKeyName, j.Seed))
		si = len(keys)
		until = max(j.SeedUntil.UnixMicro(), 0)
	}
	return keys, []any{lim.JoinLimit.Interval().Microseconds(), lim.JoinLimit.BurstSize(), li, si, until}
}

// refusals reads join.lua's list of refused joiners into out.
func refusals(v any, out []waitingroom.JoinResult) error {
	a, ok := v.([]any)
	if !ok || len(a)%3 != 0 {
		return fmt.Errorf("unexpected refusals %v", v)
	}
	for k := 0; k < len(a); k += 3 {
		r, err := ints(a[k:k+3], 3)
		if err != nil {
			return err
		}
		why, err := refusal(r[1])
		if err != nil || r[0] < 0 || int(r[0]) >= len(out) {
			return fmt.Errorf("unexpected refusal %v", r)
		}
		out[r[0]] = waitingroom.JoinResult{Refused: why, RetryAfter: time.Duration(r[2]) * time.Microsecond}
	}
	return nil
}

// refusal is the waitingroom.Refusal of a script's code (see weigh).
func refusal(code int64) (waitingroom.Refusal, error) {
	switch code {
	case 1:
		return waitingroom.RefusedJoinLimit, nil
	case 2:
		return waitingroom.RefusedSeedSpent, nil
	}
	return 0, fmt.Errorf("unknown refusal %d", code)
}
