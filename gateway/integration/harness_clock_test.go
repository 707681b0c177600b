package integration

import (
	"time"

	"github.com/foyer-dev/foyer/internal/clock"
)

// testClock is one test's clock. The test's nodes (gateway.StandaloneOptions)
// and its origin read it and nothing else does, so tests on clocks of their
// own run in parallel, each moving its time without sleeping.
type testClock struct{ *clock.Manual }

func newTestClock() *testClock {
	return &testClock{clock.NewManual(time.Now().Truncate(time.Second))}
}
