package waitingroom_test

import (
	"errors"
	"net/netip"
	"testing"
	"time"

	"github.com/foyer-dev/foyer/waitingroom"
)

// TestIdledOutTicketReplayIsJoinLimited: a session that idled out leaves its
// ticket good for coming back; past return_window coming back is a new place
// at the back. An outsider keeping that ticket replays it from one address:
// each replay must weigh on the address's join_limit, as a newcomer's join
// and a spent ticket's do, or one idle session buys places without end.
func TestIdledOutTicketReplayIsJoinLimited(t *testing.T) {
	limit, err := waitingroom.ParseJoinLimit("20/m burst 3")
	if err != nil {
		t.Fatal(err)
	}
	for _, be := range backends {
		t.Run(be.name, func(t *testing.T) {
			e := newTwoNodes(t, be.stores(t), waitingroom.Settings{
				NewUsersPerMinute: 60, TotalActiveUsers: 2, SessionIdleTimeout: time.Minute,
				SessionDuration: time.Hour, JoinLimit: limit,
			})
			in := e.fans(2)
			e.run(3*time.Second, in)
			if in[1].pass == "" {
				t.Fatalf("fan not admitted: %+v", in[1].last)
			}
			// Nobody sends anything: the sessions idle out, and then their
			// return windows pass.
			e.run(90*time.Second, nil)
			if s := e.snap(); s.IdledOut != 2 {
				t.Fatalf("idled out %d, want both", s.IdledOut)
			}
			e.run(waitingroom.DefaultReturnWindow+10*time.Second, nil)
			fan := waitingroom.Arrival{Client: netip.MustParseAddr("192.0.2.7")}
			places, limited := 0, 0
			for range 10 {
				v, err := e.b.PollAs(e.ctx, fan, in[1].t)
				var jl *waitingroom.JoinLimitedError
				switch {
				case errors.As(err, &jl):
					limited++
				case err != nil:
					t.Fatal(err)
				case v.Rejoined && v.Ticket.Visitor != in[1].t.Visitor:
					places++
				}
			}
			if places != 3 || limited != 7 {
				t.Fatalf("10 replays of an idled-out ticket past its return window: %d new places, %d limited; want the burst's 3, then refused", places, limited)
			}
		})
	}
}
