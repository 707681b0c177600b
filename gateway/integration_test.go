package gateway

import (
	"fmt"
	"net/http"
	"strings"
	"testing"

	"github.com/foyer-dev/foyer/internal/fantest"
	"github.com/foyer-dev/foyer/waitingroom"
)

// fan is one browser: its own cookie jar, no redirects followed.
type fan struct {
	t      *testing.T
	client *http.Client
}

func newFan(t *testing.T) *fan { return &fan{t: t, client: fantest.NewClient()} }

func (f *fan) get(url string, header ...string) (*http.Response, string) {
	f.t.Helper()
	return fantest.Get(f.t, f.client, url, header...)
}

func (f *fan) status(base string) waitingroom.Status {
	f.t.Helper()
	return fantest.Status(f.t, f.client, base)
}

// capOneConfig fronts an origin that echoes the pass it was given, and ends the
// fan's session when they reach /done.
func capOneConfig(storage, room string) string {
	return caddyConfig(storage, fmt.Sprintf(`
	http://localhost:9080 {
		waiting_room {
			room %s
			title "Cap one"
			total_active_users 1
			new_users_per_minute 60
		}
		reverse_proxy 127.0.0.1:9081
	}
	:9081 {
		bind 127.0.0.1
		@done path /done
		header @done X-Waiting-Room-Command revoke
		header @done X-Waiting-Room-Debug leak
		respond @done "bye" 200
		respond "origin got pass={http.request.header.X-Waiting-Room-Pass} spoof={http.request.header.X-Waiting-Room-Spoof}" 200
	}`, room))
}

func TestCaddyCapOneRevokeLetsTheNextIn(t *testing.T) {
	clock := useTestClock(t)
	newCaddy(t, capOneConfig(t.TempDir(), "cap-one"))

	a, b := newFan(t), newFan(t)
	resp, body := a.get(base+"/events/42", "X-Waiting-Room-Spoof", "evil", "X-Waiting-Room-Pass", "forged")
	if resp.StatusCode != http.StatusOK || !strings.HasPrefix(body, "origin got pass=ey") {
		t.Fatalf("first fan: %d %q, want the origin with a pass", resp.StatusCode, body)
	}
	if strings.Contains(body, "forged") || strings.Contains(body, "evil") {
		t.Fatalf("client-sent X-Waiting-Room-* headers reached the origin: %q", body)
	}
	resp, body = b.get(base + "/events/42")
	if resp.StatusCode != http.StatusOK || !isWaitingPage(body) || resp.Header.Get("Cache-Control") != "no-store" {
		t.Fatalf("second fan: %d %q, want the waiting page, not cached", resp.StatusCode, body)
	}
	clock.step(t, 1)
	if st := b.status(base); st.State != waitingroom.StateQueued || *st.Position != 0 {
		t.Fatalf("second fan's status: %+v, want queued and next", st)
	}

	// The origin ends A's session.
	resp, body = a.get(base + "/done")
	if body != "bye" || resp.Header.Get("X-Waiting-Room-Command") != "" || resp.Header.Get("X-Waiting-Room-Debug") != "" {
		t.Fatalf("revoking response: %q %v; the command headers must be stripped", body, resp.Header)
	}
	if c := findCookie(resp, "foyer_pass"); c == nil || c.MaxAge >= 0 {
		t.Fatalf("revoking response did not clear the pass cookie: %v", resp.Header["Set-Cookie"])
	}
	clock.step(t, 1)
	resp, body = b.get(base + "/events/42")
	if !strings.HasPrefix(body, "origin got pass=ey") {
		t.Fatalf("second fan after the first was revoked: %d %q, want the origin", resp.StatusCode, body)
	}
	// A is done: back to the line, behind B.
	if _, body = a.get(base + "/events/42"); !isWaitingPage(body) {
		t.Fatalf("first fan after revocation: %q, want the waiting page", body)
	}
}

func isWaitingPage(body string) bool { return strings.Contains(body, `<main id="room"`) }

func findCookie(resp *http.Response, name string) *http.Cookie {
	for _, c := range resp.Cookies() {
		if c.Name == name {
			return c
		}
	}
	return nil
}

// TestCaddyKeyKeptAcrossReloads: with no signing_key, the key is generated once
// and kept in Caddy's storage, so a reload (or a restart on the same storage)
// signs with the same key and passes already out there stay valid.
func TestCaddyKeyKeptAcrossReloads(t *testing.T) {
	useTestClock(t)
	storage := t.TempDir()
	tester := newCaddy(t, capOneConfig(storage, "key-kept"))
	fan := newFan(t)
	if _, body := fan.get(base + "/events/42"); !strings.HasPrefix(body, "origin got pass=ey") {
		t.Fatalf("fan not admitted: %q", body)
	}
	_, jwks1 := fan.get(base + "/_waiting-room/jwks.json")

	// A different configuration: a new room object, provisioned from scratch.
	tester.InitServer(strings.Replace(capOneConfig(storage, "key-kept"), `title "Cap one"`, `title "Cap one, reloaded"`, 1), "caddyfile")
	_, jwks2 := fan.get(base + "/_waiting-room/jwks.json")
	if jwks1 != jwks2 {
		t.Fatalf("the key changed across a reload:\n%s\n%s", jwks1, jwks2)
	}
	if _, body := fan.get(base + "/events/42"); !strings.HasPrefix(body, "origin got pass=ey") {
		t.Fatalf("an admitted fan was turned away after a reload: %q", body)
	}
}
