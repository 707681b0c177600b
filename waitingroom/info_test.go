package waitingroom_test

import (
	"testing"
	"time"

	"github.com/foyer-dev/foyer/waitingroom"
)

// TestInfoLastInLine: the wait an operator is shown for the last in line is
// the one that fan is told, none before the line has moved, and counts the
// time to the start before it.
func TestInfoLastInLine(t *testing.T) {
	e := newEnv(t)
	start := e.clock.Now().Add(time.Minute)
	r := e.node("info", waitingroom.Settings{
		NewUsersPerMinute: 60, TotalActiveUsers: 10000, SessionDuration: time.Hour,
		PrequeueStart: e.clock.Now().Add(-time.Minute), EventStart: start,
	})
	var last waitingroom.Visit
	for range 40 {
		last = e.join(r)
	}
	e.step(1, r)
	in := r.Info()
	if in.Phase != waitingroom.Prequeue || in.Phase.String() != "prequeue" || in.Admitting || in.Waiting != 40 {
		t.Fatalf("before the start: phase %s, admitting %v, waiting %d", in.Phase, in.Admitting, in.Waiting)
	}
	// Nothing has moved: no figure, whatever the settings promise.
	if in.LastETA != nil || in.RateMeasured {
		t.Fatalf("before the start: last in line ETA %v, rate measured %v; want neither", in.LastETA, in.RateMeasured)
	}

	e.step(75, r) // the start, and a quarter of a minute of admissions at one a second
	in = r.Info()
	if in.Phase != waitingroom.Live || !in.Admitting || in.LastETA == nil || in.Snapshot.Serving == 0 {
		t.Fatalf("after the start: phase %s, admitting %v, ETA %v, serving %d", in.Phase, in.Admitting, in.LastETA, in.Snapshot.Serving)
	}
	if left := 40 - in.Snapshot.Serving; *in.LastETA < time.Duration(left-2)*time.Second || *in.LastETA > time.Duration(left+2)*time.Second {
		t.Errorf("last in line ETA %v with %d places to go at one a second", *in.LastETA, left)
	}
	if in.ServingRate < 0.9 || in.ServingRate > 1.1 {
		t.Errorf("measured rate %v/s, want about one a second", in.ServingRate)
	}
	told := e.poll(r, last.Ticket).Status.ETASeconds
	if told == nil || time.Duration(*told)*time.Second != *in.LastETA {
		t.Errorf("operator sees %v for the last in line, who is told %v s", *in.LastETA, told)
	}

	paused := true
	if _, err := r.Patch(e.ctx, waitingroom.OverridesOf(waitingroom.Settings{Paused: paused}, "paused")); err != nil {
		t.Fatal(err)
	}
	if in := r.Info(); in.Admitting || in.LastETA != nil || !in.Overrides.Has("paused") || in.Version != 1 {
		t.Errorf("paused: admitting %v, ETA %v, overrides %+v v%d", in.Admitting, in.LastETA, in.Overrides, in.Version)
	}
}
