package redisstore

import (
	"context"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/foyer-dev/foyer/waitingroom"
)

// History implements waitingroom.Store: entries of the room's history list
// (see lua/lib.lua, record_admission), read in one script call so that an
// unknown room answers waitingroom.ErrNoRoom like every other operation.
func (s *Store) History(ctx context.Context, room string, from, limit int) ([]waitingroom.HistoryEntry, error) {
	limit = min(limit, waitingroom.MaxHistoryPage)
	if from < 0 || limit <= 0 {
		return nil, nil
	}
	return runEntries(ctx, s, "history", historyScript, room, parseHistoryEntry, from, limit)
}

// runEntries runs a script whose answer is a list of entries, and reads each
// with parse.
func runEntries[T any](ctx context.Context, s *Store, op string, script *redis.Script, room string, parse func(string) (T, error), args ...any) ([]T, error) {
	a, err := s.runList(ctx, op, script, room, args...)
	if err != nil {
		return nil, err
	}
	out := make([]T, 0, len(a))
	for _, x := range a {
		e, err := parse(str(x))
		if err != nil {
			return nil, fmt.Errorf("redisstore: %s %s: %w", op, room, err)
		}
		out = append(out, e)
	}
	return out, nil
}

// runList runs a script whose answer is a list of entries.
func (s *Store) runList(ctx context.Context, op string, script *redis.Script, room string, args ...any) ([]any, error) {
	v, err := s.run(ctx, op, script, room, args...)
	if err != nil {
		return nil, err
	}
	a, ok := v.([]any)
	if !ok {
		return nil, fmt.Errorf("redisstore: %s %s: unexpected reply %T", op, room, v)
	}
	return a, nil
}

// parseHistoryEntry reads "a:start:count:at", "d:start:size:number:at" or a
// lanes entry (parseLaneStep).
func parseHistoryEntry(s string) (waitingroom.HistoryEntry, error) {
	if strings.HasPrefix(s, "s:") {
		return parseSupplyEntry(s)
	}
	if strings.HasPrefix(s, "l:") {
		return parseLaneStep(s)
	}
	if strings.HasPrefix(s, "w") {
		return parseWaitlistEntry(s)
	}
	f := strings.Split(s, ":")
	var kind waitingroom.HistoryKind
	switch {
	case len(f) == 4 && f[0] == "a":
		kind = waitingroom.HistoryAdmit
	case len(f) == 5 && f[0] == "d":
		kind = waitingroom.HistoryDraw
	default:
		return waitingroom.HistoryEntry{}, fmt.Errorf("bad entry %q", s)
	}
	n := make([]int64, len(f)-1)
	for i, x := range f[1:] {
		v, err := strconv.ParseInt(x, 10, 64)
		if err != nil || (i < len(f)-2 && v < 0) {
			return waitingroom.HistoryEntry{}, fmt.Errorf("bad entry %q", s)
		}
		n[i] = v
	}
	e := waitingroom.HistoryEntry{Kind: kind, Start: uint64(n[0]), Count: uint64(n[1]), At: time.UnixMicro(n[len(n)-1]).UTC()}
	if kind == waitingroom.HistoryDraw {
		e.Number = uint64(n[2])
	}
	return e, nil
}
