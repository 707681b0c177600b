package waitingroom

import (
	"testing"
	"time"
)

func TestWaitForIsMeasuredNotAssumed(t *testing.T) {
	v := &view{
		healthy:  true,
		settings: Settings{NewUsersPerMinute: 60, TotalActiveUsers: 10, SessionDuration: 100 * time.Second},
		snap:     Snapshot{Active: 3, Pending: 1},
	}
	if w, ok := v.waitFor(3); ok {
		t.Errorf("nothing measured: waitFor(3) = %v, want no estimate whatever the settings say", w)
	}
	v.snap.Pace = Pace{Places: 60, Seconds: 120, Moves: 60} // half a place a second
	if w, ok := v.waitFor(10); !ok || w != 20 {
		t.Errorf("at a measured half a place a second, waitFor(10) = %v %v, want 20", w, ok)
	}
	v.snap.Pace = Pace{Places: 600, Seconds: 120, Moves: 120} // faster than the rate allows
	if w, ok := v.waitFor(10); !ok || w != 10 {
		t.Errorf("measured faster than the rate of one a second, waitFor(10) = %v %v, want 10", w, ok)
	}
	v.snap.Pace = Pace{Places: 60, Seconds: 120, Moves: 2, Still: 45}
	if w, ok := v.waitFor(1); !ok || w != 45 {
		t.Errorf("after 45 s standing still, waitFor(1) = %v %v, want at least as long again", w, ok)
	}
	v.healthy = false
	if w, ok := v.waitFor(1); ok {
		t.Errorf("store unreachable: waitFor(1) = %v, want no estimate (nobody is admitted)", w)
	}
}
