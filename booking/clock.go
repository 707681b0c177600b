package booking

import (
	"time"

	"github.com/foyer-dev/foyer/internal/clock"
)

// Clock is the service's only source of time. Expiry of holds, webhook
// tolerances and schedules all read it, so tests move time instead of sleeping.
type Clock interface {
	Now() time.Time
}

// SystemClock is the wall clock.
type SystemClock struct{}

// Now returns the current time.
func (SystemClock) Now() time.Time { return time.Now() }

// ManualClock is a Clock that only moves when told to, for tests. It is safe
// for concurrent use.
type ManualClock = clock.Manual

// NewManualClock starts a manual clock at t.
func NewManualClock(t time.Time) *ManualClock { return clock.NewManual(t) }
