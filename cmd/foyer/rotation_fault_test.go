package main

import (
	"crypto/ed25519"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/cookiejar"
	"net/http/httptest"
	"net/url"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/foyer-dev/foyer/booking"
	"github.com/foyer-dev/foyer/internal/redistest"
	"github.com/foyer-dev/foyer/waitingroom"
	"github.com/foyer-dev/foyer/waitingroom/pass"
)

const rotationRoom = "rotation"

// TestFaultKeyRotation rotates the signing key of a real node, killed with
// SIGKILL and started again on the same Redis: with the new key signing and the
// old one as previous, a fan waiting with the old key's ticket keeps their place
// and fans admitted with the old key's passes keep their sessions, at the
// gateway and at the origin (the booking service's JWKS client); a pass of a key
// that is not configured is refused, never a 500. Once the old key is removed,
// its passes and tickets are refused.
func TestFaultKeyRotation(t *testing.T) {
	foyer(t) // built before the clock of any phase starts
	rs := redistest.StartServer(t, nil)
	dir := t.TempDir()
	keyA, keyB, keyC := newKey(t), newKey(t), newKey(t)
	pathA, pathB := writeKey(t, dir, "a.pem", keyA), writeKey(t, dir, "b.pem", keyB)

	port, adminPort := freePort(t), freePort(t)
	base := fmt.Sprintf("http://127.0.0.1:%d", port)
	jwksURL := base + "/_waiting-room/jwks.json"
	origin := newPassOrigin(t, jwksURL)
	config := func(signing string, previous ...string) string {
		prev := ""
		if len(previous) > 0 {
			prev = "previous_signing_keys " + strings.Join(previous, " ")
		}
		return fmt.Sprintf(`{
	admin 127.0.0.1:%d
	persist_config off
	skip_install_trust
	grace_period 1ns
	storage file_system %s
}
http://127.0.0.1:%d {
	waiting_room {
		room %s
		store redis redis://%s
		total_active_users 2
		new_users_per_minute 600
		signing_key %s
		%s
	}
	reverse_proxy %s
}
`, adminPort, filepath.Join(dir, "storage"), port, rotationRoom, rs.Addr, signing, prev, origin.url)
	}

	// Key A: two fans admitted (the second may wait for the controller's next
	// step), a third waits for a slot.
	node := startNode(t, dir, config(pathA), jwksURL)
	fan1, fanX, fan2 := newFan(t), newFan(t), newFan(t)
	fan1.wantOrigin(base + "/hello")
	if code, body := fanX.get(base + "/hello"); !strings.HasPrefix(body, "hello ") {
		fanX.waitAdmitted(base, 15*time.Second)
		fanX.wantOrigin(base + "/hello")
	} else if code != http.StatusOK {
		t.Fatalf("second fan: %d %q", code, body)
	}
	if code, body := fan2.get(base + "/hello"); code != http.StatusOK || strings.HasPrefix(body, "hello ") {
		t.Fatalf("third fan with two slots taken: %d %q, want the waiting page", code, body)
	}
	ticketA := fan2.cookie(base, "foyer_ticket")
	waiting := openTicket(t, ticketA, keyA)

	// Restart with key B signing and A as previous.
	node.kill()
	restarted := time.Now()
	node = startNode(t, dir, config(pathB, pathA), jwksURL)
	fan1.wantOrigin(base + "/hello")
	recovery := time.Since(restarted)
	fanX.wantOrigin(base + "/hello")
	if kids := jwksKids(t, jwksURL); strings.Join(kids, ",") != keyB.KeyID()+","+keyA.KeyID() {
		t.Fatalf("jwks.json during the overlap lists %v, want B then A", kids)
	}
	st := fan2.status(base)
	if st.State != waitingroom.StateQueued {
		t.Fatalf("waiting fan after the rotation: %s, want queued", st.State)
	}
	// The answer re-sealed the ticket with B: the same place, now under the new key.
	if tk := openTicket(t, fan2.cookie(base, "foyer_ticket"), keyB); tk.Key != waiting.Key || tk.Visitor != waiting.Visitor {
		t.Fatalf("waiting fan's ticket after the rotation: key %d, want the place %d kept", tk.Key, waiting.Key)
	}
	forged := newFan(t)
	forged.setCookie(base, "foyer_pass", issue(t, keyC, time.Now()))
	if code, body := forged.get(base + "/hello"); code >= 500 || strings.HasPrefix(body, "hello ") {
		t.Fatalf("pass of a key not configured: %d %q, want refused without a server error", code, body)
	}

	// The first fan finishes; the waiting fan is let in with a pass of key B.
	fan1.wantOrigin(base + "/done")
	admitted := fan2.waitAdmitted(base, 15*time.Second)
	if kid := kidOf(t, fan2.cookie(base, "foyer_pass")); kid != keyB.KeyID() {
		t.Fatalf("pass issued after the rotation has kid %s, want B's %s", kid, keyB.KeyID())
	}
	fan2.wantOrigin(base + "/hello")

	// Restart with B alone: what only A signed is refused.
	node.kill()
	startNode(t, dir, config(pathB), jwksURL)
	if kids := jwksKids(t, jwksURL); len(kids) != 1 || kids[0] != keyB.KeyID() {
		t.Fatalf("jwks.json once A is dropped lists %v, want B alone", kids)
	}
	fan2.wantOrigin(base + "/hello")
	if code, body := fanX.get(base + "/hello"); code >= 500 || strings.HasPrefix(body, "hello ") {
		t.Fatalf("A's pass once A is dropped: %d %q, want refused without a server error", code, body)
	}
	replay := newFan(t)
	replay.setCookie(base, "foyer_ticket", ticketA)
	if st := replay.status(base); st.State == waitingroom.StateAdmitted {
		t.Fatalf("A's ticket once A is dropped was admitted")
	}
	if tk := openTicket(t, replay.cookie(base, "foyer_ticket"), keyB); tk.Key <= waiting.Key {
		t.Fatalf("A's ticket once A is dropped kept place %d; want a new place after %d", tk.Key, waiting.Key)
	}

	t.Logf("node restarted with a rotated key: the old key's pass reached the origin %v after the kill; the waiting fan was admitted %v after the first finished",
		recovery.Round(time.Millisecond), admitted.Round(time.Millisecond))
	origin.checkInvariants(t, 2, keyA, keyB)
	if origin.refusedValid() > 0 {
		t.Fatalf("the origin refused %d passes the gateway let through", origin.refusedValid())
	}
}

// passOrigin is the origin behind the node: it identifies customers with the
// booking service's JWKS client, as the booking service does, ends a session at
// /done, and logs every pass it accepted.
type passOrigin struct {
	url    string
	passes *booking.Passes
	mu     sync.Mutex
	seen   []originHit
	revoke map[string]time.Time // token -> when the origin ended its session
	bad    int
}

type originHit struct {
	token string
	at    time.Time
}

func newPassOrigin(t *testing.T, jwksURL string) *passOrigin {
	o := &passOrigin{revoke: map[string]time.Time{}}
	// A test's phases are seconds apart; a real origin's default is 10s.
	o.passes = booking.NewJWKSPasses(jwksURL, rotationRoom, booking.SystemClock{}, nil).WithMinRefetch(100 * time.Millisecond)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		sub, err := o.passes.Customer(r)
		o.mu.Lock()
		defer o.mu.Unlock()
		if err != nil {
			o.bad++
			w.Header().Set("Content-Type", "application/json")
			w.WriteHeader(http.StatusUnauthorized)
			_, _ = io.WriteString(w, `{"error":"unauthorized","message":"the admission pass is not valid"}`)
			return
		}
		tok := r.Header.Get(booking.PassHeader)
		o.seen = append(o.seen, originHit{token: tok, at: time.Now()})
		if r.URL.Path == "/done" {
			o.revoke[tok] = time.Now()
			w.Header().Set("X-Waiting-Room-Command", "revoke")
		}
		_, _ = io.WriteString(w, "hello "+sub)
	}))
	t.Cleanup(srv.Close)
	o.url = srv.URL
	return o
}

func (o *passOrigin) refusedValid() int {
	o.mu.Lock()
	defer o.mu.Unlock()
	return o.bad
}

// checkInvariants checks, from the passes the origin accepted, that no more
// than limit sessions were valid at once (a pass counts from its issue until
// the origin ended it, else until it expires) and that passes were issued in
// the order of the fans' places.
func (o *passOrigin) checkInvariants(t *testing.T, limit int, keys ...*waitingroom.SigningKey) {
	t.Helper()
	o.mu.Lock()
	defer o.mu.Unlock()
	trusted := make(map[string]ed25519.PublicKey, len(keys))
	for _, k := range keys {
		trusted[k.KeyID()] = k.Public()
	}
	type session struct {
		pass       waitingroom.Pass
		start, end time.Time
	}
	byID := map[string]session{}
	for _, h := range o.seen {
		at := h.at
		v := pass.NewVerifier(trusted, pass.WithClock(func() time.Time { return at }), pass.WithLeeway(5*time.Second))
		p, err := v.Verify(h.token, rotationRoom)
		if err != nil {
			t.Fatalf("the origin accepted a pass that does not verify: %v", err)
		}
		end := p.ExpiresAt
		if r, ok := o.revoke[h.token]; ok && r.Before(end) {
			// Passes carry whole seconds: the end is compared at that
			// resolution, or a pass issued in the second of a revocation
			// (after it) would look issued before it.
			end = r.Truncate(time.Second)
		}
		byID[p.ID] = session{pass: p, start: p.IssuedAt, end: end}
	}
	var sessions []session
	for _, s := range byID {
		sessions = append(sessions, s)
	}
	// Passes carry whole seconds, so two admitted within one second (the
	// second fan a controller step after the first) tie: a tie says nothing
	// about their order, and is ordered by place rather than left to chance.
	sort.Slice(sessions, func(i, j int) bool {
		if !sessions[i].start.Equal(sessions[j].start) {
			return sessions[i].start.Before(sessions[j].start)
		}
		return sessions[i].pass.OrderKey < sessions[j].pass.OrderKey
	})
	for i, s := range sessions {
		valid := 0
		for _, other := range sessions {
			if !other.start.After(s.start) && other.end.After(s.start) {
				valid++
			}
		}
		if valid > limit {
			t.Errorf("%d sessions valid at once when %s began, cap %d", valid, s.pass.ID, limit)
		}
		if i > 0 && s.pass.OrderKey < sessions[i-1].pass.OrderKey {
			t.Errorf("place %d admitted after place %d", s.pass.OrderKey, sessions[i-1].pass.OrderKey)
		}
	}
	if len(sessions) != 3 {
		t.Errorf("the origin saw %d sessions, want 3", len(sessions))
	}
}

// fan is one browser: its own cookie jar, redirects not followed.
type fan struct {
	t      *testing.T
	client *http.Client
}

func newFan(t *testing.T) *fan {
	jar, _ := cookiejar.New(nil)
	return &fan{t: t, client: &http.Client{
		Jar:           jar,
		Timeout:       10 * time.Second,
		CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse },
	}}
}

func (f *fan) get(rawURL string, header ...string) (int, string) {
	f.t.Helper()
	req, err := http.NewRequest(http.MethodGet, rawURL, nil)
	if err != nil {
		f.t.Fatal(err)
	}
	for i := 0; i+1 < len(header); i += 2 {
		req.Header.Set(header[i], header[i+1])
	}
	resp, err := f.client.Do(req)
	if err != nil {
		f.t.Fatal(err)
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(io.LimitReader(resp.Body, 1<<20))
	return resp.StatusCode, string(body)
}

// wantOrigin asserts that the request went through to the origin and was
// accepted there.
func (f *fan) wantOrigin(rawURL string) {
	f.t.Helper()
	if code, body := f.get(rawURL); code != http.StatusOK || !strings.HasPrefix(body, "hello ") {
		f.t.Fatalf("GET %s: %d %q, want the origin's answer", rawURL, code, body)
	}
}

func (f *fan) status(base string) waitingroom.Status {
	f.t.Helper()
	code, body := f.get(base+"/_waiting-room/status", "Accept", "application/json")
	if code != http.StatusOK {
		f.t.Fatalf("status: %d %s", code, body)
	}
	var st waitingroom.Status
	if err := json.Unmarshal([]byte(body), &st); err != nil {
		f.t.Fatalf("status body %q: %v", body, err)
	}
	return st
}

// waitAdmitted polls the status, as the waiting page does, until the fan is
// admitted or the deadline passes; it returns how long that took.
func (f *fan) waitAdmitted(base string, limit time.Duration) time.Duration {
	f.t.Helper()
	start := time.Now()
	for {
		st := f.status(base)
		if st.State == waitingroom.StateAdmitted {
			return time.Since(start)
		}
		if time.Since(start) > limit {
			f.t.Fatalf("not admitted within %v: %+v", limit, st)
		}
		time.Sleep(200 * time.Millisecond)
	}
}

func (f *fan) cookie(base, name string) string {
	f.t.Helper()
	u, _ := url.Parse(base)
	for _, c := range f.client.Jar.Cookies(u) {
		if c.Name == name {
			return c.Value
		}
	}
	f.t.Fatalf("no %s cookie", name)
	return ""
}

func (f *fan) setCookie(base, name, value string) {
	u, _ := url.Parse(base)
	f.client.Jar.SetCookies(u, []*http.Cookie{{Name: name, Value: value, Path: "/"}})
}

func newKey(t *testing.T) *waitingroom.SigningKey {
	t.Helper()
	k, err := waitingroom.GenerateSigningKey()
	if err != nil {
		t.Fatal(err)
	}
	return k
}

func writeKey(t *testing.T, dir, name string, k *waitingroom.SigningKey) string {
	t.Helper()
	data, err := k.MarshalPEM()
	if err != nil {
		t.Fatal(err)
	}
	p := filepath.Join(dir, name)
	if err := os.WriteFile(p, data, 0o600); err != nil {
		t.Fatal(err)
	}
	return p
}

// issue signs a pass for the room that looks in every way like the gateway's.
func issue(t *testing.T, k *waitingroom.SigningKey, now time.Time) string {
	t.Helper()
	tok, err := k.IssuePass(waitingroom.Pass{Room: rotationRoom, Subject: "forger", IssuedAt: now, ExpiresAt: now.Add(10 * time.Minute)}, waitingroom.DefaultIssuer)
	if err != nil {
		t.Fatal(err)
	}
	return tok
}

func openTicket(t *testing.T, value string, k *waitingroom.SigningKey) waitingroom.Ticket {
	t.Helper()
	tk, err := k.OpenTicket(value, rotationRoom, time.Now(), time.Hour)
	if err != nil {
		t.Fatalf("ticket does not open with key %s: %v", k.KeyID(), err)
	}
	return tk
}

func jwksKids(t *testing.T, jwksURL string) []string {
	t.Helper()
	resp, err := http.Get(jwksURL)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var set pass.JWKS
	if err := json.NewDecoder(resp.Body).Decode(&set); err != nil {
		t.Fatal(err)
	}
	var kids []string
	for _, k := range set.Keys {
		kids = append(kids, k.KeyID)
	}
	return kids
}

func kidOf(t *testing.T, token string) string {
	t.Helper()
	head, _, _ := strings.Cut(token, ".")
	raw, err := base64.RawURLEncoding.DecodeString(head)
	if err != nil {
		t.Fatalf("pass header: %v", err)
	}
	var h struct {
		Kid string `json:"kid"`
	}
	if err := json.Unmarshal(raw, &h); err != nil {
		t.Fatalf("pass header: %v", err)
	}
	return h.Kid
}
