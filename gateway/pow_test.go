package gateway

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"strings"
	"testing"

	"github.com/foyer-dev/foyer/waitingroom"
)

// TestChallengeSetAtRuntime: an admin turns the proof of work on and off
// while the room runs; newcomers are asked for it exactly while it is on,
// and a value out of bounds, or not a string, is refused naming the setting.
func TestChallengeSetAtRuntime(t *testing.T) {
	h := testHandler(t, Handler{Settings: waitingroom.Settings{QueueAll: true}}, nil)
	admin := adminFor(h.room)
	newcomer := func() waitingroom.Status {
		t.Helper()
		req := get("/events/1")
		req.Header.Set("Accept", "application/json")
		rec := serve(h, &origin{}, req)
		var st waitingroom.Status
		if err := json.Unmarshal(rec.Body.Bytes(), &st); err != nil {
			t.Fatalf("%d %s: %v", rec.Code, rec.Body, err)
		}
		if (cookieFrom(rec, "foyer_ticket") != nil) == (st.State == waitingroom.StateChallenge) {
			t.Fatalf("state %s with ticket %v: a ticket goes with a place, and a challenge with none", st.State, cookieFrom(rec, "foyer_ticket"))
		}
		return st
	}
	if st := newcomer(); st.State != waitingroom.StatePaused {
		t.Fatalf("before: %s, want a place (paused: queue_all)", st.State)
	}
	for _, tc := range []struct{ body, errCode string }{
		{`{"challenge": "pow 29"}`, "invalid_setting"},
		{`{"challenge": 20}`, "invalid_setting"},
		{`{"challenge": "captcha"}`, "invalid_setting"},
		{`{"challenge": null}`, "invalid_setting"},
	} {
		rec := call(t, admin, http.MethodPatch, "/waiting-room/unit", tc.body)
		if e := decodeAPIError(t, rec); rec.Code != http.StatusBadRequest || e.Error != tc.errCode || !strings.Contains(e.Message, "challenge") {
			t.Errorf("PATCH %s: %d %+v, want 400 %s naming the setting", tc.body, rec.Code, e, tc.errCode)
		}
	}
	decodeView(t, call(t, admin, http.MethodPatch, "/waiting-room/unit", `{"challenge": "pow 10"}`))
	if err := h.room.Tick(context.Background()); err != nil {
		t.Fatal(err)
	}
	st := newcomer()
	if st.State != waitingroom.StateChallenge || st.Challenge == nil || st.Challenge.Bits != 10 {
		t.Fatalf("while on: %+v, want a 10-bit challenge", st)
	}
	if v := decodeView(t, call(t, admin, http.MethodGet, "/waiting-room/unit", "")); v.Settings.Challenge.PoWBits != 10 || v.Node.Challenges != 1 {
		t.Fatalf("admin view: %+v %+v", v.Settings.Challenge, v.Node)
	}
	decodeView(t, call(t, admin, http.MethodPatch, "/waiting-room/unit", `{"challenge": "off"}`))
	if err := h.room.Tick(context.Background()); err != nil {
		t.Fatal(err)
	}
	if st := newcomer(); st.State != waitingroom.StatePaused {
		t.Fatalf("after: %s, want a place", st.State)
	}
}

// TestChallengePageForBrowsers: a newcomer's browser is given the puzzle
// page: the seed and the join and worker URLs for its script, a notice for
// browsers without JavaScript, and no reload that would only bring a new
// puzzle. The worker script is served under the prefix.
func TestChallengePageForBrowsers(t *testing.T) {
	h := testHandler(t, Handler{Settings: waitingroom.Settings{Challenge: waitingroom.Challenge{PoWBits: 12}}}, nil)
	rec := serve(h, &origin{}, get("/events/1"))
	body := rec.Body.String()
	for _, want := range []string{`data-join-url="/_waiting-room/join"`, `data-worker-url="/_waiting-room/pow-worker.js"`, `data-bits="12"`, "This sale needs JavaScript"} {
		if !strings.Contains(body, want) {
			t.Errorf("page lacks %q", want)
		}
	}
	if rec.Code != http.StatusOK || strings.Contains(body, `http-equiv="refresh"`) || cookieFrom(rec, "foyer_ticket") != nil {
		t.Errorf("page: %d, refresh %v, ticket %v", rec.Code, strings.Contains(body, `http-equiv="refresh"`), cookieFrom(rec, "foyer_ticket"))
	}
	rec = serve(h, &origin{}, get("/_waiting-room/pow-worker.js"))
	if rec.Code != http.StatusOK || !strings.HasPrefix(rec.Header().Get("Content-Type"), "text/javascript") || !strings.Contains(rec.Body.String(), "postMessage") {
		t.Errorf("worker: %d %s", rec.Code, rec.Header().Get("Content-Type"))
	}
}

// TestSpentTicketSolvesAgain: a fan whose session ended holds a spent ticket;
// coming back would make a new place, so in a room asking for a proof of
// work they solve one first. Copies of that ticket mint nothing.
func TestSpentTicketSolvesAgain(t *testing.T) {
	h := testHandler(t, Handler{Settings: waitingroom.Settings{Challenge: waitingroom.Challenge{PoWBits: 8}}}, nil)
	st, _ := h.room.NewChallenge(netip.MustParseAddr("192.0.2.1"))
	vis, err := h.room.JoinWithAnswer(context.Background(), netip.MustParseAddr("192.0.2.1"), st.Challenge.Seed, contractFind(t, st.Challenge.Seed, func(z int) bool { return z >= 8 }))
	if err != nil || vis.Pass == "" {
		t.Fatalf("first join: %+v %v", vis.Status, err)
	}
	// The origin ends the session. Both the fan's ticket (claimed) and a
	// copy taken before the claim are spent.
	unclaimed := &http.Cookie{Name: "foyer_ticket", Value: h.room.SealTicket(vis.Ticket)}
	vis.Ticket.Claimed = true
	ticket := &http.Cookie{Name: "foyer_ticket", Value: h.room.SealTicket(vis.Ticket)}
	if err := h.room.Revoke(context.Background(), vis.Admission); err != nil {
		t.Fatal(err)
	}
	for _, ck := range []*http.Cookie{ticket, unclaimed, ticket, unclaimed} {
		req := get("/events/1", ck)
		req.Header.Set("Accept", "application/json")
		rec := serve(h, &origin{}, req)
		var got waitingroom.Status
		if err := json.Unmarshal(rec.Body.Bytes(), &got); err != nil || got.State != waitingroom.StateChallenge {
			t.Fatalf("spent ticket: %d %s, want a challenge", rec.Code, rec.Body)
		}
	}
	if n := h.room.Stats().Joins.Load(); n != 1 {
		t.Fatalf("%d places, want the first only", n)
	}
	// Their answer, sent with the spent ticket, makes their new place.
	st, _ = h.room.NewChallenge(netip.MustParseAddr("192.0.2.1"))
	body := answerBody(st.Challenge.Seed, contractFind(t, st.Challenge.Seed, func(z int) bool { return z >= 8 }))
	req := httptest.NewRequest(http.MethodPost, "http://example.test/_waiting-room/join", strings.NewReader(body))
	req.RemoteAddr = "192.0.2.1:4000"
	req.AddCookie(ticket)
	rec := serve(h, &origin{}, req)
	var got waitingroom.Status
	if err := json.Unmarshal(rec.Body.Bytes(), &got); err != nil || rec.Code != http.StatusOK || got.State != waitingroom.StateQueued || cookieFrom(rec, "foyer_ticket") == nil {
		t.Fatalf("answer with a spent ticket: %d %s, want a new place in line", rec.Code, rec.Body)
	}
	if n := h.room.Stats().Joins.Load(); n != 2 {
		t.Fatalf("%d places, want 2", n)
	}
}
