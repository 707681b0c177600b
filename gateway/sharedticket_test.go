package gateway

import (
	"encoding/base64"
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"testing"

	"github.com/foyer-dev/foyer/internal/fantest"
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
				srv := redistest.StartServer(t, nil)
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
	return fantest.Cookie(f.client, u, name)
}
