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

// TestPacedFollowsItsInterval: the function runs after each interval next
// gives, which may change from one run to the next.
func TestPacedFollowsItsInterval(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	var calls atomic.Int32
	intervals := []time.Duration{time.Millisecond, 2 * time.Millisecond, time.Millisecond}
	var asked atomic.Int32
	done := make(chan struct{})
	go func() {
		Paced(ctx, func() time.Duration { return intervals[int(asked.Add(1)-1)%len(intervals)] }, func(context.Context) {
			if calls.Add(1) == 5 {
				cancel()
			}
		})
		close(done)
	}()
	select {
	case <-done:
	case <-time.After(10 * time.Second):
		t.Fatal("Paced did not return after its context ended")
	}
	if calls.Load() != 5 || asked.Load() != 6 {
		t.Fatalf("%d calls, %d intervals asked; want 5 and 6 (one before each call, one after)", calls.Load(), asked.Load())
	}
}
