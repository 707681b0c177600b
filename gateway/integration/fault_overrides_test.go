package integration

import (
	"context"
	"net/http"
	"testing"
	"time"

	"github.com/foyer-dev/foyer/gateway"
	"github.com/foyer-dev/foyer/waitingroom"
)

// TestFaultOverridesSurviveEmptyRedis: the operator pauses the sale and lowers
// total_active_users; redis-server is killed and started empty; a node that
// ran the room before restarts meanwhile and re-creates the room knowing
// nothing. No node ever acts on its Caddyfile settings: while the store is
// down, while it is empty, and after; the overrides come back with their
// version. Then redis-server dies again with every gateway: a gateway that
// restarts applies the overrides it kept in Caddy storage from its start and
// puts them back. Newcomers after the losses find the sale paused, resuming
// it keeps the lowered cap, and the line moves in order within that cap.
func TestFaultOverridesSurviveEmptyRedis(t *testing.T) {
	t.Parallel()
	clock := newTestClock()
	srv, dial := privateRedis(t)
	key := deploymentKey(t)
	const configured, lowered = 4, 2
	cfg := gateway.Handler{Room: "overrides", Settings: waitingroom.Settings{TotalActiveUsers: configured, NewUsersPerMinute: 600, SessionDuration: time.Minute, AdmissionGrace: grace}}
	diskA, diskB, diskC := &nodeDisk{}, &nodeDisk{}, &nodeDisk{}
	a := newNodeOn(t, clock.Now, cfg, redisNodeStore(t, dial, "foyer"), key, diskA)
	b := newNodeOn(t, clock.Now, cfg, redisNodeStore(t, dial, "foyer"), key, diskB)
	watch := redisNodeStore(t, dial, "foyer")
	nodes := []*node{a, b}
	tr := sharedTransport(t)
	l := newLedger()
	ctx := context.Background()

	first := walkIn(t, a, tr)
	l.record(t, first, a)
	paused, capped, title := true, lowered, "Back soon"
	if _, err := a.room().Patch(ctx, waitingroom.OverridesOf(waitingroom.Settings{Paused: paused, TotalActiveUsers: capped, Title: title}, "paused", "total_active_users", "title")); err != nil {
		t.Fatal(err)
	}
	step(t, clock, nodes)
	fans := joinLine(t, nodes, tr, "fan", 4, 1)
	step(t, clock, nodes)
	version := b.room().Info().Version
	overridden := func(when string, ns ...*node) {
		t.Helper()
		for i, n := range ns {
			s := n.room().Settings()
			if !s.Paused || s.TotalActiveUsers != lowered || s.Title != title {
				t.Fatalf("%s: node %d acts on paused %v, cap %d, title %q; want the overrides (paused, cap %d)", when, i, s.Paused, s.TotalActiveUsers, s.Title, lowered)
			}
		}
	}
	overridden("before the loss", a, b)

	srv.Stop(t)
	for range 3 {
		clock.Advance(time.Second)
		_ = tickAll(nodes)
		overridden("redis-server killed", a, b)
	}
	srv.Restart(t)
	lossAt := time.Now()

	// A node that ran the room before restarts now, and re-creates it from
	// nothing: no record of the room in the store.
	diskC.remember(waitingroom.Memo{At: clock.Now()}) // it ran before, and kept no overrides
	c := newNodeOn(t, clock.Now, cfg, redisNodeStore(t, dial, "foyer"), key, diskC)
	if data, v, err := watch.Overrides(ctx, "overrides"); err != nil || v != 0 || len(data) != 0 {
		t.Fatalf("the re-created room's overrides: %q v%d %v; want none yet (the test's premise)", data, v, err)
	}
	overridden("store empty, before the nodes that knew re-seeded", a, b)
	newcomer := newVisitor(tr)
	if resp, _, err := newcomer.get(c.url+"/_waiting-room/status", true); err != nil || resp.StatusCode != http.StatusServiceUnavailable {
		t.Fatalf("newcomer on the restarted node while the store is settling: %v %d, want 503", err, code(resp))
	}

	recoverNode(t, b)
	recovered := time.Since(lossAt)
	recoverNode(t, a)
	overridden("after re-seeding", a, b)
	data, v, err := watch.Overrides(ctx, "overrides")
	if err != nil || v != version {
		t.Fatalf("overrides in the store after re-seeding: %q v%d %v, want version %d back", data, v, err, version)
	}
	nodes = []*node{a, b, c}
	step(t, clock, nodes)
	overridden("after a refresh", a, b, c)
	if m := diskA.load(); m == nil || m.Version != version {
		t.Fatalf("node a kept %+v in its Caddy storage, want the overrides of version %d", m, version)
	}
	t.Logf("overrides restored %v after redis-server came back empty", recovered.Round(time.Millisecond))
	for range 4 { // past the settling of the re-created room
		step(t, clock, nodes)
	}

	// Then redis-server and every gateway die together. A gateway that
	// restarts has only what it kept in Caddy storage: the overrides are in
	// force from its start, and go back into the empty store.
	srv.Stop(t)
	for _, n := range nodes {
		loseNode(n)
	}
	clock.Advance(2 * time.Second)
	srv.Restart(t)
	a = newNodeOn(t, clock.Now, cfg, redisNodeStore(t, dial, "foyer"), key, diskA)
	overridden("every gateway lost with Redis, on restart", a)
	if data, v, err := watch.Overrides(ctx, "overrides"); err != nil || v != version {
		t.Fatalf("overrides in the store after a restart from Caddy storage: %q v%d %v, want version %d", data, v, err, version)
	}
	nodes = []*node{a}
	// Those inside and those waiting re-announce themselves while it settles.
	if !first.visit(t, a, "/events/42") {
		t.Fatal("the fan inside lost access")
	}
	for _, f := range fans {
		if st := f.status(t, a); st.State != waitingroom.StatePaused {
			t.Fatalf("%s after every gateway was lost: %s, want paused", f.name, st.State)
		}
	}

	// Newcomers after the loss find the sale paused, not open.
	for range 4 { // past the settling of the re-created room
		step(t, clock, nodes)
	}
	late := joinLine(t, nodes, tr, "late", 3, 0)
	for i, f := range append(fans, late...) {
		if st := f.status(t, nodes[i%len(nodes)]); st.State != waitingroom.StatePaused {
			for j, n := range nodes {
				t.Logf("node %d: %+v %+v", j, n.room().Snapshot(), n.room().Settings())
			}
			t.Fatalf("%s (key %d) after the loss: %s, want paused", f.name, f.key, st.State)
		}
	}

	// Resuming lays over the restored overrides: the cap stays lowered.
	resume := false
	if _, err := a.room().Patch(ctx, waitingroom.OverridesOf(waitingroom.Settings{Paused: resume}, "paused")); err != nil {
		t.Fatal(err)
	}
	if data, v, err := watch.Overrides(ctx, "overrides"); err != nil || v != version+1 {
		t.Fatalf("after resuming: %q v%d %v, want version %d", data, v, err, version+1)
	}
	step(t, clock, nodes)
	for i, n := range nodes {
		if s := n.room().Settings(); s.Paused || s.TotalActiveUsers != lowered {
			t.Fatalf("node %d after resuming: paused %v cap %d, want resumed with cap %d", i, s.Paused, s.TotalActiveUsers, lowered)
		}
	}
	faultLine(t, clock, nodes, append(fans, late...), l, lowered, grace, 120)
}
