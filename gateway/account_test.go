package gateway

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"encoding/base64"
	"encoding/json"
	"encoding/pem"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/golang-jwt/jwt/v5"

	"github.com/foyer-dev/foyer/waitingroom"
)

// login is the site's own login, as the account block sees it: a key that
// signs account tokens, published as a PEM file and as a JWKS served by a
// local HTTP server.
type login struct {
	key     *ecdsa.PrivateKey
	pemPath string
	jwks    *httptest.Server
}

const (
	loginIssuer   = "https://login.example"
	loginAudience = "shop"
)

func newLogin(t *testing.T) *login {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	der, err := x509.MarshalPKIXPublicKey(&key.PublicKey)
	if err != nil {
		t.Fatal(err)
	}
	l := &login{key: key, pemPath: filepath.Join(t.TempDir(), "login.pem")}
	if err := os.WriteFile(l.pemPath, pem.EncodeToMemory(&pem.Block{Type: "PUBLIC KEY", Bytes: der}), 0o600); err != nil {
		t.Fatal(err)
	}
	pt, err := key.PublicKey.Bytes() // 0x04 || x || y
	if err != nil {
		t.Fatal(err)
	}
	b64 := base64.RawURLEncoding.EncodeToString
	set := fmt.Sprintf(`{"keys":[{"kty":"EC","crv":"P-256","kid":"login-1","use":"sig","alg":"ES256","x":%q,"y":%q}]}`,
		b64(pt[1:33]), b64(pt[33:]))
	l.jwks = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		w.Write([]byte(set))
	}))
	t.Cleanup(l.jwks.Close)
	return l
}

// token signs claims for account sub, valid for an hour from the gateway's
// clock, with edits applied.
func (l *login) token(t *testing.T, sub string, edit func(jwt.MapClaims)) string {
	t.Helper()
	c := jwt.MapClaims{"sub": sub, "iss": loginIssuer, "aud": loginAudience, "iat": now().Unix(), "exp": now().Add(time.Hour).Unix()}
	if edit != nil {
		edit(c)
	}
	tok := jwt.NewWithClaims(jwt.SigningMethodES256, c)
	tok.Header["kid"] = "login-1"
	s, err := tok.SignedString(l.key)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// accountSetup is one way of running the account block: a store, and where
// the keys and the token come from.
type accountSetup struct {
	name  string
	store string // memory or redis
	keys  func(l *login) string
	// send adds the token to a fan's requests.
	send func(f *fan, token string) []string
	// cookie is set on the fan's jar instead, when true.
	cookie bool
}

func accountSetups(t *testing.T) []accountSetup {
	return []accountSetup{
		{
			name: "memory store, PEM key, cookie", store: "memory", cookie: true,
			keys: func(l *login) string { return "public_key " + l.pemPath },
		},
		{
			name: "Redis store, JWKS, Authorization header", store: "redis",
			keys: func(l *login) string { return "jwks_url " + l.jwks.URL },
			send: func(_ *fan, token string) []string { return []string{"Authorization", "Bearer " + token} },
		},
	}
}

// accountConfig is a room of one slot whose origin echoes the path and the
// pass it got, and ends a session at /done.
func accountConfig(t *testing.T, s accountSetup, l *login, room, extra string) string {
	block := ""
	if l != nil {
		block = fmt.Sprintf(`
			account {
				%s
				cookie site_session
				header Authorization
				issuer %s
				audience %s
				login_url "/login?next={http.request.uri_escaped}"
				%s
			}`, s.keys(l), loginIssuer, loginAudience, extra)
	}
	return caddyConfig(t.TempDir(), fmt.Sprintf(`
	http://localhost:9080 {
		waiting_room {
			room %s
			%s
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
		respond "origin path={http.request.uri.path} pass={http.request.header.X-Waiting-Room-Pass} cookie={http.request.header.Cookie}" 200
	}`, room, storeLineFor(t, s.store, room), block))
}

// accountFan is one browser signed in as an account.
type accountFan struct {
	*fan
	hdr []string
}

func signedIn(t *testing.T, s accountSetup, token string) *accountFan {
	f := &accountFan{fan: newFan(t)}
	if s.cookie {
		u, _ := http.NewRequest(http.MethodGet, base, nil)
		f.client.Jar.SetCookies(u.URL, []*http.Cookie{{Name: "site_session", Value: token, Path: "/"}})
	} else if s.send != nil {
		f.hdr = s.send(f.fan, token)
	}
	return f
}

func (f *accountFan) visit(path string) (*http.Response, string) {
	f.t.Helper()
	return f.get(base+path, f.hdr...)
}

func (f *accountFan) status() waitingroom.Status {
	f.t.Helper()
	resp, body := f.get(base+"/_waiting-room/status", append([]string{"Accept", "application/json"}, f.hdr...)...)
	if resp.StatusCode != http.StatusOK {
		f.t.Fatalf("status: %d %s", resp.StatusCode, body)
	}
	var st waitingroom.Status
	if err := json.Unmarshal([]byte(body), &st); err != nil {
		f.t.Fatalf("status body %q: %v", body, err)
	}
	return st
}

// passSubject reads the sub and jti of the pass the origin echoed.
func passSubject(t *testing.T, body string) (sub, jti string) {
	t.Helper()
	_, tok, ok := strings.Cut(body, "pass=")
	tok, _, _ = strings.Cut(tok, " ")
	parts := strings.Split(tok, ".")
	if !ok || len(parts) != 3 {
		t.Fatalf("origin saw no pass: %q", body)
	}
	raw, err := base64.RawURLEncoding.DecodeString(parts[1])
	if err != nil {
		t.Fatal(err)
	}
	var c struct {
		Sub string `json:"sub"`
		JTI string `json:"jti"`
	}
	json.Unmarshal(raw, &c)
	return c.Sub, c.JTI
}

// TestCaddyAccountOnePlace: two browsers of one account get one place (the
// same position, and once admitted the same session, so the same pass
// subject), while another account queues behind; with the memory store and
// a PEM key read from a cookie, and with the Redis store and a JWKS served
// over HTTP read from the Authorization header.
func TestCaddyAccountOnePlace(t *testing.T) {
	for _, s := range accountSetups(t) {
		t.Run(s.name, func(t *testing.T) {
			clock := useTestClock(t)
			l := newLogin(t)
			newCaddy(t, accountConfig(t, s, l, uniqueRoom(t, "acct"), ""))

			first := newFan(t) // walks in, holds the one slot
			if _, body := first.get(base + "/events/1"); !strings.HasPrefix(body, "origin path=") {
				t.Fatalf("first fan: %q, want the origin", body)
			}
			alice := l.token(t, "alice", nil)
			a1, a2 := signedIn(t, s, alice), signedIn(t, s, alice)
			if _, body := a1.visit("/events/1"); !isWaitingPage(body) {
				t.Fatalf("alice's first browser: %q, want the waiting page", body)
			}
			clock.step(t, 1)
			p1 := a1.status()
			if _, body := a2.visit("/events/1"); !isWaitingPage(body) {
				t.Fatalf("alice's second browser: %q, want the waiting page", body)
			}
			p2 := a2.status()
			bob := signedIn(t, s, l.token(t, "bob", nil))
			bob.visit("/events/1")
			pb := bob.status()
			if *p1.Position != 0 || *p2.Position != *p1.Position {
				t.Fatalf("alice's browsers: positions %d and %d, want one place, next in line", *p1.Position, *p2.Position)
			}
			if *pb.Position != *p1.Position+1 {
				t.Fatalf("bob: position %d, want %d (right behind alice's one place)", *pb.Position, *p1.Position+1)
			}

			// The first fan leaves: alice's place is next, in both browsers,
			// with one session between them.
			first.get(base + "/done")
			clock.step(t, 1)
			_, body1 := a1.visit("/events/1")
			_, body2 := a2.visit("/events/1")
			sub1, jti1 := passSubject(t, body1)
			sub2, jti2 := passSubject(t, body2)
			if sub1 != sub2 || jti1 != jti2 {
				t.Fatalf("alice's browsers got passes %s/%s and %s/%s (sub/jti), want one session", sub1, jti1, sub2, jti2)
			}
			if st := bob.status(); st.State == waitingroom.StateAdmitted {
				t.Fatalf("bob was admitted beside alice's two browsers in a room of one slot")
			}
			// Her order is done in one browser: the session ends for both,
			// and the slot goes to bob.
			a1.visit("/done")
			if _, body := a2.visit("/events/1"); strings.HasPrefix(body, "origin") {
				t.Fatalf("alice's second browser after her session was ended: %q, want no way in", body)
			}
			clock.step(t, 1)
			if _, body := bob.visit("/events/1"); !strings.HasPrefix(body, "origin path=/events/1 pass=ey") {
				t.Fatalf("bob after alice's session ended: %q, want the origin", body)
			}
		})
	}
}

// TestCaddyAccountRefused: with required, each bad token gets the login
// page (a 303 for a browser, a 401 with login_url for a JSON client) and no
// place; the login page itself is never queued. Without required, a bad
// token counts for nothing: the visitor queues as one without an account.
func TestCaddyAccountRefused(t *testing.T) {
	for _, s := range accountSetups(t) {
		t.Run(s.name, func(t *testing.T) {
			useTestClock(t)
			l := newLogin(t)
			room := uniqueRoom(t, "acct-req")
			newCaddy(t, accountConfig(t, s, l, room, "required"))

			// The login page reaches the origin with no pass and no ticket,
			// also for a fan who holds both.
			f := newFan(t)
			resp, body := f.get(base + "/login?next=%2Fevents%2F1")
			if body != "origin path=/login pass= cookie=" || findCookie(resp, "foyer_ticket") != nil {
				t.Fatalf("login page: %d %q, want the origin, unqueued", resp.StatusCode, body)
			}
			_, body = f.get(base+"/login", "Cookie", "foyer_ticket=abc; foyer_pass=def; site=1", "X-Waiting-Room-Pass", "forged")
			if body != "origin path=/login pass= cookie=site=1" {
				t.Fatalf("login page with the room's cookies and a forged pass header: %q, want neither at the origin", body)
			}

			wrongKey, _ := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
			other := &login{key: wrongKey}
			unsigned, _ := jwt.NewWithClaims(jwt.SigningMethodNone, jwt.MapClaims{
				"sub": "alice", "iss": loginIssuer, "aud": loginAudience, "exp": now().Add(time.Hour).Unix(),
			}).SignedString(jwt.UnsafeAllowNoneSignatureType)
			bad := map[string]string{
				"no token":        "",
				"expired":         l.token(t, "alice", func(c jwt.MapClaims) { c["exp"] = now().Add(-time.Minute).Unix() }),
				"another issuer":  l.token(t, "alice", func(c jwt.MapClaims) { c["iss"] = "https://evil.example" }),
				"unsigned (none)": unsigned,
				"wrong key":       other.token(t, "alice", nil),
				"garbage":         "e30.e30.e30",
			}
			for name, tok := range bad {
				f := signedIn(t, s, tok)
				resp, _ := f.visit("/events/1")
				if resp.StatusCode != http.StatusSeeOther || resp.Header.Get("Location") != "/login?next=%2Fevents%2F1" {
					t.Errorf("%s, browser: %d to %q, want 303 to the login page", name, resp.StatusCode, resp.Header.Get("Location"))
				}
				if findCookie(resp, "foyer_ticket") != nil {
					t.Errorf("%s, browser: given a ticket", name)
				}
				resp, body := f.get(base+"/_waiting-room/status", append([]string{"Accept", "application/json"}, f.hdr...)...)
				var e loginError
				json.Unmarshal([]byte(body), &e)
				if resp.StatusCode != http.StatusUnauthorized || e.Error != "login_required" || e.LoginURL != "/login?next=%2F_waiting-room%2Fstatus" {
					t.Errorf("%s, JSON status: %d %s, want 401 login_required with the login URL", name, resp.StatusCode, body)
				}
			}
			// None of them took a place: the first good account walks in.
			good := signedIn(t, s, l.token(t, "alice", nil))
			if _, body := good.visit("/events/1"); !strings.HasPrefix(body, "origin path=/events/1 pass=ey") {
				t.Fatalf("good token after the refusals: %q, want the origin (nobody queued before)", body)
			}
		})
	}
}

// TestCaddyAccountOptionalIgnoresBadTokens: without required, a bad token
// is no account: the visitor gets a place of its own, as before the block.
func TestCaddyAccountOptionalIgnoresBadTokens(t *testing.T) {
	s := accountSetups(t)[0]
	clock := useTestClock(t)
	l := newLogin(t)
	newCaddy(t, accountConfig(t, s, l, uniqueRoom(t, "acct-opt"), ""))
	newFan(t).get(base + "/events/1") // holds the slot
	expired := l.token(t, "alice", func(c jwt.MapClaims) { c["exp"] = now().Add(-time.Minute).Unix() })
	a, b := signedIn(t, s, expired), signedIn(t, s, expired)
	a.visit("/events/1")
	b.visit("/events/1")
	clock.step(t, 1)
	if pa, pb := a.status(), b.status(); *pa.Position == *pb.Position {
		t.Fatalf("two browsers with an expired token share position %d: an invalid token must not name an account", *pa.Position)
	}
}

// TestCaddyAccountWithProofOfWork: with challenge pow as well, each browser
// of an account answers its own puzzle, and the answer gives it the
// account's one place: here, the session its first browser holds.
func TestCaddyAccountWithProofOfWork(t *testing.T) {
	clock := useTestClock(t)
	l := newLogin(t)
	room := uniqueRoom(t, "acct-pow")
	newCaddy(t, caddyConfig(t.TempDir(), fmt.Sprintf(`
	http://localhost:9080 {
		waiting_room {
			room %s
			total_active_users 1
			new_users_per_minute 60
			challenge pow 8
			account {
				public_key %s
				cookie site_session
			}
		}
		respond "origin path={http.request.uri.path} pass={http.request.header.X-Waiting-Room-Pass}" 200
	}`, room, l.pemPath)))
	s := accountSetups(t)[0]
	alice := l.token(t, "alice", nil)
	join := func(f *accountFan) {
		t.Helper()
		_, body := f.get(base+"/events/1", "Accept", "application/json")
		var st struct {
			State     string `json:"state"`
			Challenge struct {
				Seed string `json:"seed"`
				Bits int    `json:"bits"`
			} `json:"challenge"`
		}
		if err := json.Unmarshal([]byte(body), &st); err != nil || st.State != "challenge" {
			t.Fatalf("newcomer: %s, want a puzzle", body)
		}
		nonce := contractFind(t, st.Challenge.Seed, func(z int) bool { return z >= st.Challenge.Bits })
		req, _ := http.NewRequest(http.MethodPost, base+"/_waiting-room/join", strings.NewReader(answerBody(st.Challenge.Seed, nonce)))
		req.Header.Set("Accept", "application/json")
		req.Header.Set("Content-Type", "application/json")
		resp, err := f.client.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != http.StatusOK {
			t.Fatalf("answer: %d", resp.StatusCode)
		}
	}
	a1, a2 := signedIn(t, s, alice), signedIn(t, s, alice)
	join(a1)
	_, body1 := a1.visit("/events/1")
	clock.step(t, 1) // the node's view learns she is in
	join(a2)
	_, body2 := a2.visit("/events/1")
	sub1, jti1 := passSubject(t, body1)
	sub2, jti2 := passSubject(t, body2)
	if sub1 != sub2 || jti1 != jti2 {
		t.Fatalf("alice's browsers after their puzzles hold %s/%s and %s/%s, want one session", sub1, jti1, sub2, jti2)
	}
}
