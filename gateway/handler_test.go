package gateway

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"os"
	"strings"
	"testing"
	"time"

	"go.uber.org/zap"

	"github.com/foyer-dev/foyer/waitingroom"
	"github.com/foyer-dev/foyer/waitingroom/memstore"
	"github.com/foyer-dev/foyer/waitingroom/pass"
	"github.com/foyer-dev/foyer/waitingroom/storetest"
)

// origin stands in for whatever sits behind the gateway.
type origin struct {
	calls   int
	lastReq *http.Request
	command string
}

func (o *origin) ServeHTTP(w http.ResponseWriter, r *http.Request) error {
	o.calls++
	o.lastReq = r
	if o.command != "" {
		w.Header().Set(headerCommand, o.command)
	}
	w.Header().Set("X-Waiting-Room-Internal", "leak")
	_, err := w.Write([]byte("origin"))
	return err
}

// testHandler provisions h (without a Caddy context) on its own store.
func testHandler(t *testing.T, h Handler, store waitingroom.Store) *Handler {
	t.Helper()
	if h.Room == "" {
		h.Room = "unit"
	}
	if err := h.setup(); err != nil {
		t.Fatal(err)
	}
	key, err := waitingroom.GenerateSigningKey()
	if err != nil {
		t.Fatal(err)
	}
	h.key, h.logger = key, zap.NewNop()
	if store == nil {
		store = memstore.New()
	}
	h.room, err = waitingroom.NewRoom(waitingroom.Config{ID: h.Room, Settings: h.settings, Store: store, Key: key, Now: now, OpenOnStoreFailure: h.OnStoreFailure == storeFailureOpen})
	if err != nil {
		t.Fatal(err)
	}
	if err := h.room.Start(context.Background()); err != nil {
		t.Fatal(err)
	}
	return &h
}

func serve(h *Handler, o *origin, req *http.Request) *httptest.ResponseRecorder {
	rec := httptest.NewRecorder()
	if err := h.ServeHTTP(rec, req, o); err != nil {
		rec.Code = 500
		rec.Body.WriteString(err.Error())
	}
	return rec
}

func get(path string, cookies ...*http.Cookie) *http.Request {
	req := httptest.NewRequest(http.MethodGet, "http://example.test"+path, nil)
	for _, c := range cookies {
		req.AddCookie(c)
	}
	return req
}

func cookieFrom(rec *httptest.ResponseRecorder, name string) *http.Cookie {
	for _, c := range rec.Result().Cookies() {
		if c.Name == name {
			return c
		}
	}
	return nil
}

func TestMalformedCookiesMakeANewVisitor(t *testing.T) {
	h := testHandler(t, Handler{Settings: waitingroom.Settings{QueueAll: true}}, nil)
	other := testHandler(t, Handler{Room: "other"}, nil)
	// A genuine ticket and pass of another room.
	rec := serve(other, &origin{}, get("/"))
	otherPass, otherTicket := cookieFrom(rec, "foyer_pass"), cookieFrom(rec, "foyer_ticket")
	if otherPass == nil || otherTicket == nil {
		t.Fatal("the other room admitted nobody")
	}
	cases := []struct {
		name   string
		cookie *http.Cookie
	}{
		{"garbage ticket", &http.Cookie{Name: "foyer_ticket", Value: "garbage"}},
		{"oversized ticket", &http.Cookie{Name: "foyer_ticket", Value: strings.Repeat("A", 8000)}},
		{"base64 ticket of junk", &http.Cookie{Name: "foyer_ticket", Value: "AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA"}},
		{"another room's ticket", &http.Cookie{Name: "foyer_ticket", Value: otherTicket.Value}},
		{"garbage pass", &http.Cookie{Name: "foyer_pass", Value: "a.b.c"}},
		{"another room's pass", &http.Cookie{Name: "foyer_pass", Value: otherPass.Value}},
		{"alg none pass", &http.Cookie{Name: "foyer_pass", Value: "eyJhbGciOiJub25lIiwidHlwIjoiSldUIn0.eyJzdWIiOiJ4IiwiYXVkIjoidW5pdCJ9."}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			o := &origin{}
			rec := serve(h, o, get("/events/42", tc.cookie))
			if rec.Code != http.StatusOK || o.calls != 0 || !isWaitingPage(rec.Body.String()) {
				t.Fatalf("got %d, origin called %d times; want the waiting page and no origin", rec.Code, o.calls)
			}
			if c := cookieFrom(rec, "foyer_ticket"); c == nil || !c.HttpOnly || c.SameSite != http.SameSiteLaxMode {
				t.Fatalf("no fresh HttpOnly, SameSite=Lax ticket: %v", rec.Result().Cookies())
			}
		})
	}
}

func TestAdmittedRequestCarriesOnlyOurPass(t *testing.T) {
	h := testHandler(t, Handler{}, nil)
	o := &origin{command: ""}
	req := get("/events/42")
	req.Header.Set("X-Waiting-Room-Pass", "forged")
	req.Header.Set("x-waiting-room-anything", "evil")
	rec := serve(h, o, req)
	if o.calls != 1 {
		t.Fatalf("first visitor to an empty room did not reach the origin: %d", rec.Code)
	}
	pass := o.lastReq.Header.Get(headerPass)
	if pass == "forged" || o.lastReq.Header.Get("X-Waiting-Room-Anything") != "" {
		t.Fatalf("client-sent headers reached the origin: %v", o.lastReq.Header)
	}
	if _, err := h.room.CheckPass(pass); err != nil {
		t.Fatalf("the origin got a pass that does not verify: %v", err)
	}
	if rec.Header().Get("X-Waiting-Room-Internal") != "" {
		t.Fatal("an X-Waiting-Room-* response header leaked to the client")
	}
	// Later requests go straight through on the cookie, stripped the same:
	// a header under any spelling, even one never made canonical.
	req2 := get("/seats", cookieFrom(rec, "foyer_pass"))
	req2.Header.Set("X-Waiting-Room-Pass", "forged")
	req2.Header["x-waiting-room-raw"] = []string{"evil"}
	rec2 := serve(h, o, req2)
	if o.calls != 2 || rec2.Body.String() != "origin" {
		t.Fatalf("second request with the pass: %d %q", rec2.Code, rec2.Body.String())
	}
	if got := o.lastReq.Header.Values(headerPass); len(got) != 1 || got[0] == "forged" || o.lastReq.Header["x-waiting-room-raw"] != nil {
		t.Fatalf("client-sent headers reached the origin beside a pass: %v", o.lastReq.Header)
	}
}

func TestJSONStatus(t *testing.T) {
	for _, code := range []int{0, 429} {
		h := testHandler(t, Handler{QueuedStatusCode: code, Settings: waitingroom.Settings{QueueAll: true}}, nil)
		req := get("/events/42")
		req.Header.Set("Accept", "application/json")
		rec := serve(h, &origin{}, req)
		want := http.StatusOK
		if code == 429 {
			want = http.StatusTooManyRequests
			if rec.Header().Get("Retry-After") == "" {
				t.Error("429 without Retry-After")
			}
		}
		var st waitingroom.Status
		if rec.Code != want || json.Unmarshal(rec.Body.Bytes(), &st) != nil || st.State != waitingroom.StatePaused || st.Room != "unit" {
			t.Fatalf("queued_status_code %d: got %d %s", code, rec.Code, rec.Body)
		}
	}
}

func TestEndpointsBadInput(t *testing.T) {
	h := testHandler(t, Handler{}, nil)
	cases := []struct {
		method, path string
		code         int
		errCode      string
	}{
		{http.MethodPost, "/_waiting-room/status", 405, "method_not_allowed"},
		{http.MethodDelete, "/_waiting-room/jwks.json", 405, "method_not_allowed"},
		{http.MethodGet, "/_waiting-room/nope", 404, "not_found"},
		{http.MethodGet, "/_waiting-room/status/extra", 404, "not_found"},
	}
	for _, tc := range cases {
		o := &origin{}
		rec := serve(h, o, httptest.NewRequest(tc.method, "http://example.test"+tc.path, strings.NewReader("junk")))
		var e apiError
		if rec.Code != tc.code || json.Unmarshal(rec.Body.Bytes(), &e) != nil || e.Error != tc.errCode || o.calls != 0 {
			t.Errorf("%s %s: got %d %s, want %d with error %q", tc.method, tc.path, rec.Code, rec.Body, tc.code, tc.errCode)
		}
	}
	// A path that only starts like the prefix belongs to the site.
	o := &origin{}
	serve(h, o, get("/_waiting-roomx"))
	if o.calls != 1 {
		t.Error("/_waiting-roomx was taken for a room endpoint")
	}
}

func TestJWKSVerifiesPasses(t *testing.T) {
	h := testHandler(t, Handler{}, nil)
	o := &origin{}
	serve(h, o, get("/"))
	rec := serve(h, &origin{}, get("/_waiting-room/jwks.json"))
	keys, err := pass.ParseJWKS(rec.Body.Bytes())
	if err != nil {
		t.Fatal(err)
	}
	v := pass.NewVerifier(keys, pass.WithIssuer(pass.DefaultIssuer))
	p, err := v.Verify(o.lastReq.Header.Get(headerPass), "unit")
	if err != nil {
		t.Fatalf("an origin with only the JWKS cannot verify the pass: %v", err)
	}
	if p.Room != "unit" || p.Subject == "" {
		t.Fatalf("pass %+v", p)
	}
}

func TestStoreDownNewVisitorsGet503(t *testing.T) {
	flaky := storetest.NewFlaky(memstore.New())
	h := testHandler(t, Handler{Settings: waitingroom.Settings{QueueAll: true}}, flaky)
	open := testHandler(t, Handler{Room: "open", OnStoreFailure: "open", Settings: waitingroom.Settings{QueueAll: true}}, flaky)
	waiting := cookieFrom(serve(h, &origin{}, get("/")), "foyer_ticket")
	waitingOpen := cookieFrom(serve(open, &origin{}, get("/")), "foyer_ticket")
	flaky.SetDown(true)
	clock := useTestClock(t)
	clock.Advance(5 * time.Second)
	_ = h.room.Tick(context.Background())

	rec := serve(h, &origin{}, get("/events/42"))
	if rec.Code != http.StatusServiceUnavailable || rec.Header().Get("Retry-After") == "" || !isWaitingPage(rec.Body.String()) {
		t.Fatalf("new visitor with the store down: %d, Retry-After %q", rec.Code, rec.Header().Get("Retry-After"))
	}
	req := get("/events/42")
	req.Header.Set("Accept", "application/json")
	rec = serve(h, &origin{}, req)
	var e apiError
	if rec.Code != http.StatusServiceUnavailable || json.Unmarshal(rec.Body.Bytes(), &e) != nil || e.Error != "unavailable" {
		t.Fatalf("new JSON visitor with the store down: %d %s", rec.Code, rec.Body)
	}
	// A visitor already waiting keeps their ticket and is told we are reconnecting.
	req = get("/_waiting-room/status", waiting)
	rec = serve(h, &origin{}, req)
	var st waitingroom.Status
	if rec.Code != http.StatusOK || json.Unmarshal(rec.Body.Bytes(), &st) != nil || !st.Reconnecting {
		t.Fatalf("waiting visitor with the store down: %d %s", rec.Code, rec.Body)
	}

	_ = open.room.Tick(context.Background())
	o := &origin{}
	serve(open, o, get("/events/42"))
	if o.calls != 1 || o.lastReq.Header.Get(headerPass) == "" {
		t.Fatal("on_store_failure open did not let a newcomer through with a pass")
	}
	serve(open, o, get("/events/42", waitingOpen))
	if o.calls != 2 || o.lastReq.Header.Get(headerPass) == "" {
		t.Fatal("on_store_failure open kept a fan who was already waiting")
	}
}

func TestOriginDeclaresSoldOut(t *testing.T) {
	h := testHandler(t, Handler{}, nil)
	o := &origin{command: "sold-out"}
	rec := serve(h, o, get("/checkout"))
	if o.calls != 1 || rec.Header().Get(headerCommand) != "" {
		t.Fatalf("sold-out response: origin calls %d, header %q", o.calls, rec.Header().Get(headerCommand))
	}
	req := get("/events/42")
	req.Header.Set("Accept", "application/json")
	rec = serve(h, &origin{}, req)
	var st waitingroom.Status
	if json.Unmarshal(rec.Body.Bytes(), &st) != nil || st.State != waitingroom.StateSoldOut {
		t.Fatalf("new visitor after the origin declared sold out: %s", rec.Body)
	}
}

func TestPassthroughStillIssuesPasses(t *testing.T) {
	h := testHandler(t, Handler{Settings: waitingroom.Settings{QueueingMethod: "passthrough", TotalActiveUsers: 1}}, nil)
	for i := range 3 {
		o := &origin{}
		serve(h, o, get("/"))
		if o.calls != 1 || o.lastReq.Header.Get(headerPass) == "" {
			t.Fatalf("visitor %d in a passthrough room: origin calls %d", i, o.calls)
		}
	}
}

func TestCustomPage(t *testing.T) {
	page := t.TempDir() + "/page.html"
	src := `<!doctype html><title>{{.Title}}</title><p id="mine">{{.Headline}} / {{.Position}} / {{.Status.State}}</p>`
	if err := os.WriteFile(page, []byte(src), 0o600); err != nil {
		t.Fatal(err)
	}
	// queue_all: everyone waits, and is told so in the room's words.
	h := testHandler(t, Handler{Page: page, Settings: waitingroom.Settings{Title: "Custom <night>", QueueAll: true}}, nil)
	rec := serve(h, &origin{}, get("/"))
	if body := rec.Body.String(); !strings.Contains(body, `<p id="mine">You&#39;re in line / 0 / paused</p>`) || !strings.Contains(body, "Custom &lt;night&gt;") {
		t.Fatalf("custom page not used or not escaped: %s", body)
	}
	if err := (&Handler{Room: "r", Page: t.TempDir() + "/missing.html"}).setup(); err == nil || !strings.Contains(err.Error(), "page") {
		t.Fatalf("a missing page file: %v, want an error naming page", err)
	}
}

func TestOriginSeesNoneOfOurCookies(t *testing.T) {
	h := testHandler(t, Handler{}, nil)
	o := &origin{}
	first := serve(h, o, get("/"))
	req := get("/cart", &http.Cookie{Name: "session", Value: "abc"}, cookieFrom(first, "foyer_pass"),
		cookieFrom(first, "foyer_ticket"), &http.Cookie{Name: "theme", Value: "dark"})
	serve(h, o, req)
	if o.calls != 2 {
		t.Fatalf("origin calls %d", o.calls)
	}
	if got := o.lastReq.Header.Get("Cookie"); got != "session=abc; theme=dark" {
		t.Fatalf("origin saw Cookie %q, want only the site's own cookies", got)
	}
	serve(h, o, get("/cart", cookieFrom(first, "foyer_pass")))
	if got, ok := o.lastReq.Header["Cookie"]; ok {
		t.Fatalf("origin saw Cookie %q, want none", got)
	}
}
