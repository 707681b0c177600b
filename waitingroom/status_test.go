package waitingroom

import (
	"testing"
	"time"
)

func TestWaitForFillsAtTheRateThenTurnsOver(t *testing.T) {
	v := &view{
		settings: Settings{NewUsersPerMinute: 60, TotalActiveUsers: 10, SessionDuration: 100 * time.Second},
		snap:     Snapshot{Active: 3, Pending: 1},
	}
	cases := []struct{ places, want float64 }{
		{3, 3},                 // within the six free slots: one a second
		{6, 6},                 // exactly the free slots
		{10, 6 + 4/(10.0/100)}, // then the cap turns over once a session
		{106, 6 + 100/(10.0/100)},
	}
	for _, c := range cases {
		if got := v.waitFor(c.places); got != c.want {
			t.Errorf("waitFor(%v) = %v, want %v", c.places, got, c.want)
		}
	}
	v.servingRate = 2
	if got := v.waitFor(10); got != 5 {
		t.Errorf("with a measured pace of 2/s, waitFor(10) = %v, want 5", got)
	}
	v.servingRate = 0
	v.snap.Active = 12 // more live than the cap (a cap lowered at runtime)
	if got := v.waitFor(1); got != 10 {
		t.Errorf("over the cap, waitFor(1) = %v, want one turnover of 10 s", got)
	}
}
