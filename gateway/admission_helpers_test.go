package gateway

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"io"
	"maps"
	"net/http"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/coder/websocket"

	"github.com/foyer-dev/foyer/waitingroom"
)

// Helpers of the admission tests (idleresume_caddy_test.go and
// claimedticket_caddy_test.go): a client whose cookies the test controls,
// the pass as the origin reads it, and the room's live figures as the admin
// API gives them.

// admissionStores are the stores each admission test runs on: the memory
// store, and the machine's Redis under a room name of the test's own.
var admissionStores = []string{"memory", "redis"}

// fanClient keeps its cookies by name, as one browser on one site does, but
// ages none of them: the gateway runs on the test's clock, and a cookie jar
// counts Max-Age on the wall clock, so a jar would drop a pass at a moment
// the test does not choose. The room judges stale passes and tickets itself.
type fanClient struct {
	t       *testing.T
	client  *http.Client
	cookies map[string]string
}

func newFanClient(t *testing.T) *fanClient {
	return &fanClient{
		t:       t,
		client:  &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }, Timeout: 10 * time.Second},
		cookies: map[string]string{},
	}
}

// clientReply is one answer: its code and body, and the ticket and pass it set.
type clientReply struct {
	code   int
	body   string
	ticket string // the ticket cookie it set, or ""
	pass   string // the pass cookie it set, or ""
}

// request sends method to path with the given headers (name, value, ...),
// carrying the browser's cookies named in only (every cookie when only is
// empty), and keeps the cookies the answer sets.
func (c *fanClient) request(method, path, body string, only []string, header ...string) clientReply {
	c.t.Helper()
	var rd io.Reader
	if body != "" {
		rd = strings.NewReader(body)
	}
	req, err := http.NewRequest(method, base+path, rd)
	if err != nil {
		c.t.Fatal(err)
	}
	for i := 0; i+1 < len(header); i += 2 {
		req.Header.Set(header[i], header[i+1])
	}
	if line := c.cookieHeader(only); line != "" {
		req.Header.Set("Cookie", line)
	}
	resp, err := c.client.Do(req)
	if err != nil {
		c.t.Fatal(err)
	}
	defer resp.Body.Close()
	data, _ := io.ReadAll(resp.Body)
	rep := clientReply{code: resp.StatusCode, body: string(data)}
	for _, ck := range resp.Cookies() {
		if ck.MaxAge < 0 {
			delete(c.cookies, ck.Name)
			continue
		}
		c.cookies[ck.Name] = ck.Value
		switch ck.Name {
		case "foyer_ticket":
			rep.ticket = ck.Value
		case "foyer_pass":
			rep.pass = ck.Value
		}
	}
	return rep
}

// cookieHeader is the Cookie line of the browser's cookies named in only,
// or of all of them.
func (c *fanClient) cookieHeader(only []string) string {
	var parts []string
	for _, name := range slices.Sorted(maps.Keys(c.cookies)) {
		if len(only) == 0 || slices.Contains(only, name) {
			parts = append(parts, name+"="+c.cookies[name])
		}
	}
	return strings.Join(parts, "; ")
}

// status polls the room's status endpoint as an app does, with the
// browser's cookies named in only (all of them when only is empty).
func (c *fanClient) status(only ...string) (waitingroom.Status, clientReply) {
	c.t.Helper()
	rep := c.request(http.MethodGet, "/_waiting-room/status", "", only, "Accept", "application/json")
	var st waitingroom.Status
	if rep.code != http.StatusOK || json.Unmarshal([]byte(rep.body), &st) != nil {
		c.t.Fatalf("status: %d %q", rep.code, rep.body)
	}
	return st, rep
}

// page asks for the protected page as a browser does.
func (c *fanClient) page(path string, only ...string) clientReply {
	c.t.Helper()
	return c.request(http.MethodGet, path, "", only, "Accept", "text/html")
}

// join posts an answer to the proof of work, as the waiting page's worker
// does.
func (c *fanClient) join(seed, nonce string, only ...string) clientReply {
	c.t.Helper()
	return c.request(http.MethodPost, "/_waiting-room/join", answerBody(seed, nonce), only,
		"Accept", "application/json", "Content-Type", "application/json")
}

// solveChallenge asks for the page as a newcomer's app would, expects the
// puzzle, and returns its seed and a nonce that answers it. A seed is bound
// to the client's address, not to any cookie (docs/endpoints.md, "Answering the proof of
// work"), so it is asked for without cookies, by a client of its own.
func (c *fanClient) solveChallenge() (seed, nonce string) {
	c.t.Helper()
	rep := newFanClient(c.t).request(http.MethodGet, "/events/1", "", nil, "Accept", "application/json")
	var st powStatus
	if err := json.Unmarshal([]byte(rep.body), &st); err != nil || st.State != "challenge" || st.Challenge == nil {
		c.t.Fatalf("asking for a puzzle: %d %s, want state challenge", rep.code, rep.body)
	}
	nonce = contractFind(c.t, st.Challenge.Seed, func(z int) bool { return z >= st.Challenge.Bits })
	return st.Challenge.Seed, nonce
}

// liveSocket opens the room's WebSocket with the browser's cookies named in
// only. It returns the HTTP status of a refused upgrade, or the first status
// pushed over an accepted one.
func (c *fanClient) liveSocket(only ...string) (refused int, first waitingroom.Status) {
	c.t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	hdr := http.Header{}
	if line := c.cookieHeader(only); line != "" {
		hdr.Set("Cookie", line)
	}
	hdr.Set("Origin", base)
	conn, resp, err := websocket.Dial(ctx, strings.Replace(base, "http", "ws", 1)+"/_waiting-room/ws", &websocket.DialOptions{HTTPHeader: hdr})
	if err != nil {
		if resp == nil {
			c.t.Fatalf("live connection: %v", err)
		}
		return resp.StatusCode, waitingroom.Status{}
	}
	defer conn.CloseNow()
	_, msg, err := conn.Read(ctx)
	if err != nil {
		c.t.Fatalf("live connection pushed nothing: %v", err)
	}
	if err := json.Unmarshal(msg, &first); err != nil {
		c.t.Fatalf("live push %q: %v", msg, err)
	}
	return 0, first
}

// passSeen is what an origin reads in a pass: whose it is (sub), which
// session (jti), when that session ends (exp) and the place it was let in
// from (order_key). docs/endpoints.md, "What fans, apps and origins see": every pass of
// one session has the same jti, derived from aud, sub and exp.
type passSeen struct {
	Sub      string `json:"sub"`
	JTI      string `json:"jti"`
	Exp      int64  `json:"exp"`
	OrderKey uint64 `json:"order_key"`
}

// readPass decodes a pass's claims without verifying it: the gateway
// signed it, and the test reads it as the origin would.
func readPass(t *testing.T, token string) passSeen {
	t.Helper()
	parts := strings.Split(token, ".")
	if len(parts) != 3 {
		t.Fatalf("pass %q is not a JWT", token)
	}
	raw, err := base64.RawURLEncoding.DecodeString(parts[1])
	if err != nil {
		t.Fatalf("pass payload: %v", err)
	}
	var p passSeen
	if err := json.Unmarshal(raw, &p); err != nil {
		t.Fatalf("pass payload: %v", err)
	}
	return p
}

// sameSession reports whether two passes are of one session.
func (p passSeen) sameSession(o passSeen) bool {
	return p.Sub == o.Sub && p.JTI == o.JTI && p.Exp == o.Exp
}

// describe writes the pass for a failure message, its end in seconds from
// start.
func (p passSeen) describe(start time.Time) string {
	return fmt.Sprintf("sub %s jti %s exp +%ds order_key %d", short(p.Sub), short(p.JTI), p.Exp-start.Unix(), p.OrderKey)
}

func short(s string) string {
	if len(s) > 8 {
		return s[:8]
	}
	return s
}

// originPassOf is the pass the origin echoed in a body written as
// "origin pass=<token>", or "" when the request did not reach the origin.
func originPassOf(body string) string {
	_, tok, ok := strings.Cut(body, "origin pass=")
	if !ok {
		return ""
	}
	tok, _, _ = strings.Cut(tok, " ")
	return strings.TrimSpace(tok)
}

// adminFigures are the live figures of a room as Caddy's admin endpoint
// gives them (docs/configuration.md, "Admin API"): the store's counters (seq is the next
// order key, so the places made), the live sessions, the admissions still
// in their grace, the returners waiting for a slot, and the line.
type adminFigures struct {
	Counters  waitingroom.Counters `json:"counters"`
	Active    int                  `json:"active"`
	Pending   int                  `json:"pending"`
	Returning int                  `json:"returning"`
	Waiting   uint64               `json:"waiting"`
	Places    uint64               `json:"places"`
}

// figures reads the room's figures as this node last refreshed them: call
// it after a clock step, which refreshes every room.
func figures(t *testing.T, room string) adminFigures {
	t.Helper()
	code, body := adminCall(t, http.MethodGet, "/waiting-room/"+room, "")
	var f adminFigures
	if err := json.Unmarshal([]byte(body), &f); code != http.StatusOK || err != nil {
		t.Fatalf("admin view of %s: %d %s", room, code, body)
	}
	return f
}

// roomByID is the room of this process named room.
func roomByID(t *testing.T, room string) *waitingroom.Room {
	t.Helper()
	var r *waitingroom.Room
	rooms.Range(func(_, v any) bool {
		if h := v.(*roomHandle); h.room.ID() == room {
			r = h.room
		}
		return r == nil
	})
	if r == nil {
		t.Fatalf("no room %s", room)
	}
	return r
}

// openTicket reads a ticket cookie as the room does.
func openTicket(t *testing.T, room, value string) waitingroom.Ticket {
	t.Helper()
	tk, err := roomByID(t, room).OpenTicket(value)
	if err != nil {
		t.Fatalf("ticket %q: %v", value, err)
	}
	return tk
}

// position writes a status's position, or null.
func position(st waitingroom.Status) string {
	if st.Position == nil {
		return "null"
	}
	return fmt.Sprint(*st.Position)
}
