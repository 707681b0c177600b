package gateway

import (
	"encoding/base64"
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"testing"

	"github.com/foyer-dev/foyer/internal/redistest"
	"github.com/foyer-dev/foyer/waitingroom"
)

// A ticket is a bearer token: whoever holds a copy of the cookie stands where
// its fan stands. These tests copy a fan's ticket before they are let in, as
// a scalper sharing one place among several clients would, and check that the
// copies share the fan's one session rather than mint sessions of their own.

// sharedTicketConfig is a room of one slot in front of an origin that says
// whose pass it was shown, and ends the session at /done.
func sharedTicketConfig(storage, room, store string) string {
	return caddyConfig(storage, fmt.Sprintf(`
	http://localhost:9080 {
		waiting_room {
			room %s
			total_active_users 1
			new_users_per_minute 60
			%s
		}
		reverse_proxy 127.0.0.1:9081
	}
	:9081 {
		bind 127.0.0.1
		@done path /done
		header @done X-Waiting-Room-Command revoke
		respond @done "bye" 200
		respond "origin pass={http.request.header.X-Waiting-Room-Pass}" 200
	}`, room, store))
}

// passClaimsOf reads the claims of a pass without verifying it: the origin's
// view of which session a request belongs to.
func passClaimsOf(t *testing.T, token string) (jti string, exp int64) {
	t.Helper()
	parts := strings.Split(token, ".")
	if len(parts) != 3 {
		t.Fatalf("pass %q is not a JWT", token)
	}
	raw, err := base64.RawURLEncoding.DecodeString(parts[1])
	if err != nil {
		t.Fatalf("pass payload: %v", err)
	}
	var c struct {
		ID  string `json:"jti"`
		Exp int64  `json:"exp"`
	}
	if err := json.Unmarshal(raw, &c); err != nil {
		t.Fatalf("pass payload: %v", err)
	}
	return c.ID, c.Exp
}

// originPass is the pass the origin was shown, or "" when the request did not
// reach it.
func originPass(body string) string {
	tok, ok := strings.CutPrefix(body, "origin pass=")
	if !ok {
		return ""
	}
	return tok
}

// TestCaddySharedTicketOneSession: a fan's ticket is copied to three other
// clients before the fan is let in. Once the fan is in, each copy that asks is
// handed the fan's session, the same pass id and end, not a session of its
// own; when the origin ends the session (revoke), no copy reaches the origin
// again, and the next fan gets the slot. The origin never sees more sessions
// at once than the cap. On the memory store and on Redis.
func TestCaddySharedTicketOneSession(t *testing.T) {
	for _, tc := range []struct{ name, store string }{
		{"memory", ""},
		{"redis", "redis"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			clock := useTestClock(t)
			store := ""
			if tc.store == "redis" {
				srv, _ := privateRedis(t)
				store = "store redis redis://" + srv.Addr
			}
			newCaddy(t, sharedTicketConfig(t.TempDir(), "shared-"+tc.name, store))

			// The origin's log: the sessions (pass ids) it served, and which
			// it ended.
			served := map[string]bool{}
			ended := map[string]bool{}
			reach := func(f *fan, who string) bool {
				t.Helper()
				_, body := f.get(base + "/events/42")
				tok := originPass(body)
				if tok == "" {
					return false
				}
				jti, _ := passClaimsOf(t, tok)
				if ended[jti] {
					t.Fatalf("%s reached the origin with the pass of a session it had ended", who)
				}
				served[jti] = true
				live := 0
				for id := range served {
					if !ended[id] {
						live++
					}
				}
				if live > 1 {
					t.Fatalf("%s: the origin serves %d sessions at once, cap 1", who, live)
				}
				return true
			}

			first := newFan(t)
			if !reach(first, "first") {
				t.Fatal("the first fan did not walk in")
			}
			holder := newFan(t)
			if st := holder.status(base); st.State != waitingroom.StateQueued {
				t.Fatalf("fan: %s, want queued", st.State)
			}
			u, _ := url.Parse(base)
			ticket := findJarCookie(holder, u, "foyer_ticket")
			if ticket == "" {
				t.Fatal("the fan holds no ticket")
			}
			copies := make([]*fan, 3)
			for i := range copies {
				copies[i] = newFan(t)
				copies[i].client.Jar.SetCookies(u, []*http.Cookie{{Name: "foyer_ticket", Value: ticket, Path: "/"}})
			}

			// The first fan checks out; the fan's turn comes.
			firstJTI, _ := passClaimsOf(t, findJarCookie(first, u, "foyer_pass"))
			if _, body := first.get(base + "/done"); body != "bye" {
				t.Fatalf("checkout: %q", body)
			}
			ended[firstJTI] = true
			clock.step(t, 1)
			if st := holder.status(base); st.State != waitingroom.StateAdmitted {
				t.Fatalf("fan after the slot freed: %s, want admitted", st.State)
			}
			jti, exp := passClaimsOf(t, findJarCookie(holder, u, "foyer_pass"))
			if !reach(holder, "fan") {
				t.Fatal("the admitted fan did not reach the origin")
			}
			for i, c := range copies {
				clock.Advance(300_000_000) // a little later each
				if st := c.status(base); st.State != waitingroom.StateAdmitted {
					t.Fatalf("copy %d: %s, want the fan's session", i, st.State)
				}
				cj, cexp := passClaimsOf(t, findJarCookie(c, u, "foyer_pass"))
				if cj != jti || cexp != exp {
					t.Fatalf("copy %d was given pass %s until %d; the fan's session is %s until %d", i, cj, cexp, jti, exp)
				}
				reach(c, fmt.Sprintf("copy %d", i))
			}

			// The origin ends the fan's session; the next fan takes the slot.
			next := newFan(t)
			if st := next.status(base); st.State != waitingroom.StateQueued {
				t.Fatalf("next fan: %s, want queued", st.State)
			}
			if _, body := holder.get(base + "/done"); body != "bye" {
				t.Fatalf("fan's checkout: %q", body)
			}
			ended[jti] = true
			clock.step(t, 2)
			if st := next.status(base); st.State != waitingroom.StateAdmitted {
				t.Fatalf("next fan after the checkout: %s, want admitted", st.State)
			}
			reach(next, "next")
			for i, c := range copies {
				for range 3 {
					if reach(c, fmt.Sprintf("copy %d after the revoke", i)) {
						t.Fatalf("copy %d reached the origin after the fan's session was ended", i)
					}
					clock.step(t, 1)
				}
			}
		})
	}
}

// findJarCookie is the value of the fan's cookie name for u, or "".
func findJarCookie(f *fan, u *url.URL, name string) string {
	for _, c := range f.client.Jar.Cookies(u) {
		if c.Name == name {
			return c.Value
		}
	}
	return ""
}

// TestMultiNodeSharedTicketOneSession: the same with two gateway nodes on one
// Redis, the copies claiming through either node. A copy that claims after
// the origin ended the session is sent to the back of the line, on the node
// that did not carry out the revoke too; once that node has refreshed (half a
// second) it refuses every copy of the pass as well.
func TestMultiNodeSharedTicketOneSession(t *testing.T) {
	clock := useTestClock(t)
	c := redistest.Shared(t)
	prefix := redistest.Prefix(t, c)
	dial := sharedDial(c)
	key := deploymentKey(t)
	cfg := Handler{Room: "shared-ticket", Settings: waitingroom.Settings{TotalActiveUsers: 1, NewUsersPerMinute: 60}}
	a := newNode(t, cfg, redisNodeStore(t, dial, prefix), key)
	b := newNode(t, cfg, redisNodeStore(t, dial, prefix), key)
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
	if s := a.h.room.Snapshot(); s.Active > 1 {
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
	if s := b.h.room.Snapshot(); s.Active != 1 {
		t.Fatalf("%d sessions live after the copies came back, want the next fan's only", s.Active)
	}
}
