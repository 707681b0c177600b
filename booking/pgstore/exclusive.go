package pgstore

import (
	"context"
	"fmt"
)

// seedLock is the advisory lock id under which processes sharing a database
// take turns at one-time set-up work, such as seeding the demo event.
const seedLock = 0x666f796572 + 1

// Exclusive runs fn while this process holds a database-wide advisory lock,
// so that of several processes starting at once on one database, one runs
// fn and the others run it after, seeing its result. fn may use the store.
func (s *Store) Exclusive(ctx context.Context, fn func(context.Context) error) error {
	conn, err := s.poolFor(ctx).Acquire(ctx)
	if err != nil {
		return classify(err)
	}
	defer conn.Release()
	if _, err := conn.Exec(ctx, "SELECT pg_advisory_lock($1)", seedLock); err != nil {
		return fmt.Errorf("taking the set-up lock: %w", classify(err))
	}
	defer conn.Exec(context.WithoutCancel(ctx), "SELECT pg_advisory_unlock($1)", seedLock) //nolint:errcheck
	return fn(ctx)
}
