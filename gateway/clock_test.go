package gateway

import (
	"context"
	"testing"
	"time"

	"github.com/foyer-dev/foyer/internal/clock"
)

// testClock replaces the gateway's clock for one test.
type testClock struct{ *clock.Manual }

func useTestClock(t *testing.T) *testClock {
	c := &testClock{clock.NewManual(time.Now().Truncate(time.Second))}
	f := c.Now
	clockOverride.Store(&f)
	t.Cleanup(func() { clockOverride.Store(nil) })
	return c
}

// step moves the clock on by whole seconds, ticking every live room in this
// process each second, as their controller loops would.
func (c *testClock) step(t *testing.T, seconds int) {
	t.Helper()
	for range seconds {
		c.Advance(time.Second)
		rooms.Range(func(_, v any) bool {
			if err := v.(*roomHandle).room.Tick(context.Background()); err != nil {
				t.Errorf("tick: %v", err)
			}
			return true
		})
	}
}
