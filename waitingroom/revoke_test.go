package waitingroom_test

import (
	"errors"
	"testing"
	"time"

	"github.com/foyer-dev/foyer/waitingroom"
	"github.com/foyer-dev/foyer/waitingroom/memstore"
	"github.com/foyer-dev/foyer/waitingroom/storetest"
)

// A revocation taken while the store is down is refused at once by the node
// that took it, written once the store answers, and learned by the others;
// one the store lost is put back by a node that knows it.
func TestRevocationOutlivesStoreOutageAndLoss(t *testing.T) {
	e := newEnv(t)
	mem := e.store.(*memstore.Store)
	fs := storetest.NewFlaky(mem)
	e.store = fs
	s := waitingroom.Settings{TotalActiveUsers: 2}
	a, b := e.node("concert", s), e.node("concert", s)
	one, two := e.join(a), e.join(a)
	e.step(1, a, b)
	two = e.poll(a, two.Ticket)
	p1, p2 := e.pass(a, one.Pass), e.pass(a, two.Pass)

	fs.SetDown(true)
	e.clock.Advance(3 * time.Second)
	_ = a.Tick(e.ctx)
	if err := a.Revoke(e.ctx, p1); !errors.Is(err, waitingroom.ErrRevocationDeferred) {
		t.Fatalf("revoke with the store down: %v, want ErrRevocationDeferred", err)
	}
	if _, err := a.CheckPass(one.Pass); err == nil {
		t.Fatal("the node that took the revocation still accepts the pass")
	}
	if a.Unsent() != 1 {
		t.Fatalf("%d revocations wait for the store, want 1", a.Unsent())
	}

	fs.SetDown(false)
	e.step(1, a, b)
	if a.Unsent() != 0 {
		t.Fatalf("%d revocations still wait after the store came back", a.Unsent())
	}
	if _, err := b.CheckPass(one.Pass); err == nil {
		t.Fatal("another node accepts the pass revoked during the outage")
	}
	if got := b.Snapshot().Active; got != 1 {
		t.Fatalf("%d sessions live after the revocation reached the store, want 1", got)
	}

	// Revoked with the store up, then the store loses everything.
	if err := b.Revoke(e.ctx, p2); err != nil {
		t.Fatal(err)
	}
	e.step(1, a, b)
	mem.Drop("concert")
	e.step(1, a, b)
	c := e.node("concert", s) // a node that starts after the loss
	for _, tok := range []string{one.Pass, two.Pass} {
		if _, err := c.CheckPass(tok); err == nil {
			t.Fatal("a node started after the store lost its data accepts a revoked pass")
		}
	}
}

// A node whose view went stale asks waiting fans to come back soon, however
// far back they are: other nodes may have moved the line since.
func TestStaleNodeAsksFansBackSoon(t *testing.T) {
	e := newEnv(t)
	fs := storetest.NewFlaky(e.store)
	e.store = fs
	r := e.node("concert", waitingroom.Settings{TotalActiveUsers: 1, NewUsersPerMinute: 1})
	e.join(r)
	var last waitingroom.Visit
	for range 50 {
		last = e.join(r)
	}
	e.step(1, r)
	if v := e.poll(r, last.Ticket); v.Status.RefreshSeconds <= 2 {
		t.Fatalf("far back in a healthy room: refresh in %d s; the test wants a longer one to begin with", v.Status.RefreshSeconds)
	}
	fs.SetDown(true)
	e.clock.Advance(3 * time.Second)
	_ = r.Tick(e.ctx)
	v := e.poll(r, last.Ticket)
	if !v.Status.Reconnecting || v.Status.RefreshSeconds > 2 {
		t.Fatalf("with a stale view: reconnecting %v, refresh in %d s; want reconnecting, and back within 2 s", v.Status.Reconnecting, v.Status.RefreshSeconds)
	}
}

// TestRevokedPassRefusedThroughItsLeeway: a pass is accepted a few seconds
// past its end (other nodes' clocks may differ), so a node must remember a
// revocation, and an idle-out, that long too: forgotten at the end itself,
// the revoked pass would be good again for those seconds.
func TestRevokedPassRefusedThroughItsLeeway(t *testing.T) {
	e := newEnv(t)
	r := e.node("concert", waitingroom.Settings{TotalActiveUsers: 2, SessionDuration: time.Minute})
	in := e.join(r)
	p := e.pass(r, in.Pass)
	if err := r.Revoke(e.ctx, p); err != nil {
		t.Fatal(err)
	}
	e.clock.Advance(p.ExpiresAt.Add(-time.Second).Sub(e.clock.Now()))
	e.step(2, r) // the node prunes what it keeps, one second past the end
	if _, err := r.CheckPass(in.Pass); err == nil {
		t.Fatalf("a revoked pass was accepted %v past its end, within the verifier's leeway", e.clock.Now().Sub(p.ExpiresAt))
	}
}
