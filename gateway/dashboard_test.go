package gateway

import (
	"bufio"
	"context"
	"encoding/csv"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/caddyserver/caddy/v2/caddyconfig/caddyfile"

	"github.com/foyer-dev/foyer/waitingroom"
	"github.com/foyer-dev/foyer/waitingroom/memstore"
)

// countingStore counts every call a room makes to its store.
type countingStore struct {
	waitingroom.Store
	calls atomic.Int64
}

func (c *countingStore) Init(ctx context.Context, room string, seed waitingroom.Recall) error {
	c.calls.Add(1)
	return c.Store.Init(ctx, room, seed)
}

func (c *countingStore) Join(ctx context.Context, room, visitor string, now time.Time, lim waitingroom.Limits) (waitingroom.JoinResult, error) {
	c.calls.Add(1)
	return c.Store.Join(ctx, room, visitor, now, lim)
}

func (c *countingStore) JoinMany(ctx context.Context, room string, visitors []waitingroom.Joiner, now time.Time, lim waitingroom.Limits) ([]waitingroom.JoinResult, error) {
	c.calls.Add(1)
	return c.Store.JoinMany(ctx, room, visitors, now, lim)
}

func (c *countingStore) Claim(ctx context.Context, room, visitor string, place uint64, now time.Time, lim waitingroom.Limits) (waitingroom.ClaimResult, error) {
	c.calls.Add(1)
	return c.Store.Claim(ctx, room, visitor, place, now, lim)
}

func (c *countingStore) Release(ctx context.Context, room, visitor, passID string, passExpiry, now time.Time, lim waitingroom.Limits) error {
	c.calls.Add(1)
	return c.Store.Release(ctx, room, visitor, passID, passExpiry, now, lim)
}

func (c *countingStore) Advance(ctx context.Context, room string, now time.Time, lim waitingroom.Limits) error {
	c.calls.Add(1)
	return c.Store.Advance(ctx, room, now, lim)
}

func (c *countingStore) Snapshot(ctx context.Context, room string, now time.Time, after int64) (waitingroom.Snapshot, error) {
	c.calls.Add(1)
	return c.Store.Snapshot(ctx, room, now, after)
}

func (c *countingStore) DrawSeed(ctx context.Context, room string, candidate []byte, now time.Time) ([]byte, time.Time, error) {
	c.calls.Add(1)
	return c.Store.DrawSeed(ctx, room, candidate, now)
}

func (c *countingStore) CommitLanes(ctx context.Context, room, phase, commitment string, now time.Time) (time.Time, error) {
	c.calls.Add(1)
	return c.Store.CommitLanes(ctx, room, phase, commitment, now)
}

func (c *countingStore) Overrides(ctx context.Context, room string) ([]byte, int64, error) {
	c.calls.Add(1)
	return c.Store.Overrides(ctx, room)
}

func (c *countingStore) SaveOverrides(ctx context.Context, room string, data []byte, expect int64) (int64, error) {
	c.calls.Add(1)
	return c.Store.SaveOverrides(ctx, room, data, expect)
}

// testDashboard is a dashboard over the given rooms with its own sampler, on
// the gateway's clock; nothing samples unless the test says so.
func testDashboard(rooms ...*waitingroom.Room) *Dashboard {
	src := roomSource(func() []liveRoom { return groupRooms(rooms) })
	return &Dashboard{node: "node-1", rooms: src, sampler: newSampler(src, now)}
}

func dashGet(d *Dashboard, target string) *httptest.ResponseRecorder {
	rec := httptest.NewRecorder()
	if err := d.ServeHTTP(rec, httptest.NewRequest(http.MethodGet, "http://example.test"+target, nil), nil); err != nil {
		rec.Code = 500
		rec.Body.WriteString(err.Error())
	}
	return rec
}

func dashJSON(t *testing.T, d *Dashboard) dashPayload {
	t.Helper()
	rec := dashGet(d, "/ops/?format=json")
	if rec.Code != http.StatusOK {
		t.Fatalf("format=json: %d %s", rec.Code, rec.Body)
	}
	var p dashPayload
	if err := json.Unmarshal(rec.Body.Bytes(), &p); err != nil {
		t.Fatal(err)
	}
	return p
}

func figure(figs []dashFigure, key string) string {
	for _, f := range figs {
		if f.Key == key {
			return f.Text
		}
	}
	return "(no " + key + ")"
}

// joinFans sends n new visitors to the room, each without a cookie.
func joinFans(t *testing.T, h *Handler, n int) {
	t.Helper()
	for range n {
		if rec := serve(h, &origin{}, get("/events/1")); rec.Code != http.StatusOK {
			t.Fatalf("join: %d %s", rec.Code, rec.Body)
		}
	}
}

// TestDashboardCostsTheStoreNothing: however many people watch, and however
// long, the dashboard answers from the node's view and its own samples; the
// store sees no call from it.
func TestDashboardCostsTheStoreNothing(t *testing.T) {
	useTestClock(t)
	store := &countingStore{Store: memstore.New()}
	h := testHandler(t, Handler{Room: "counted", Settings: waitingroom.Settings{TotalActiveUsers: 1}}, store)
	joinFans(t, h, 5)
	if err := h.room.Tick(context.Background()); err != nil {
		t.Fatal(err)
	}
	d := testDashboard(h.room)
	before := store.calls.Load()

	for range 100 {
		d.sampler.sample()
	}
	const viewers = 50
	for range viewers {
		if rec := dashGet(d, "/ops/"); rec.Code != http.StatusOK || !strings.Contains(rec.Body.String(), "counted") {
			t.Fatalf("page: %d", rec.Code)
		}
		dashJSON(t, d)
	}
	// Viewers on the live stream, each for a few of its updates.
	streamEvery = 5 * time.Millisecond
	t.Cleanup(func() { streamEvery = fineStep })
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { _ = d.ServeHTTP(w, r, nil) }))
	defer srv.Close()
	for range 10 {
		if n := readEvents(t, srv.URL+"/ops/?format=events", 4); n != 4 {
			t.Fatalf("read %d events, want 4", n)
		}
	}
	if extra := store.calls.Load() - before; extra != 0 {
		t.Fatalf("%d viewers and 100 samples cost the store %d calls, want 0", viewers+10, extra)
	}
}

// readEvents reads n server-sent events from url and hangs up.
func readEvents(t *testing.T, url string, n int) int {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	req, _ := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	if ct := resp.Header.Get("Content-Type"); ct != "text/event-stream" {
		t.Fatalf("stream: Content-Type %q", ct)
	}
	sc := bufio.NewScanner(resp.Body)
	sc.Buffer(nil, 1<<22)
	got := 0
	for got < n && sc.Scan() {
		if line, ok := strings.CutPrefix(sc.Text(), "data: "); ok {
			var p dashPayload
			if err := json.Unmarshal([]byte(line), &p); err != nil {
				t.Fatalf("event %d: %v", got, err)
			}
			got++
		}
	}
	return got
}

// TestDashboardFigures: the figures follow the room as fans join and the
// operator pauses it, in words and in numbers, and the page shows the same
// words as the JSON.
func TestDashboardFigures(t *testing.T) {
	clock := useTestClock(t)
	h := testHandler(t, Handler{Room: "figures", Settings: waitingroom.Settings{Title: "Figures night", TotalActiveUsers: 1, NewUsersPerMinute: 60}}, nil)
	d := testDashboard(h.room)

	joinFans(t, h, 4) // one let in at once, three wait
	clock.Advance(time.Second)
	if err := h.room.Tick(context.Background()); err != nil {
		t.Fatal(err)
	}
	p := dashJSON(t, d)
	if len(p.Rooms) != 1 || p.Node != "node-1" {
		t.Fatalf("payload: %+v", p)
	}
	r := p.Rooms[0]
	if r.Values.Waiting != 3 || figure(r.Figures, "waiting") != "3" {
		t.Fatalf("waiting %d / %q, want 3", r.Values.Waiting, figure(r.Figures, "waiting"))
	}
	if got := figure(r.Figures, "active"); got != "1 of 1" {
		t.Fatalf("active %q, want 1 of 1", got)
	}
	if got := figure(r.NodeFig, "joins"); got != "4" {
		t.Fatalf("joins %q, want 4", got)
	}
	if got := figure(r.Figures, "state"); got != "admitting" {
		t.Fatalf("state %q", got)
	}
	if got := figure(r.Figures, "store"); !strings.HasPrefix(got, "reachable") {
		t.Fatalf("store %q", got)
	}
	page := dashGet(d, "/ops/").Body.String()
	for _, f := range append(r.Figures, r.NodeFig...) {
		if f.Key == "store" {
			continue // says how old the view is, which moves
		}
		if !strings.Contains(page, `data-key="`+f.Key+`">`+f.Text+`<`) {
			t.Errorf("the page does not show %s as %q", f.Key, f.Text)
		}
	}
	if !strings.Contains(page, "Figures night") {
		t.Error("the page does not show the room's title")
	}

	if _, err := h.room.Patch(context.Background(), waitingroom.OverridesOf(waitingroom.Settings{Paused: true}, "paused")); err != nil {
		t.Fatal(err)
	}
	r = dashJSON(t, d).Rooms[0]
	if r.Values.State != "paused" || figure(r.Figures, "state") != "paused" || figure(r.Figures, "eta") != "not moving" {
		t.Fatalf("paused room shows state %q (%q), eta %q", r.Values.State, figure(r.Figures, "state"), figure(r.Figures, "eta"))
	}
}

// TestDashboardHistory: the node samples each room every second into a ring
// of five minutes and one of an hour in ten-second steps; the history is the
// hour, the last five minutes of it second by second, and rates are measured
// between samples.
func TestDashboardHistory(t *testing.T) {
	clock := useTestClock(t)
	h := testHandler(t, Handler{Room: "history", Settings: waitingroom.Settings{TotalActiveUsers: 1}}, nil)
	d := testDashboard(h.room)
	const secs = 2 * 3600
	for i := range secs {
		if i >= secs-600 {
			joinFans(t, h, 2) // two joins a second over the last ten minutes
		}
		clock.Advance(time.Second)
		d.sampler.sample()
	}
	hist := d.sampler.historyOf("history", 0)
	wantLen := (3600-pageFine)/coarseEvery + pageFine
	if len(hist) < wantLen-1 || len(hist) > wantLen+1 {
		t.Fatalf("%d samples of history, want about %d", len(hist), wantLen)
	}
	end := now().UnixMilli()
	if first := hist[0].T; end-first > 3600*1000 || end-first < 3590*1000 {
		t.Fatalf("history starts %d s before the end, want an hour", (end-first)/1000)
	}
	for i := 1; i < len(hist); i++ {
		step := hist[i].T - hist[i-1].T
		fine, seam := i > len(hist)-pageFine, i == len(hist)-pageFine
		if seam && (step <= 0 || step > 10000) || fine && step != 1000 || !fine && !seam && step != 10000 {
			t.Fatalf("sample %d is %d ms after the one before (fine: %v)", i, step, fine)
		}
	}
	last := hist[len(hist)-1]
	if last.Joins != 2 {
		t.Fatalf("joins per second %v, want 2", last.Joins)
	}
	if got := d.sampler.historyOf("history", last.T-3000); len(got) != 3 {
		t.Fatalf("%d samples after the third to last, want 3", len(got))
	}
	// The whole sale, as CSV: the first hour in minutes, the second in
	// seconds, the joins of the last ten minutes in both.
	rec := httptest.NewRecorder()
	if err := d.ServeHTTP(rec, httptest.NewRequest(http.MethodGet, "/ops/?format=csv", nil), nil); err != nil || rec.Code != http.StatusOK {
		t.Fatalf("csv: %d %v %s", rec.Code, err, rec.Body)
	}
	if ct, cd := rec.Header().Get("Content-Type"), rec.Header().Get("Content-Disposition"); ct != "text/csv; charset=utf-8" || !strings.HasPrefix(cd, `attachment; filename="history-`) {
		t.Fatalf("csv headers %q %q", ct, cd)
	}
	rows, err := csv.NewReader(rec.Body).ReadAll()
	if err != nil {
		t.Fatal(err)
	}
	if len(rows) < 1+59+3600 || len(rows) > 1+60+3600 || rows[0][0] != "time" {
		t.Fatalf("%d csv rows, want a header, the first hour's minutes and the second's seconds", len(rows))
	}
	spans := map[string]int{}
	var covered int
	for _, row := range rows[1:] {
		spans[row[1]]++
		n, _ := strconv.Atoi(row[1])
		covered += n
	}
	if spans["60"] < 59 || spans["1"] != 3600 || covered < secs-60 || covered > secs {
		t.Fatalf("csv spans %v covering %d s, want minutes then 3600 seconds, covering the two hours", spans, covered)
	}
	if lastRow := rows[len(rows)-1]; lastRow[8] != "2.00" || lastRow[7] != "1" {
		t.Fatalf("last csv row %v, want 2 joins a second and a healthy store", lastRow)
	}
	for _, q := range []string{"?format=csv&room=nope"} {
		rec := httptest.NewRecorder()
		_ = d.ServeHTTP(rec, httptest.NewRequest(http.MethodGet, "/ops/"+q, nil), nil)
		if rec.Code != http.StatusNotFound || !strings.Contains(rec.Body.String(), `"unknown_room"`) {
			t.Errorf("%s: %d %s, want 404 unknown_room", q, rec.Code, rec.Body)
		}
	}

	// A room that is no longer live is forgotten.
	d.sampler.rooms = func() []liveRoom { return nil }
	d.sampler.sample()
	if got := d.sampler.historyOf("history", 0); got != nil {
		t.Fatalf("a room gone still has %d samples", len(got))
	}
}

// TestDashboardBadInput: what each bad request or Caddyfile gets.
func TestDashboardBadInput(t *testing.T) {
	d := testDashboard()
	rec := httptest.NewRecorder()
	_ = d.ServeHTTP(rec, httptest.NewRequest(http.MethodPost, "/ops/", strings.NewReader("{}")), nil)
	if rec.Code != http.StatusMethodNotAllowed || rec.Header().Get("Allow") != "GET" || !strings.Contains(rec.Body.String(), `"method_not_allowed"`) {
		t.Errorf("POST: %d Allow=%q %s", rec.Code, rec.Header().Get("Allow"), rec.Body)
	}
	rec = dashGet(d, "/ops/?format=xml")
	if rec.Code != http.StatusBadRequest || !strings.Contains(rec.Body.String(), `"unknown_format"`) {
		t.Errorf("format=xml: %d %s", rec.Code, rec.Body)
	}
	rec = dashGet(d, "/ops/")
	if rec.Code != http.StatusOK || !strings.Contains(rec.Body.String(), "No waiting room runs on this node") {
		t.Errorf("no rooms: %d %s", rec.Code, rec.Body)
	}
	if csp := rec.Header().Get("Content-Security-Policy"); !strings.Contains(csp, "default-src 'none'") {
		t.Errorf("CSP %q", csp)
	}

	for _, tc := range []struct{ input, err string }{
		{"waiting_room_dashboard", ""},
		{"waiting_room_dashboard extra", "wrong argument count"},
		{"waiting_room_dashboard {\n\trooms a\n}", "takes no settings"},
	} {
		var d Dashboard
		err := d.UnmarshalCaddyfile(caddyfile.NewTestDispenser(tc.input))
		switch {
		case tc.err == "" && err != nil:
			t.Errorf("%q: %v", tc.input, err)
		case tc.err != "" && (err == nil || !strings.Contains(err.Error(), tc.err)):
			t.Errorf("%q: error %v, want %q", tc.input, err, tc.err)
		}
	}
}

// TestDashboardEmptyLine: a line nobody is in has no last in line, and the
// dashboard says so rather than show that nobody's wait is 0 s.
func TestDashboardEmptyLine(t *testing.T) {
	clock := useTestClock(t)
	h := testHandler(t, Handler{Room: "empty", Settings: waitingroom.Settings{NewUsersPerMinute: 60}}, nil)
	d := testDashboard(h.room)
	clock.Advance(time.Second)
	if err := h.room.Tick(context.Background()); err != nil {
		t.Fatal(err)
	}
	if got := figure(dashJSON(t, d).Rooms[0].Figures, "eta"); got != "nobody is waiting" {
		t.Errorf("the last in line's wait of an empty line reads %q, want nobody is waiting", got)
	}
}
