package loop

import (
	"context"
	"sync/atomic"
	"testing"
	"time"
)

// TestEveryRunsUntilCancelled: the function runs repeatedly, never two at once,
// and Every returns once the context ends.
func TestEveryRunsUntilCancelled(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	var calls, running, overlap atomic.Int32
	done := make(chan struct{})
	go func() {
		Every(ctx, time.Millisecond, func(context.Context) {
			if running.Add(1) > 1 {
				overlap.Add(1)
			}
			if calls.Add(1) == 5 {
				cancel()
			}
			running.Add(-1)
		})
		close(done)
	}()
	select {
	case <-done:
	case <-time.After(10 * time.Second):
		t.Fatal("Every did not return after its context ended")
	}
	if calls.Load() < 5 || overlap.Load() != 0 {
		t.Fatalf("calls %d, overlapping %d; want at least 5 and none", calls.Load(), overlap.Load())
	}
}
