package integration

import (
	"testing"
	"time"

	"github.com/foyer-dev/foyer/gateway"
	"github.com/foyer-dev/foyer/waitingroom"
)

// TestFaultEmptyRestartWithSessionsRevoked: the reproduction of an empty Redis
// restart that froze admissions for a whole session_duration. Cap 5,
// session_duration 1m, two nodes on a private redis-server: five fans inside,
// three waiting. redis-server is killed and comes back empty; the nodes
// re-seed it, holding a slot for each session they knew of. Eight seconds
// later the origin ends all five sessions. The next fan in line must get in
// within one admission step plus one grace (before the fix: at 156 s), and the
// origin never sees more sessions valid at once than the cap.
func TestFaultEmptyRestartWithSessionsRevoked(t *testing.T) {
	t.Parallel()
	clock := newTestClock()
	srv, dial := privateRedis(t)
	key := deploymentKey(t)
	ledger := newPassLedger(key, clock.Now)
	const capacity = 5
	cfg := gateway.Handler{Room: "reseed", Settings: waitingroom.Settings{TotalActiveUsers: capacity, NewUsersPerMinute: 60, SessionDuration: time.Minute, AdmissionGrace: grace}}
	start := func() *node { return ledgerNode(t, clock.Now, cfg, redisNodeStore(t, dial, "foyer"), key, ledger) }
	a, b := start(), start()
	nodes := []*node{a, b}
	tr := sharedTransport(t)

	inside := []*lineFan{walkIn(t, a, tr)}
	fans := joinLine(t, nodes, tr, "fan", capacity-1+3, 1)
	for i := 0; len(inside) < capacity; {
		step(t, clock, nodes)
		for ; i < len(fans) && len(inside) < capacity; i++ {
			if st := fans[i].status(t, nodes[i%2]); st.State != waitingroom.StateAdmitted {
				break
			}
			inside = append(inside, fans[i])
		}
	}
	waiting := fans[capacity-1:]
	for i, f := range inside {
		if !f.visit(t, nodes[i%2], "/events/42") {
			t.Fatalf("%s did not reach the origin", f.name)
		}
	}

	srv.Restart(t)
	clock.Advance(time.Second)
	recoverNode(t, a)
	recoverNode(t, b)
	step(t, clock, nodes)
	if s := a.room().Snapshot(); s.Active != capacity || s.LostAt.IsZero() {
		t.Fatalf("after the empty restart: %d active, lost at %v; want the %d sessions held", s.Active, s.LostAt, capacity)
	}
	for range 7 {
		step(t, clock, nodes)
	}
	for i, f := range inside {
		if !f.visit(t, nodes[i%2], "/done") {
			t.Fatalf("%s's checkout did not reach the origin", f.name)
		}
	}
	revoked := clock.Now()
	// One admission step, then the fan polls within their grace.
	var in time.Duration
	for clock.Now().Sub(revoked) <= time.Second+grace {
		step(t, clock, nodes)
		if st := waiting[0].status(t, nodes[0]); st.State == waitingroom.StateAdmitted {
			in = clock.Now().Sub(revoked)
			break
		}
	}
	if in == 0 {
		s := a.room().Snapshot()
		t.Fatalf("%s not let in within one step and one grace of every session being revoked (active %d, serving %d)", waiting[0].name, s.Active, s.Serving)
	}
	t.Logf("%s let in %v after the five sessions were revoked", waiting[0].name, in)
	if !waiting[0].visit(t, nodes[1], "/events/42") {
		t.Fatalf("%s's pass did not reach the origin", waiting[0].name)
	}
	ledger.check(t, capacity)
}
