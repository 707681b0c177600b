// Package loop runs a function at a fixed interval until a context ends: the
// background loop of a room's controller, of the booking service's workers and
// of the fake payment provider's webhook deliveries, written once.
//
// It never runs the function concurrently with itself: a run that takes longer
// than the interval delays the next (ticks in between are dropped, as with
// time.Ticker), so a slow store is never hit by a pile of overlapping steps.
package loop

import (
	"context"
	"time"
)

// Every calls fn every d until ctx ends. The first call is after d.
func Every(ctx context.Context, d time.Duration, fn func(context.Context)) {
	t := time.NewTicker(d)
	defer t.Stop()
	untilDone(ctx, t.C, fn, func() {})
}

// Paced calls fn, waits next(), and again, until ctx ends: Every with an
// interval the caller may change between runs. The first call is after
// next().
func Paced(ctx context.Context, next func() time.Duration, fn func(context.Context)) {
	t := time.NewTimer(next())
	defer t.Stop()
	untilDone(ctx, t.C, fn, func() { t.Reset(next()) })
}

// untilDone calls fn, then rearm, on each tick of c until ctx ends: the loop
// Every and Paced share, one re-arming a timer, the other not needing to.
func untilDone(ctx context.Context, c <-chan time.Time, fn func(context.Context), rearm func()) {
	for {
		select {
		case <-ctx.Done():
			return
		case <-c:
			fn(ctx)
			rearm()
		}
	}
}
