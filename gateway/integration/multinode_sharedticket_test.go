package integration

import (
	"fmt"
	"net/http"
	"net/url"
	"testing"

	"github.com/foyer-dev/foyer/gateway"
	"github.com/foyer-dev/foyer/internal/redistest"
	"github.com/foyer-dev/foyer/waitingroom"
)

// A ticket copied to other browsers (README, "Tickets and passes") buys one
// session, on whichever nodes the copies claim; TestCaddySharedTicketOneSession
// in package gateway is the same on one real Caddy.

// TestMultiNodeSharedTicketOneSession: the same with two gateway nodes on one
// Redis, the copies claiming through either node. A copy that claims after
// the origin ended the session is sent to the back of the line, on the node
// that did not carry out the revoke too; once that node has refreshed (half a
// second) it refuses every copy of the pass as well.
func TestMultiNodeSharedTicketOneSession(t *testing.T) {
	t.Parallel()
	clock := newTestClock()
	c := redistest.Shared(t)
	prefix := redistest.Prefix(t, c)
	dial := sharedDial(c)
	key := deploymentKey(t)
	cfg := gateway.Handler{Room: "shared-ticket", Settings: waitingroom.Settings{TotalActiveUsers: 1, NewUsersPerMinute: 60}}
	a := newNode(t, clock.Now, cfg, redisNodeStore(t, dial, prefix), key)
	b := newNode(t, clock.Now, cfg, redisNodeStore(t, dial, prefix), key)
	nodes := []*node{a, b}
	tr := sharedTransport(t)

	first := walkIn(t, a, tr)
	holder := joinLine(t, nodes, tr, "holder", 1, 1)[0]
	ticket := holder.v.cookie(a.url, "foyer_ticket")
	copies := make([]*lineFan, 4)
	for i := range copies {
		v := newVisitor(tr)
		u, _ := url.Parse(a.url)
		v.jar.SetCookies(u, []*http.Cookie{{Name: "foyer_ticket", Value: ticket, Path: "/"}})
		copies[i] = &lineFan{name: fmt.Sprintf("copy%d", i), v: v, admitted: -1}
	}
	if !first.visit(t, b, "/done") {
		t.Fatal("the first fan's checkout did not reach the origin")
	}
	step(t, clock, nodes)
	if st := holder.status(t, a); st.State != waitingroom.StateAdmitted {
		t.Fatalf("holder after the slot freed: %s, want admitted", st.State)
	}
	session := holder.pass(t, a)
	// Three copies claim, through either node; the fourth waits.
	for i, cp := range copies[:3] {
		n := nodes[i%2]
		if st := cp.status(t, n); st.State != waitingroom.StateAdmitted {
			t.Fatalf("%s through node %d: %s, want the holder's session", cp.name, i%2, st.State)
		}
		if p := cp.pass(t, n); p.ID != session.ID || !p.ExpiresAt.Equal(session.ExpiresAt) || p.Subject != session.Subject {
			t.Fatalf("%s through node %d got pass %s of %s until %v; the session is %s of %s until %v",
				cp.name, i%2, p.ID, p.Subject, p.ExpiresAt, session.ID, session.Subject, session.ExpiresAt)
		}
		if !cp.visit(t, nodes[(i+1)%2], "/events/42") {
			t.Fatalf("%s did not reach the origin with the session's pass", cp.name)
		}
	}
	if s := a.room().Snapshot(); s.Active > 1 {
		t.Fatalf("%d sessions live, cap 1", s.Active)
	}

	next := joinLine(t, nodes, tr, "next", 1, 0)[0]
	// The origin ends the session through node a. Node b has not refreshed
	// yet, but a claim goes to the store: the fourth copy gets no pass.
	if !holder.visit(t, a, "/done") {
		t.Fatal("the holder's checkout did not reach the origin")
	}
	if st := copies[3].status(t, b); st.State == waitingroom.StateAdmitted || copies[3].v.cookie(b.url, "foyer_pass") != "" {
		t.Fatalf("a copy claiming after the session ended was given a pass (%s)", st.State)
	}
	for _, cp := range copies[:3] {
		if cp.visit(t, a, "/events/42") {
			t.Fatalf("%s reached the origin through node a after it revoked the session", cp.name)
		}
	}
	clock.Advance(waitingroom.RefreshInterval)
	if err := tickAll(nodes); err != nil {
		t.Fatal(err)
	}
	step(t, clock, nodes)
	if st := next.status(t, b); st.State != waitingroom.StateAdmitted {
		t.Fatalf("next fan after the checkout: %s, want admitted", st.State)
	}
	for i, cp := range copies[:3] {
		for j, n := range nodes {
			if cp.visit(t, n, "/events/42") {
				t.Fatalf("%s reached the origin through node %d after the session ended", cp.name, j)
			}
		}
		if st := cp.status(t, nodes[i%2]); st.State == waitingroom.StateAdmitted {
			t.Fatalf("%s was let in again after the session ended", cp.name)
		}
	}
	if err := tickAll(nodes); err != nil {
		t.Fatal(err)
	}
	if s := b.room().Snapshot(); s.Active != 1 {
		t.Fatalf("%d sessions live after the copies came back, want the next fan's only", s.Active)
	}
}
