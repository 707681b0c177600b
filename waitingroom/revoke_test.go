package waitingroom_test

import (
	"errors"
	"testing"
	"time"

	"github.com/foyer-dev/foyer/waitingroom"
	"github.com/foyer-dev/foyer/waitingroom/storetest"
)

// A revocation taken while the store is down is refused at once by the node
// that took it, written once the store answers, and learned by the others;
// one the store lost is put back by a node that knows it.
func TestRevocationOutlivesStoreOutageAndLoss(t *testing.T) {
	e := newEnv(t)
	mem := e.store.(*waitingroom.MemoryStore)
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
