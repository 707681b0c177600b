package integration

import (
	"context"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/foyer-dev/foyer/gateway"
	"github.com/foyer-dev/foyer/waitingroom"
)

// TestFaultRevocationsSurviveLosses: passes the origin revoked stay refused on
// every node until they expire, whatever is lost in between. One is revoked
// through a node while Redis is down (the node refuses it at once and writes
// it once Redis answers); Redis is killed and comes back empty (the nodes put
// back what they know); a node is added empty, as a restarted one would be
// (it reads them from the store); then a node is lost and Redis comes back
// empty again, and a node started after that still refuses them all. At the
// end the line moves in order, and the origin never had more sessions valid
// at once than the cap.
func TestFaultRevocationsSurviveLosses(t *testing.T) {
	t.Parallel()
	clock := newTestClock()
	srv, dial := privateRedis(t)
	key := deploymentKey(t)
	ledger := newPassLedger(key, clock.Now)
	const capacity = 3
	cfg := gateway.Handler{Room: "revokes", Settings: waitingroom.Settings{TotalActiveUsers: capacity, NewUsersPerMinute: 60, SessionDuration: time.Minute, AdmissionGrace: grace}}
	start := func() *node { return ledgerNode(t, clock.Now, cfg, redisNodeStore(t, dial, "foyer"), key, ledger) }
	a, b := start(), start()
	nodes := []*node{a, b}
	tr := sharedTransport(t)

	// Three fans inside, the cap: one walked in, two were admitted and claimed.
	first := walkIn(t, a, tr)
	fans := joinLine(t, nodes, tr, "fan", 2, 1)
	for i, f := range fans {
		step(t, clock, nodes)
		if st := f.status(t, nodes[i%2]); st.State != "admitted" {
			t.Fatalf("%s: %s, want admitted", f.name, st.State)
		}
	}

	// Revoked with everything up.
	if !first.visit(t, a, "/done") {
		t.Fatal("first fan's checkout did not reach the origin")
	}
	step(t, clock, nodes)
	refusedEverywhere(t, nodes, ledger.revoked(clock.Now()), "a refresh after the first revocation")

	// Revoked through b while Redis is down: b refuses it at once.
	srv.Stop(t)
	for range 3 {
		clock.Advance(time.Second)
		if tickAll(nodes) == nil {
			t.Fatal("the nodes ticked with Redis stopped")
		}
	}
	if !fans[0].visit(t, b, "/done") {
		t.Fatalf("%s's checkout did not reach the origin", fans[0].name)
	}
	if n := b.room().Unsent(); n != 1 {
		t.Fatalf("node b holds %d revocations for the store, want 1", n)
	}
	refusedEverywhere(t, []*node{b}, ledger.revoked(clock.Now()), "Redis down, on the node that took the revocation")

	// Redis comes back empty: the nodes re-seed it, revocations included.
	srv.Restart(t)
	clock.Advance(time.Second)
	recoverNode(t, a)
	recoverNode(t, b)
	step(t, clock, nodes)
	for i, n := range nodes {
		if u := n.room().Unsent(); u != 0 {
			t.Fatalf("node %d still holds %d revocations for the store", i, u)
		}
	}
	refusedEverywhere(t, nodes, ledger.revoked(clock.Now()), "Redis came back empty")
	storeHasRevocations(t, dial, clock.Now(), 2, "Redis came back empty")

	// A node started now (a restarted one) reads them from the store.
	c := start()
	nodes = append(nodes, c)
	refusedEverywhere(t, nodes, ledger.revoked(clock.Now()), "a node started after Redis came back")
	if !fans[1].visit(t, c, "/done") {
		t.Fatalf("%s's checkout did not reach the origin", fans[1].name)
	}
	step(t, clock, nodes)

	// Both in turn: node a is lost, then Redis comes back empty again; the
	// nodes left re-seed it, and a node started after both still refuses.
	nodes = []*node{b, c}
	srv.Restart(t)
	clock.Advance(time.Second)
	recoverNode(t, b)
	recoverNode(t, c)
	step(t, clock, nodes)
	d := start()
	nodes = append(nodes, d)
	revoked := ledger.revoked(clock.Now())
	if len(revoked) != 3 {
		t.Fatalf("the origin revoked %d live passes, want 3", len(revoked))
	}
	refusedEverywhere(t, nodes, revoked, "a node lost, then Redis lost, then a node started")
	storeHasRevocations(t, dial, clock.Now(), 3, "a node lost, then Redis lost")
	// The line moves on, in order, and the revocations go once their passes
	// have expired. The re-seed's margin, which nobody holds, is passed
	// over at once: the line is empty, and the first newcomer walks in.
	walkIn(t, nodes[0], tr)
	late := joinLine(t, nodes, tr, "late", 4, 1)
	admitAll(t, clock, nodes, late, grace, 60, nil)
	clock.Advance(time.Minute)
	if err := tickAll(nodes); err != nil {
		t.Fatal(err)
	}
	storeHasRevocations(t, dial, clock.Now(), 0, "every revoked pass expired")
	ledger.check(t, capacity)
}

// storeHasRevocations fails unless the store lists want live revocations.
func storeHasRevocations(t *testing.T, dial func() redis.UniversalClient, at time.Time, want int, when string) {
	t.Helper()
	s := redisNodeStore(t, dial, "foyer")
	snap, err := s.Snapshot(context.Background(), "revokes", at, 0)
	if err != nil {
		t.Fatal(err)
	}
	ids := make(map[string]bool)
	for _, rv := range snap.Revocations {
		ids[rv.PassID] = true
	}
	if len(ids) != want {
		t.Fatalf("%s: the store lists %d revoked passes, want %d", when, len(ids), want)
	}
}
