package redisstore

import (
	"context"
	"fmt"
	"time"

	"github.com/foyer-dev/foyer/waitingroom"
)

// DrawSeed implements waitingroom.Store: the first candidate stored wins, on
// whichever node it was drawn.
func (s *Store) DrawSeed(ctx context.Context, room string, candidate []byte, now time.Time) ([]byte, time.Time, error) {
	v, err := s.run(ctx, "draw seed", drawSeedScript, room, candidate, now.UnixMicro())
	if err != nil {
		return nil, time.Time{}, err
	}
	return seedReply(v, "draw seed", room, now)
}

// PhaseSeed implements waitingroom.Store: the first seed stored for the
// phase wins, on whichever node.
func (s *Store) PhaseSeed(ctx context.Context, room, phase string, candidate []byte, now time.Time) ([]byte, time.Time, error) {
	v, err := s.run(ctx, "phase seed", phaseSeedScript, room, phase, candidate, now.UnixMicro())
	if err != nil {
		return nil, time.Time{}, err
	}
	return seedReply(v, "phase seed", room, now)
}

// seedReply reads drawseed.lua's (and phaseseed.lua's) {seed, committed at}.
func seedReply(v any, op, room string, now time.Time) ([]byte, time.Time, error) {
	a, ok := v.([]any)
	if !ok || len(a) != 2 {
		return nil, time.Time{}, fmt.Errorf("redisstore: %s %s: unexpected reply %v", op, room, v)
	}
	at, err := toInt(a[1])
	if err != nil {
		return nil, time.Time{}, fmt.Errorf("redisstore: %s %s: %w", op, room, err)
	}
	var seed []byte
	if s := str(a[0]); s != "" {
		seed = []byte(s)
	}
	return seed, fromMicros(at, now), nil
}

// CommitLanes implements waitingroom.Store: the first time stored for a
// phase's commitment wins, on whichever node made it.
func (s *Store) CommitLanes(ctx context.Context, room, phase, commitment string, now time.Time) (time.Time, error) {
	v, err := s.run(ctx, "lane commitment", laneCommitScript, room, phase+":"+commitment, now.UnixMicro())
	if err != nil {
		return time.Time{}, err
	}
	at, err := toInt(v)
	if err != nil {
		return time.Time{}, fmt.Errorf("redisstore: lane commitment %s: %w", room, err)
	}
	return fromMicros(at, now), nil
}

// Overrides implements waitingroom.Store. It is a single read, not a script.
func (s *Store) Overrides(ctx context.Context, room string) ([]byte, int64, error) {
	v, err := s.client.HMGet(ctx, roomKeys(s.prefix, room)[0], "ovr", "ver").Result()
	if err != nil {
		s.reloadTopology(err)
		return nil, 0, fmt.Errorf("redisstore: overrides %s: %w", room, err)
	}
	if v[1] == nil {
		return nil, 0, waitingroom.ErrNoRoom // every room has a version, from 0
	}
	ver, err := toInt(v[1])
	if err != nil {
		return nil, 0, fmt.Errorf("redisstore: overrides %s: %w", room, err)
	}
	var data []byte
	if v[0] != nil {
		data = []byte(str(v[0]))
	}
	return data, ver, nil
}

// SaveOverrides implements waitingroom.Store, as a compare-and-swap on the
// version inside one script.
func (s *Store) SaveOverrides(ctx context.Context, room string, data []byte, expect int64) (int64, error) {
	v, err := s.run(ctx, "save overrides", saveOverridesScript, room, data, expect)
	if err != nil {
		return 0, err
	}
	ver, err := toInt(v)
	if err != nil {
		return 0, fmt.Errorf("redisstore: save overrides %s: %w", room, err)
	}
	if ver < 0 {
		return 0, waitingroom.ErrVersionConflict
	}
	return ver, nil
}
