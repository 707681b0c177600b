package waitingroom_test

import (
	"testing"
	"time"

	"github.com/foyer-dev/foyer/waitingroom"
)

// TestInfoLastInLine: the wait an operator is shown for the last in line is
// the one that fan is told once the line moves, and counts the time to the
// start before it.
func TestInfoLastInLine(t *testing.T) {
	e := newEnv(t)
	start := e.clock.Now().Add(time.Minute)
	r := e.node("info", waitingroom.Settings{
		NewUsersPerMinute: 60, TotalActiveUsers: 10000, SessionDuration: time.Hour,
		PrequeueStart: e.clock.Now().Add(-time.Minute), EventStart: start,
	})
	var last waitingroom.Visit
	for range 10 {
		last = e.join(r)
	}
	e.step(1, r)
	in := r.Info()
	if in.Phase != waitingroom.Prequeue || in.Phase.String() != "prequeue" || in.Admitting || in.Waiting != 10 {
		t.Fatalf("before the start: phase %s, admitting %v, waiting %d", in.Phase, in.Admitting, in.Waiting)
	}
	// 59 s to the start, then ten places at one a second.
	if in.LastETA == nil || *in.LastETA != 69*time.Second {
		t.Fatalf("last in line ETA %v, want 69s", in.LastETA)
	}

	e.step(60, r) // the start, and the first admissions
	in = r.Info()
	if in.Phase != waitingroom.Live || !in.Admitting || in.LastETA == nil || in.Snapshot.Serving == 0 {
		t.Fatalf("after the start: phase %s, admitting %v, ETA %v, serving %d", in.Phase, in.Admitting, in.LastETA, in.Snapshot.Serving)
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
