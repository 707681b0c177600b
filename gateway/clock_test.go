package gateway

import (
	"context"
	"sync"
	"testing"
	"time"
)

// testClock replaces the gateway's clock for one test.
type testClock struct {
	mu sync.Mutex
	t  time.Time
}

func useTestClock(t *testing.T) *testClock {
	c := &testClock{t: time.Now().Truncate(time.Second)}
	f := c.Now
	clockOverride.Store(&f)
	t.Cleanup(func() { clockOverride.Store(nil) })
	return c
}

func (c *testClock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.t
}

func (c *testClock) Add(d time.Duration) {
	c.mu.Lock()
	c.t = c.t.Add(d)
	c.mu.Unlock()
}

// step moves the clock on by whole seconds, ticking every live room in this
// process each second, as their controller loops would.
func (c *testClock) step(t *testing.T, seconds int) {
	t.Helper()
	for range seconds {
		c.Add(time.Second)
		rooms.Range(func(_, v any) bool {
			if err := v.(*roomHandle).room.Tick(context.Background()); err != nil {
				t.Errorf("tick: %v", err)
			}
			return true
		})
	}
}
