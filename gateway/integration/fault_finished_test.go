package integration

import (
	"net/http"
	"net/url"
	"testing"
	"time"

	"github.com/foyer-dev/foyer/gateway"
	"github.com/foyer-dev/foyer/waitingroom"
)

// TestFaultFinishedFanGetsNoNewPass: two fans' sessions end, one revoked at
// checkout, one expired, and each replays the ticket they held before they
// were let in. After redis-server is killed and started empty, after a
// gateway restarts with empty memory, and after both in turn, neither gets a
// new pass: each is sent to the back of the line with a new key. The rest of
// the line then moves in order within the cap.
func TestFaultFinishedFanGetsNoNewPass(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name              string
		loseRedis, loseGW bool
		gatewayAfterRedis bool
	}{
		{name: "redis restarted empty", loseRedis: true},
		{name: "gateway restarted", loseGW: true},
		{name: "redis then gateway", loseRedis: true, loseGW: true, gatewayAfterRedis: true},
		{name: "gateway then redis", loseRedis: true, loseGW: true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			clock := newTestClock()
			srv, dial := privateRedis(t)
			key := deploymentKey(t)
			const capacity = 3
			cfg := gateway.Handler{Room: "finished", Settings: waitingroom.Settings{TotalActiveUsers: capacity, NewUsersPerMinute: 60, SessionDuration: time.Minute, AdmissionGrace: grace}}
			a := newNode(t, clock.Now, cfg, redisNodeStore(t, dial, "foyer"), key)
			b := newNode(t, clock.Now, cfg, redisNodeStore(t, dial, "foyer"), key)
			nodes := []*node{a, b}
			tr := sharedTransport(t)
			l := newLedger()

			first := walkIn(t, a, tr)
			l.record(t, first, a)
			fans := joinLine(t, nodes, tr, "fan", 2, 1)
			revoked, expired := fans[0], fans[1]
			// The tickets they held while they waited, before any pass.
			oldTicket := map[*lineFan]string{revoked: revoked.v.cookie(a.url, "foyer_ticket"), expired: expired.v.cookie(a.url, "foyer_ticket")}
			passID := make(map[*lineFan]string)
			for _, f := range []*lineFan{revoked, expired} {
				for f.status(t, b).State != waitingroom.StateAdmitted {
					step(t, clock, nodes)
				}
				passID[f] = l.record(t, f, b).ID
			}
			if !revoked.visit(t, a, "/done") {
				t.Fatal("checkout did not reach the origin")
			}
			l.revoke(passID[revoked])
			// The expired fan's session runs out; the admission windows of
			// both end well before the loss.
			for range 65 {
				step(t, clock, nodes)
			}
			// A line forms again just before the loss: the replays must go
			// behind it, not to its front.
			walker := walkIn(t, a, tr)
			l.record(t, walker, a)
			fans = joinLine(t, nodes, tr, "late", 3, 0)

			restartGateway := func() {
				loseNode(a)
				a = newNodeResumed(t, clock.Now, cfg, redisNodeStore(t, dial, "foyer"), key, true)
				nodes = []*node{a, b}
				// A restart with the store intact is not a loss: the room
				// exists, nothing settles, newcomers are placed at once.
				v := newVisitor(tr)
				if resp, _, err := v.get(a.url+"/_waiting-room/status", true); err != nil || resp.StatusCode != http.StatusOK {
					t.Fatalf("newcomer on the restarted gateway: %v %d, want a place", err, code(resp))
				}
			}
			restartRedis := func() {
				srv.Restart(t)
				for _, n := range nodes {
					recoverNode(t, n)
				}
			}
			switch {
			case tc.loseGW && !tc.loseRedis:
				restartGateway()
			case tc.loseRedis && !tc.loseGW:
				restartRedis()
			case tc.gatewayAfterRedis:
				restartRedis()
				step(t, clock, nodes)
				restartGateway()
			default:
				restartGateway()
				step(t, clock, nodes)
				restartRedis()
			}
			step(t, clock, nodes)

			seq := b.room().Snapshot().Seq
			for _, f := range []*lineFan{revoked, expired} {
				replay := newVisitor(tr)
				u, _ := url.Parse(a.url)
				replay.jar.SetCookies(u, []*http.Cookie{{Name: "foyer_ticket", Value: oldTicket[f], Path: "/"}})
				again := &lineFan{name: f.name + "-again", v: replay, admitted: -1}
				for i, n := range nodes {
					st := again.status(t, n)
					if st.State == waitingroom.StateAdmitted || replay.cookie(n.url, "foyer_pass") != "" {
						t.Fatalf("%s replayed the old ticket through node %d and got a new pass", f.name, i)
					}
				}
				again.key = again.ticket(t, a).Key
				if again.key < seq {
					t.Fatalf("%s's replay was placed at key %d, ahead of the line's end %d; want the back", f.name, again.key, seq)
				}
				fans = append(fans, again)
			}
			// One place an admission step at most: the rate banks a second.
			faultLine(t, clock, nodes, fans, l, capacity, grace, 80)
		})
	}
}
