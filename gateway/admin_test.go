package gateway

import (
	"bytes"
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"go.uber.org/zap"

	"github.com/foyer-dev/foyer/internal/clock"
	"github.com/foyer-dev/foyer/waitingroom"
	"github.com/foyer-dev/foyer/waitingroom/memstore"
	"github.com/foyer-dev/foyer/waitingroom/storetest"
)

// adminEnv is a process's rooms on a shared store, with their clock, and the
// admin API answering for some of them.
type adminEnv struct {
	t     *testing.T
	clock *testClock
	store waitingroom.Store
	key   *waitingroom.SigningKey
}

func newAdminEnv(t *testing.T, store waitingroom.Store) *adminEnv {
	t.Helper()
	if store == nil {
		store = memstore.New()
	}
	key, err := waitingroom.GenerateSigningKey()
	if err != nil {
		t.Fatal(err)
	}
	return &adminEnv{t: t, clock: &testClock{clock.NewManual(time.Date(2026, 6, 1, 10, 0, 0, 0, time.UTC))}, store: store, key: key}
}

// node starts one node's handle on a room.
func (e *adminEnv) node(id string, s waitingroom.Settings) *waitingroom.Room {
	e.t.Helper()
	r, err := waitingroom.NewRoom(waitingroom.Config{ID: id, Settings: s, Store: e.store, Key: e.key, Now: e.clock.Now})
	if err != nil {
		e.t.Fatal(err)
	}
	if err := r.Start(context.Background()); err != nil {
		e.t.Fatal(err)
	}
	return r
}

// step moves time on by whole seconds, ticking the rooms each second.
func (e *adminEnv) step(seconds int, rooms ...*waitingroom.Room) {
	e.t.Helper()
	for range seconds {
		e.clock.Advance(time.Second)
		for _, r := range rooms {
			if err := r.Tick(context.Background()); err != nil {
				e.t.Fatalf("tick: %v", err)
			}
		}
	}
}

func (e *adminEnv) join(r *waitingroom.Room, n int) {
	e.t.Helper()
	for range n {
		if _, err := r.Join(context.Background()); err != nil {
			e.t.Fatal(err)
		}
	}
}

// adminFor is the admin API of a process serving these rooms.
func adminFor(rooms ...*waitingroom.Room) *AdminAPI {
	return &AdminAPI{rooms: func() []liveRoom { return groupRooms(rooms) }, logger: zap.NewNop()}
}

func call(t *testing.T, a *AdminAPI, method, path, body string) *httptest.ResponseRecorder {
	t.Helper()
	rec := httptest.NewRecorder()
	req := httptest.NewRequest(method, "http://localhost:2019"+path, strings.NewReader(body))
	if err := a.serve(rec, req); err != nil {
		t.Fatalf("%s %s: handler error %v", method, path, err)
	}
	return rec
}

func decodeView(t *testing.T, rec *httptest.ResponseRecorder) roomView {
	t.Helper()
	if rec.Code != http.StatusOK {
		t.Fatalf("got %d %s, want 200", rec.Code, rec.Body)
	}
	var v roomView
	if err := json.Unmarshal(rec.Body.Bytes(), &v); err != nil {
		t.Fatalf("body %s: %v", rec.Body, err)
	}
	return v
}

func decodeAPIError(t *testing.T, rec *httptest.ResponseRecorder) apiError {
	t.Helper()
	if ct := rec.Header().Get("Content-Type"); ct != "application/json" {
		t.Fatalf("error answered as %q: %s", ct, rec.Body)
	}
	var e apiError
	if err := json.Unmarshal(rec.Body.Bytes(), &e); err != nil || e.Error == "" || e.Message == "" {
		t.Fatalf("error body %s is not {\"error\", \"message\"}", rec.Body)
	}
	return e
}

func TestAdminShowsARoom(t *testing.T) {
	e := newAdminEnv(t, nil)
	r := e.node("concert", waitingroom.Settings{Title: "Big Night", NewUsersPerMinute: 60, TotalActiveUsers: 2, EventEnd: time.Date(2026, 6, 1, 22, 0, 0, 0, time.UTC)})
	e.join(r, 10) // the first walks in, nine wait
	e.step(1, r)  // the second is admitted and has yet to claim
	a := adminFor(r)

	rec := call(t, a, http.MethodGet, "/waiting-room/concert", "")
	v := decodeView(t, rec)
	if v.Room != "concert" || v.Phase != "live" || !v.Admitting || !v.StoreHealthy {
		t.Errorf("room, phase, admitting, healthy = %q %q %v %v", v.Room, v.Phase, v.Admitting, v.StoreHealthy)
	}
	// The settings as the API writes them: the configuration's notation, in
	// the settings table's order, empty text and times left out.
	var wire struct{ Settings json.RawMessage }
	var got bytes.Buffer
	if err := json.Unmarshal(rec.Body.Bytes(), &wire); err != nil || json.Compact(&got, wire.Settings) != nil {
		t.Fatalf("body %s: %v", rec.Body, err)
	}
	const want = `{"title":"Big Night","new_users_per_minute":60,"total_active_users":2,"session_duration":"10m",` +
		`"queueing_method":"fifo","queue_all":false,"event_end":"2026-06-01T22:00:00Z","shuffle_at_event_start":false,` +
		`"admission_grace":"30s","return_window":"2m","waiting_idle_timeout":"2m","session_idle_timeout":"0s","ticket_lifetime":"12h","join_limit":"off","challenge":"off","requeue_on_origin_error":0,"codes_required":false,"lanes":"off","waitlist":false,"paused":false,"sold_out":false}`
	if got.String() != want {
		t.Errorf("settings\n got %s\nwant %s", got.String(), want)
	}
	if c := v.Counters; c.Seq != 10 || c.Serving != 2 || c.Admitted != 2 || c.Claimed != 1 || v.Active != 1 || v.Pending != 1 {
		t.Errorf("counters %+v, active %d, pending %d; want 10 keys, 2 admitted, 1 claimed and active, 1 pending", c, v.Active, v.Pending)
	}
	if v.Waiting != 8 {
		t.Errorf("waiting %d, want 8", v.Waiting)
	}
	// The line has moved for a second: nothing measured supports a figure,
	// whatever the settings would allow.
	if v.LastInLineETASeconds != nil {
		t.Errorf("last in line ETA %v s before any pace is measured, want null", *v.LastInLineETASeconds)
	}
	if v.Node.Joins != 10 || v.Node.DirectAdmits != 1 {
		t.Errorf("node stats %+v, want 10 joins and 1 direct admit", v.Node)
	}
	if len(v.Overrides) != 0 || v.OverridesVersion != 0 {
		t.Errorf("overrides %v v%d, want none", v.Overrides, v.OverridesVersion)
	}
	if v.ServingRatePerMinute != nil {
		t.Errorf("serving rate %v after one second, want null until measured", *v.ServingRatePerMinute)
	}
}

func TestAdminListsLiveRoomsOnce(t *testing.T) {
	e := newAdminEnv(t, nil)
	b := e.node("b-room", waitingroom.Settings{})
	a1 := e.node("a-room", waitingroom.Settings{})
	// A reload that changed a-room's settings: two handles, one room.
	a2 := e.node("a-room", waitingroom.Settings{Title: "renamed"})
	e.join(a1, 3)
	e.join(a2, 2)
	e.step(1, a1, a2, b)

	rec := call(t, adminFor(b, a1, a2), http.MethodGet, "/waiting-room/", "")
	var list roomList
	if err := json.Unmarshal(rec.Body.Bytes(), &list); err != nil || rec.Code != http.StatusOK {
		t.Fatalf("%d %s: %v", rec.Code, rec.Body, err)
	}
	if len(list.Rooms) != 2 || list.Rooms[0].Room != "a-room" || list.Rooms[1].Room != "b-room" {
		t.Fatalf("rooms %+v, want a-room then b-room, once each", list.Rooms)
	}
	if got := list.Rooms[0]; got.Counters.Seq != 5 || got.Node.Joins != 5 {
		t.Errorf("a-room: seq %d, node joins %d; want the shared store's 5 and both handles' 5", got.Counters.Seq, got.Node.Joins)
	}

	rec = call(t, adminFor(), http.MethodGet, "/waiting-room/", "")
	if rec.Code != http.StatusOK || strings.TrimSpace(rec.Body.String()) != `{"rooms":[]}` {
		t.Errorf("no rooms: %d %s, want an empty list", rec.Code, rec.Body)
	}
}

// TestAdminPatchBadBodies: every body the API cannot apply as a whole is
// refused with 400 and a JSON error naming what is wrong, and changes nothing.
func TestAdminPatchBadBodies(t *testing.T) {
	cases := []struct {
		name, body, code, mention string
	}{
		{"empty", "", "empty_body", "empty"},
		{"blank", " \n\t", "empty_body", "empty"},
		{"cut short", `{"paused": `, "malformed_json", "malformed"},
		{"bad literal", `{"paused": tru}`, "malformed_json", "malformed"},
		{"trailing comma", `{"paused": true,}`, "malformed_json", "malformed"},
		{"trailing data", `{"paused": true} {}`, "malformed_json", "after the object"},
		{"array", `[{"paused": true}]`, "invalid_body", "JSON object"},
		{"string", `"paused"`, "invalid_body", "JSON object"},
		{"null body", `null`, "invalid_body", "JSON object"},
		{"no settings", `{}`, "no_settings", "new_users_per_minute"},
		{"unknown setting", `{"pasued": true}`, "unknown_setting", "pasued"},
		{"config-only setting", `{"admission_grace": "10s"}`, "unknown_setting", "admission_grace"},
		{"good then unknown", `{"paused": true, "rate": 5}`, "unknown_setting", "rate"},
		{"duplicate", `{"paused": true, "paused": false}`, "invalid_body", "paused: given twice"},
		{"number as string", `{"new_users_per_minute": "600"}`, "invalid_setting", "new_users_per_minute: must be a whole number"},
		{"fraction", `{"total_active_users": 1.5}`, "invalid_setting", "total_active_users: must be a whole number"},
		{"huge number", `{"total_active_users": 1e40}`, "invalid_setting", "total_active_users"},
		{"bool as string", `{"paused": "yes"}`, "invalid_setting", "paused: must be true or false"},
		{"title as number", `{"title": 5}`, "invalid_setting", "title: must be a string"},
		{"null value", `{"sold_out": null}`, "invalid_setting", "sold_out"},
		{"duration as number", `{"session_duration": 600}`, "invalid_setting", "session_duration"},
		{"bad duration", `{"session_duration": "ten minutes"}`, "invalid_setting", "session_duration"},
		{"bad time", `{"event_start": "tomorrow"}`, "invalid_setting", "event_start"},
		{"unknown method", `{"queueing_method": "lottery"}`, "invalid_setting", "must be fifo, random, passthrough or reject"},
		{"unknown method", `{"queueing_method": "lifo"}`, "invalid_setting", "queueing_method"},
		{"rate zero", `{"new_users_per_minute": 0}`, "invalid_setting", "new_users_per_minute"},
		{"negative cap", `{"paused": true, "total_active_users": -1}`, "invalid_setting", "total_active_users"},
		{"short session", `{"session_duration": "10s"}`, "invalid_setting", "session_duration"},
		{"end before start", `{"event_start": "2026-06-02T10:00:00Z", "event_end": "2026-06-02T09:00:00Z"}`, "invalid_setting", "event_end"},
		{"pre-queue without start", `{"prequeue_start": "2026-06-02T10:00:00Z"}`, "invalid_setting", "prequeue_start"},
		{"long title", `{"title": "` + strings.Repeat("x", 201) + `"}`, "invalid_setting", "title"},
		{"join limit as number", `{"join_limit": 20}`, "invalid_setting", `join_limit: must be a string such as "20/m burst 40"`},
		{"join limit in words", `{"join_limit": "20 a minute"}`, "invalid_setting", "join_limit"},
		{"join limit null", `{"join_limit": null}`, "invalid_setting", "join_limit"},
		{"join limit too high", `{"join_limit": "2000000/m"}`, "invalid_setting", "join_limit"},
		{"join limit, period too long", `{"join_limit": "1/48h"}`, "invalid_setting", "join_limit"},
		{"lanes as number", `{"lanes": 3}`, "invalid_setting", "lanes: must be a string"},
		{"lane without weight", `{"lanes": "presale"}`, "invalid_setting", `lanes: "presale" is not <lane>=<weight>`},
		{"no lane of weight", `{"lanes": "presale=0 general=0"}`, "invalid_setting", "lanes: at least one lane needs a weight above 0"},
		{"lanes with a draw", `{"lanes": "presale=3", "queueing_method": "random"}`, "invalid_setting", "lanes: needs queueing_method fifo"},
		{"duration in words", `{"session_duration": "ten minutes"}`, "invalid_setting", `session_duration: "ten minutes" is not a duration such as "10m"`},
		{"days not a number", `{"session_duration": "xd5m"}`, "invalid_setting", `session_duration: "xd5m" is not a duration`},
		{"time as number", `{"event_start": 5}`, "invalid_setting", "event_start: must be a string"},
		{"time in words", `{"event_start": "tomorrow"}`, "invalid_setting", `event_start: "tomorrow" is not an RFC 3339 time`},
		{"method as number", `{"queueing_method": 1}`, "invalid_setting", "queueing_method: must be a string"},
		{"challenge as number", `{"challenge": 18}`, "invalid_setting", "challenge: must be a string"},
		{"challenge too hard", `{"challenge": "pow 40"}`, "invalid_setting", "challenge: pow takes 8 to 28 bits"},
		{"title with a tab", `{"title": "a\tb"}`, "invalid_setting", "title: must be one line"},
		{"flag as number", `{"queue_all": 1}`, "invalid_setting", "queue_all: must be true or false"},
		{"oversized", `{"title": "` + strings.Repeat("x", maxPatchBody) + `"}`, "body_too_large", "KiB"},
	}
	e := newAdminEnv(t, nil)
	r := e.node("concert", waitingroom.Settings{})
	a := adminFor(r)
	before := r.Info()
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			rec := call(t, a, http.MethodPatch, "/waiting-room/concert", tc.body)
			if rec.Code != http.StatusBadRequest {
				t.Fatalf("got %d %s, want 400", rec.Code, rec.Body)
			}
			got := decodeAPIError(t, rec)
			if got.Error != tc.code || !strings.Contains(got.Message, tc.mention) {
				t.Errorf("got %+v, want error %q mentioning %q", got, tc.code, tc.mention)
			}
			data, version, err := e.store.Overrides(context.Background(), "concert")
			if err != nil || version != 0 || len(data) != 0 {
				t.Errorf("the store's overrides changed: %s v%d %v", data, version, err)
			}
			if after := r.Info(); after.Settings != before.Settings || after.Version != 0 {
				t.Errorf("the room's settings changed:\n%+v\n%+v", before.Settings, after.Settings)
			}
		})
	}
}

// TestAdminPatchReachesEveryNode: a change made through node A's admin API is
// in force on node B, which shares A's store, after B's next refresh.
func TestAdminPatchReachesEveryNode(t *testing.T) {
	e := newAdminEnv(t, nil)
	nodeA := e.node("concert", waitingroom.Settings{NewUsersPerMinute: 60, TotalActiveUsers: 100})
	nodeB := e.node("concert", waitingroom.Settings{NewUsersPerMinute: 60, TotalActiveUsers: 100})
	e.join(nodeB, 1) // the first walks in and the rate budget is spent
	e.step(1, nodeA, nodeB)

	rec := call(t, adminFor(nodeA), http.MethodPatch, "/waiting-room/concert",
		`{"new_users_per_minute": 600, "paused": true, "title": "Encore", "session_duration": "15m", "event_end": "2026-06-01T23:00:00Z"}`)
	v := decodeView(t, rec)
	if s := v.Settings; s.NewUsersPerMinute != 600 || !s.Paused || s.Title != "Encore" || s.SessionDuration != 15*time.Minute || rfc3339(s.EventEnd) != "2026-06-01T23:00:00Z" {
		t.Errorf("answered settings %+v, want the change", s)
	}
	if v.OverridesVersion != 1 || v.Overrides["new_users_per_minute"] != float64(600) || v.Overrides["session_duration"] != "15m" {
		t.Errorf("answered overrides %v v%d, want version 1 with the change", v.Overrides, v.OverridesVersion)
	}
	if v.Admitting || v.LastInLineETASeconds != nil {
		t.Errorf("a paused room: admitting %v, ETA %v; want neither", v.Admitting, v.LastInLineETASeconds)
	}

	if s := nodeB.Settings(); s.Paused || s.NewUsersPerMinute != 60 {
		t.Fatalf("node B changed before it refreshed: %+v", s)
	}
	e.step(1, nodeB)
	if s := nodeB.Settings(); !s.Paused || s.NewUsersPerMinute != 600 || s.Title != "Encore" || s.SessionDuration != 15*time.Minute {
		t.Fatalf("node B after one tick: %+v, want the change", s)
	}
	// What B does: a newcomer on B is told the room is paused.
	vis, err := nodeB.Join(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if vis.Status.State != waitingroom.StatePaused {
		t.Errorf("newcomer on node B: %s, want paused", vis.Status.State)
	}

	// Resuming through B's own admin API lets the room admit again. The first
	// node to step in a second makes the advance; A may still be paused then,
	// so the room moves within two seconds, not one.
	decodeView(t, call(t, adminFor(nodeB), http.MethodPost, "/waiting-room/concert/resume", ""))
	before := nodeB.Snapshot().Serving
	e.step(2, nodeA, nodeB)
	if got := nodeB.Snapshot().Serving; got != before+1 {
		t.Errorf("serving %d after a resumed second, want %d", got, before+1)
	}
	if got := nodeA.Info().Overrides; !got.Has("paused") || got.Values().Paused || got.Values().NewUsersPerMinute != 600 {
		t.Errorf("node A's overrides %+v, want paused false and the rate kept", got)
	}
}

func TestAdminActions(t *testing.T) {
	e := newAdminEnv(t, nil)
	r := e.node("concert", waitingroom.Settings{})
	a := adminFor(r)
	steps := []struct {
		action          string
		paused, soldOut bool
	}{
		{"pause", true, false},
		{"sold-out", true, true},
		{"resume", false, true},
		{"reopen", false, false},
	}
	for i, st := range steps {
		v := decodeView(t, call(t, a, http.MethodPost, "/waiting-room/concert/"+st.action, ""))
		if v.Settings.Paused != st.paused || v.Settings.SoldOut != st.soldOut || v.OverridesVersion != int64(i+1) {
			t.Errorf("after %s: paused %v, sold out %v, version %d", st.action, v.Settings.Paused, v.Settings.SoldOut, v.OverridesVersion)
		}
		if s := r.Settings(); s.Paused != st.paused || s.SoldOut != st.soldOut {
			t.Errorf("after %s the room has paused %v, sold out %v", st.action, s.Paused, s.SoldOut)
		}
	}
}

func TestAdminRoutingErrors(t *testing.T) {
	e := newAdminEnv(t, nil)
	a := adminFor(e.node("concert", waitingroom.Settings{}))
	cases := []struct {
		method, path string
		status       int
		code, allow  string
	}{
		{http.MethodGet, "/waiting-room/nope", http.StatusNotFound, "unknown_room", ""},
		{http.MethodPatch, "/waiting-room/nope", http.StatusNotFound, "unknown_room", ""},
		{http.MethodPost, "/waiting-room/nope/pause", http.StatusNotFound, "unknown_room", ""},
		{http.MethodGet, "/waiting-room/bad%20id", http.StatusNotFound, "unknown_room", ""},
		{http.MethodPost, "/waiting-room/concert/explode", http.StatusNotFound, "not_found", ""},
		{http.MethodGet, "/waiting-room/concert/pause/now", http.StatusNotFound, "not_found", ""},
		{http.MethodGet, "/waiting-room/concert/pause", http.StatusMethodNotAllowed, "method_not_allowed", "POST"},
		{http.MethodDelete, "/waiting-room/concert", http.StatusMethodNotAllowed, "method_not_allowed", "GET, PATCH"},
		{http.MethodPost, "/waiting-room/concert", http.StatusMethodNotAllowed, "method_not_allowed", "GET, PATCH"},
		{http.MethodPatch, "/waiting-room/", http.StatusMethodNotAllowed, "method_not_allowed", "GET"},
	}
	for _, tc := range cases {
		rec := call(t, a, tc.method, tc.path, `{"paused": true}`)
		if rec.Code != tc.status {
			t.Errorf("%s %s: %d %s, want %d", tc.method, tc.path, rec.Code, rec.Body, tc.status)
			continue
		}
		if got := decodeAPIError(t, rec); got.Error != tc.code {
			t.Errorf("%s %s: error %q, want %q", tc.method, tc.path, got.Error, tc.code)
		}
		if got := rec.Header().Get("Allow"); got != tc.allow {
			t.Errorf("%s %s: Allow %q, want %q", tc.method, tc.path, got, tc.allow)
		}
	}
	if _, v, _ := e.store.Overrides(context.Background(), "concert"); v != 0 {
		t.Errorf("a refused request changed the overrides (version %d)", v)
	}
}

func TestAdminStoreDownAnswers503AndChangesNothing(t *testing.T) {
	flaky := storetest.NewFlaky(memstore.New())
	e := newAdminEnv(t, flaky)
	r := e.node("concert", waitingroom.Settings{})
	a := adminFor(r)
	flaky.SetDown(true)
	for _, req := range []struct{ method, path, body string }{
		{http.MethodPatch, "/waiting-room/concert", `{"paused": true}`},
		{http.MethodPost, "/waiting-room/concert/sold-out", ""},
	} {
		rec := call(t, a, req.method, req.path, req.body)
		if rec.Code != http.StatusServiceUnavailable || rec.Header().Get("Retry-After") == "" {
			t.Fatalf("%s %s with the store down: %d %s, want 503 with Retry-After", req.method, req.path, rec.Code, rec.Body)
		}
		if got := decodeAPIError(t, rec); got.Error != "store_unavailable" {
			t.Errorf("error %q, want store_unavailable", got.Error)
		}
	}
	// The room is still shown, from this node's last view.
	decodeView(t, call(t, a, http.MethodGet, "/waiting-room/concert", ""))
	flaky.SetDown(false)
	e.step(1, r)
	if s := r.Settings(); s.Paused || s.SoldOut {
		t.Errorf("settings after the store came back: %+v, want unchanged", s)
	}
}

func TestAdminETAOfTheLastInLine(t *testing.T) {
	e := newAdminEnv(t, nil)
	r := e.node("concert", waitingroom.Settings{NewUsersPerMinute: 60, TotalActiveUsers: 10000, SessionDuration: time.Hour})
	e.join(r, 41) // one walks in, forty wait
	e.step(15, r) // fifteen more admitted, at the measured pace of one a second
	a := adminFor(r)
	v := decodeView(t, call(t, a, http.MethodGet, "/waiting-room/concert", ""))
	if v.Waiting != 25 || v.LastInLineETASeconds == nil || *v.LastInLineETASeconds != 25 {
		t.Fatalf("waiting %d, ETA %v; want 25 at one a second: 25 s", v.Waiting, v.LastInLineETASeconds)
	}
	if v.ServingRatePerMinute == nil || *v.ServingRatePerMinute != 60 {
		t.Errorf("measured rate %v/min, want 60", v.ServingRatePerMinute)
	}
	decodeView(t, call(t, a, http.MethodPost, "/waiting-room/concert/pause", ""))
	if v := decodeView(t, call(t, a, http.MethodGet, "/waiting-room/concert", "")); v.LastInLineETASeconds != nil {
		t.Errorf("paused room: ETA %d, want null", *v.LastInLineETASeconds)
	}
}

func TestShortDuration(t *testing.T) {
	for d, want := range map[time.Duration]string{
		10 * time.Minute:                  "10m",
		time.Hour:                         "1h",
		90 * time.Minute:                  "1h30m",
		30 * time.Second:                  "30s",
		90 * time.Second:                  "1m30s",
		12 * time.Hour:                    "12h",
		time.Hour + time.Second:           "1h0m1s",
		1500 * time.Millisecond:           "1.5s",
		24*time.Hour + 30*time.Minute + 0: "24h30m",
	} {
		if got := shortDuration(d); got != want {
			t.Errorf("shortDuration(%v) = %q, want %q", d, got, want)
		}
	}
}
