package integration

import (
	"testing"
	"time"

	"github.com/foyer-dev/foyer/gateway"
	"github.com/foyer-dev/foyer/waitingroom"
)

// TestFaultPositionsStayTrueThroughLoss: a line moves through two nodes long
// enough for the show-up rate to be measured (every fan let in comes for their
// session). redis-server is killed and comes back empty; the nodes re-seed it,
// which adds places nobody holds (the re-seed's margin) and admissions that
// may never be claimed. Fans keep joining and polling until everyone is in.
// At every poll, the people a fan is shown ahead must be within 0.8–1.2× of
// the fans really ahead (all of whom poll), for fans with at least
// minTruth ahead, fans who joined after the loss included: the margin's
// places, which no fan holds, count as nobody.
func TestFaultPositionsStayTrueThroughLoss(t *testing.T) {
	t.Parallel()
	clock := newTestClock()
	srv, dial := privateRedis(t)
	key := deploymentKey(t)
	const capacity = 5
	const minTruth = 5
	cfg := gateway.Handler{Room: "positions", Settings: waitingroom.Settings{TotalActiveUsers: capacity, NewUsersPerMinute: 60, SessionDuration: time.Minute, AdmissionGrace: grace}}
	a := newNode(t, clock.Now, cfg, redisNodeStore(t, dial, "foyer"), key)
	b := newNode(t, clock.Now, cfg, redisNodeStore(t, dial, "foyer"), key)
	nodes := []*node{a, b}
	tr := sharedTransport(t)

	first := walkIn(t, a, tr)
	if !first.visit(t, a, "/done") {
		t.Fatal("the first fan's checkout did not reach the origin")
	}
	fans := joinLine(t, nodes, tr, "early", 55, 0)
	step(t, clock, nodes) // the nodes see the line
	var lossRound, lateFrom = 34, uint64(0)
	worst, polls, lateChecked := 1.0, 0, 0
	for round := 0; ; round++ {
		if round == lossRound {
			srv.Stop(t)
			srv.Restart(t)
			recoverNode(t, a)
			recoverNode(t, b)
			// Newcomers join after the loss, behind the margin.
			late := joinLine(t, nodes, tr, "late", 30, round)
			lateFrom = late[0].key
			fans = append(fans, late...)
		}
		if round > 400 {
			t.Fatalf("%d rounds and fans still wait", round)
		}
		waiting := 0
		for i, f := range fans {
			if f.admitted >= 0 {
				continue
			}
			n := nodes[(round+i)%2]
			serving := n.room().Snapshot().Serving
			truth := 0
			for _, g := range fans {
				if g.admitted < 0 && g.key >= serving && g.key < f.key {
					truth++
				}
			}
			st := f.status(t, n)
			if st.State == waitingroom.StateAdmitted {
				f.admitted = round
				if !f.visit(t, nodes[(round+i+1)%2], "/done") {
					t.Fatalf("%s could not check out", f.name)
				}
				continue
			}
			waiting++
			if st.Position == nil || truth < minTruth {
				continue
			}
			if f.key >= lateFrom && lateFrom > 0 && serving < lateFrom {
				lateChecked++
			}
			polls++
			ratio := float64(*st.Position) / float64(truth)
			if ratio < 0.8 || ratio > 1.2 {
				t.Fatalf("round %d (loss at %d): %s is shown %d ahead, %d are (%.2f×)", round, lossRound, f.name, *st.Position, truth, ratio)
			}
			if d := abs(ratio - 1); d > abs(worst-1) {
				worst = ratio
			}
		}
		if waiting == 0 && round > lossRound {
			break
		}
		step(t, clock, nodes)
	}
	if lateChecked == 0 {
		t.Fatal("no poll of a fan who joined after the loss was checked before the line passed the margin")
	}
	t.Logf("%d polls checked (%d of fans behind the margin before the line passed it); the furthest from the truth was %.2f×", polls, lateChecked, worst)
}

func abs(x float64) float64 { return max(x, -x) }
