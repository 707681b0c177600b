package gateway

import (
	"context"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/foyer-dev/foyer/waitingroom"
)

// TestWaitAndSessionHistograms: a fan let straight in waited 0 s, a fan who
// waited 90 s for a slot is counted with 90 s, once (polls after the claim
// count nothing); the origin's revoke of the first fan's session after 40 s
// is a 40 s session; and both histograms are exported per room in seconds.
func TestWaitAndSessionHistograms(t *testing.T) {
	clock := useTestClock(t)
	room := "times-" + t.Name()
	h := testHandler(t, Handler{Room: room, Settings: waitingroom.Settings{TotalActiveUsers: 1, NewUsersPerMinute: 60, SessionDuration: 10 * time.Minute}}, nil)
	tick := func(seconds int) {
		for range seconds {
			clock.Advance(time.Second)
			if err := h.room.Tick(context.Background()); err != nil {
				t.Fatal(err)
			}
		}
	}
	first := serve(h, &origin{}, get("/events/1"))
	pass := cookieFrom(first, "foyer_pass")
	if pass == nil {
		t.Fatal("the first fan was not let straight in")
	}
	second := serve(h, &origin{}, get("/_waiting-room/status"))
	ticket := cookieFrom(second, "foyer_ticket")
	tick(40)
	// The origin is done with the first fan: their slot frees.
	if rec := serve(h, &origin{command: "revoke"}, get("/events/1", pass)); rec.Code != 200 {
		t.Fatalf("revoke: %d %s", rec.Code, rec.Body)
	}
	tick(50)
	var got *waitingroom.Status
	for range 5 {
		rec := serve(h, &origin{}, get("/_waiting-room/status", ticket))
		if c := cookieFrom(rec, "foyer_ticket"); c != nil {
			ticket = c
		}
		if cookieFrom(rec, "foyer_pass") != nil {
			got = &waitingroom.Status{State: waitingroom.StateAdmitted}
		}
		tick(1)
	}
	if got == nil {
		t.Fatal("the second fan was never admitted")
	}

	reg := prometheus.NewPedanticRegistry()
	reg.MustRegister(&roomCollector{rooms: func() []liveRoom { return groupRooms([]*waitingroom.Room{h.room}) }})
	families, err := reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	hist := map[string]struct {
		count uint64
		sum   float64
	}{}
	for _, f := range families {
		for _, m := range f.GetMetric() {
			if hh := m.GetHistogram(); hh != nil {
				hist[f.GetName()] = struct {
					count uint64
					sum   float64
				}{hh.GetSampleCount(), hh.GetSampleSum()}
			}
		}
	}
	wait := hist["foyer_waiting_room_wait_duration_seconds"]
	if wait.count != 2 || wait.sum < 90 || wait.sum > 92 {
		t.Errorf("wait: %d observations summing %.0f s, want 2 (0 s and 90 s)", wait.count, wait.sum)
	}
	session := hist["foyer_waiting_room_session_duration_seconds"]
	if session.count != 1 || session.sum < 39 || session.sum > 41 {
		t.Errorf("session: %d observations summing %.0f s, want one of 40 s", session.count, session.sum)
	}
}
