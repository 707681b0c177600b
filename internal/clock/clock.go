// Package clock holds the manual clock that tests of expiry, rates and
// schedules move by hand instead of sleeping. It must never be the clock of a
// running server.
package clock

import (
	"sync"
	"time"
)

// Manual is a clock that only moves when told to. It is safe for concurrent use.
type Manual struct {
	mu  sync.Mutex
	now time.Time
}

// NewManual starts a manual clock at t.
func NewManual(t time.Time) *Manual { return &Manual{now: t} }

// Now returns the clock's current reading.
func (c *Manual) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.now
}

// Advance moves the clock forward by d.
func (c *Manual) Advance(d time.Duration) {
	c.mu.Lock()
	c.now = c.now.Add(d)
	c.mu.Unlock()
}
