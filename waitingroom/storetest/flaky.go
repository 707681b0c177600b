package storetest

import (
	"context"
	"errors"
	"sync"
	"time"

	"github.com/foyer-dev/foyer/waitingroom"
)

// ErrDown is what a Flaky store returns while it is down.
var ErrDown = errors.New("store down")

// Flaky wraps a store and fails every call while it is switched down, as an
// unreachable server would. Tests of failure semantics use it where stopping a
// real server is not the point.
type Flaky struct {
	waitingroom.Store
	mu   sync.Mutex
	down bool
}

// NewFlaky wraps s, up.
func NewFlaky(s waitingroom.Store) *Flaky { return &Flaky{Store: s} }

// SetDown switches the store down or back up.
func (f *Flaky) SetDown(down bool) {
	f.mu.Lock()
	f.down = down
	f.mu.Unlock()
}

func (f *Flaky) err() error {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.down {
		return ErrDown
	}
	return nil
}

// Init implements waitingroom.Store.
func (f *Flaky) Init(ctx context.Context, room string, seed waitingroom.Recall) error {
	if err := f.err(); err != nil {
		return err
	}
	return f.Store.Init(ctx, room, seed)
}

// Join implements waitingroom.Store.
func (f *Flaky) Join(ctx context.Context, room, v string, now time.Time, lim waitingroom.Limits) (waitingroom.JoinResult, error) {
	if err := f.err(); err != nil {
		return waitingroom.JoinResult{}, err
	}
	return f.Store.Join(ctx, room, v, now, lim)
}

// JoinMany implements waitingroom.Store.
func (f *Flaky) JoinMany(ctx context.Context, room string, vs []waitingroom.Joiner, now time.Time, lim waitingroom.Limits) ([]waitingroom.JoinResult, error) {
	if err := f.err(); err != nil {
		return nil, err
	}
	return f.Store.JoinMany(ctx, room, vs, now, lim)
}

// Claim implements waitingroom.Store.
func (f *Flaky) Claim(ctx context.Context, room, v string, place uint64, now time.Time, lim waitingroom.Limits) (waitingroom.ClaimResult, error) {
	if err := f.err(); err != nil {
		return waitingroom.ClaimResult{}, err
	}
	return f.Store.Claim(ctx, room, v, place, now, lim)
}

// Release implements waitingroom.Store.
func (f *Flaky) Release(ctx context.Context, room, v, passID string, exp, now time.Time, lim waitingroom.Limits) error {
	if err := f.err(); err != nil {
		return err
	}
	return f.Store.Release(ctx, room, v, passID, exp, now, lim)
}

// Leave implements waitingroom.Store.
func (f *Flaky) Leave(ctx context.Context, room, v string, place uint64, now time.Time, lim waitingroom.Limits) error {
	if err := f.err(); err != nil {
		return err
	}
	return f.Store.Leave(ctx, room, v, place, now, lim)
}

// Requeue implements waitingroom.Store.
func (f *Flaky) Requeue(ctx context.Context, room, v, passID string, exp, now time.Time, lim waitingroom.Limits) (waitingroom.RequeueResult, error) {
	if err := f.err(); err != nil {
		return waitingroom.RequeueResult{}, err
	}
	return f.Store.Requeue(ctx, room, v, passID, exp, now, lim)
}

// Advance implements waitingroom.Store.
func (f *Flaky) Advance(ctx context.Context, room string, now time.Time, lim waitingroom.Limits) error {
	if err := f.err(); err != nil {
		return err
	}
	return f.Store.Advance(ctx, room, now, lim)
}

// Beat implements waitingroom.Store.
func (f *Flaky) Beat(ctx context.Context, room string, b waitingroom.Beats, now time.Time, lim waitingroom.Limits) error {
	if err := f.err(); err != nil {
		return err
	}
	return f.Store.Beat(ctx, room, b, now, lim)
}

// ToldTally implements waitingroom.Store.
func (f *Flaky) ToldTally(ctx context.Context, room string) (waitingroom.ToldTally, error) {
	if err := f.err(); err != nil {
		return waitingroom.ToldTally{}, err
	}
	return f.Store.ToldTally(ctx, room)
}

// Snapshot implements waitingroom.Store.
func (f *Flaky) Snapshot(ctx context.Context, room string, now time.Time, after int64) (waitingroom.Snapshot, error) {
	if err := f.err(); err != nil {
		return waitingroom.Snapshot{}, err
	}
	return f.Store.Snapshot(ctx, room, now, after)
}

// CommitLanes implements waitingroom.Store.
func (f *Flaky) CommitLanes(ctx context.Context, room, phase, commitment string, now time.Time) (time.Time, error) {
	if err := f.err(); err != nil {
		return time.Time{}, err
	}
	return f.Store.CommitLanes(ctx, room, phase, commitment, now)
}

// DrawSeed implements waitingroom.Store.
func (f *Flaky) DrawSeed(ctx context.Context, room string, candidate []byte, now time.Time) ([]byte, time.Time, error) {
	if err := f.err(); err != nil {
		return nil, time.Time{}, err
	}
	return f.Store.DrawSeed(ctx, room, candidate, now)
}

// Overrides implements waitingroom.Store.
func (f *Flaky) Overrides(ctx context.Context, room string) ([]byte, int64, error) {
	if err := f.err(); err != nil {
		return nil, 0, err
	}
	return f.Store.Overrides(ctx, room)
}

// SaveOverrides implements waitingroom.Store.
func (f *Flaky) SaveOverrides(ctx context.Context, room string, data []byte, expect int64) (int64, error) {
	if err := f.err(); err != nil {
		return 0, err
	}
	return f.Store.SaveOverrides(ctx, room, data, expect)
}

// JoinAccount implements waitingroom.Store.
func (f *Flaky) JoinAccount(ctx context.Context, room string, req waitingroom.AccountJoin, now time.Time, lim waitingroom.Limits) (waitingroom.AccountPlace, error) {
	if err := f.err(); err != nil {
		return waitingroom.AccountPlace{}, err
	}
	return f.Store.JoinAccount(ctx, room, req, now, lim)
}
