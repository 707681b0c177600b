package gateway

import (
	"context"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/foyer-dev/foyer/waitingroom"
	"github.com/foyer-dev/foyer/waitingroom/memstore"
)

// The in-process costs of the gateway's hot paths; `onsale bench` measures the
// same paths through a real Caddy against its own baselines.

func BenchmarkStatusPoll(b *testing.B) {
	benchPolls(b, testHandler(&testing.T{}, Handler{Settings: waitingroom.Settings{QueueAll: true}}, nil))
}

// benchPolls measures the status polls of a fan who joined h.
func benchPolls(b *testing.B, h *Handler) {
	benchPollsOf(b, h, cookieFrom(serve(h, &origin{}, get("/")), "foyer_ticket"))
}

// benchPollsOf is benchPolls for the fan holding ticket.
func benchPollsOf(b *testing.B, h *Handler, ticket *http.Cookie) {
	req := get("/_waiting-room/status", ticket)
	req.Header.Set("Accept", "application/json")
	b.ReportAllocs()
	b.ResetTimer()
	for b.Loop() {
		rec := httptest.NewRecorder()
		_ = h.ServeHTTP(rec, req, &origin{})
		if rec.Code != http.StatusOK {
			b.Fatal(rec.Code)
		}
	}
}

func BenchmarkAdmittedRequest(b *testing.B) {
	h := testHandler(&testing.T{}, Handler{}, nil)
	pass := cookieFrom(serve(h, &origin{}, get("/")), "foyer_pass")
	req := get("/events/42", pass)
	cookie := req.Header.Get("Cookie")
	o := &origin{}
	b.ReportAllocs()
	b.ResetTimer()
	for b.Loop() {
		// The gateway trims its cookies from the request it forwards, as each
		// real request arrives afresh; put them back.
		req.Header = http.Header{"Cookie": {cookie}}
		rec := httptest.NewRecorder()
		_ = h.ServeHTTP(rec, req, o)
	}
	if o.calls == 0 || o.lastReq.Header.Get(headerPass) == "" {
		b.Fatal("the admitted request did not reach the origin with its pass")
	}
}

// BenchmarkJoin is a newcomer's first status call: no cookie, a place made,
// a ticket sealed and set, the status answered.
func BenchmarkJoin(b *testing.B) {
	benchJoins(b, testHandler(&testing.T{}, Handler{Settings: waitingroom.Settings{QueueAll: true}}, nil))
}

// benchJoins measures newcomers' first status calls to h.
func benchJoins(b *testing.B, h *Handler) { benchJoinsWith(b, h, "") }

// benchJoinsWith is benchJoins for newcomers who send an access code ("":
// none).
func benchJoinsWith(b *testing.B, h *Handler, code string) {
	req := get("/_waiting-room/status")
	req.Header.Set("Accept", "application/json")
	if code != "" {
		req.Header.Set("X-Waiting-Room-Code", code)
	}
	b.ReportAllocs()
	b.ResetTimer()
	var rec *httptest.ResponseRecorder
	for b.Loop() {
		rec = httptest.NewRecorder()
		_ = h.ServeHTTP(rec, req, &origin{})
	}
	if rec.Code != http.StatusOK || len(rec.Result().Cookies()) != 1 {
		b.Fatal(rec.Code, rec.Result().Cookies())
	}
}

// BenchmarkPagePoll is the waiting page's own poll (status?page=<lang>): the
// status with the page's words, in English and in the languages whose
// numbers and plurals differ most. Each language's words are built once, so
// the other languages should cost what English does: compare their ns/op
// with en's in the same run.
func BenchmarkPagePoll(b *testing.B) {
	h := testHandler(&testing.T{}, Handler{Settings: waitingroom.Settings{QueueAll: true}}, nil)
	for range 1500 {
		serve(h, &origin{}, get("/"))
	}
	ticket := cookieFrom(serve(h, &origin{}, get("/")), "foyer_ticket")
	for _, lang := range []string{"en", "ar", "ja", "de", "pl"} {
		b.Run(lang, func(b *testing.B) {
			req := get("/_waiting-room/status?page="+lang, ticket)
			req.Header.Set("Accept", "application/json")
			b.ReportAllocs()
			for b.Loop() {
				rec := httptest.NewRecorder()
				_ = h.ServeHTTP(rec, req, &origin{})
				if rec.Code != http.StatusOK {
					b.Fatal(rec.Code)
				}
			}
		})
	}
}

// benchLanes are the lanes of the lanes variants: a poll or a join in a
// room with them costs what it does without (docs/line.md, "Priority
// lanes"), and a poll still costs the store nothing.
func benchLanes(b *testing.B) waitingroom.Lanes { return mustLanes(b, "presale=3 members=2 general=1") }

// benchLaneHandler is a handler of a room with three lanes, and a presale
// code of many uses: a newcomer who sends it joins the presale lane.
func benchLaneHandler(b *testing.B, store waitingroom.Store) *Handler {
	h := testHandler(&testing.T{}, Handler{Settings: waitingroom.Settings{QueueAll: true, Lanes: benchLanes(b)}}, store)
	code := []waitingroom.NewCode{{Code: benchLaneCode, Lane: "presale", MaxUses: waitingroom.MaxCodeUses}}
	if _, err := h.room.AddCodes(context.Background(), code, 1); err != nil {
		b.Fatal(err)
	}
	return h
}

const benchLaneCode = "PRESALE-BENCH"

// BenchmarkStatusPollLanes is BenchmarkStatusPoll for a fan of the presale
// lane, in a room with three lanes: the place in the ticket says the lane,
// and the view has every lane's counters.
func BenchmarkStatusPollLanes(b *testing.B) {
	store := &countingStore{Store: memstore.New()}
	benchCodePollsCostNothing(b, benchLaneHandler(b, store), store)
}

// benchCodePollsCostNothing polls, b.N times, as a newcomer who joined with
// benchLaneCode, and fails if the polls cost the store anything.
func benchCodePollsCostNothing(b *testing.B, h *Handler, store *countingStore) {
	join := get("/")
	join.Header.Set("X-Waiting-Room-Code", benchLaneCode)
	ticket := cookieFrom(serve(h, &origin{}, join), "foyer_ticket")
	calls := store.calls.Load()
	benchPollsOf(b, h, ticket)
	b.StopTimer()
	if n := store.calls.Load() - calls; n != 0 {
		b.Fatalf("%d polls cost %d store calls; want none", b.N, n)
	}
}

// BenchmarkStatusPollPhaseLanes is BenchmarkStatusPollLanes in a room whose
// running phase sets lane weights of its own (and holds the general lane
// back): the weights in force come from the view's settings, so the polls
// still cost the store nothing.
func BenchmarkStatusPollPhaseLanes(b *testing.B) {
	store := &countingStore{Store: memstore.New()}
	phase := waitingroom.ScheduledPhase{Name: "presale",
		Start: time.Date(2000, 1, 1, 0, 0, 0, 0, time.UTC), End: time.Date(2100, 1, 1, 0, 0, 0, 0, time.UTC),
		Settings: waitingroom.OverridesOf(waitingroom.Settings{Lanes: mustLanes(b, "presale=1 vip=2 general=0")}, "lanes")}
	h := testHandler(&testing.T{}, Handler{Settings: waitingroom.Settings{QueueAll: true, Lanes: benchLanes(b), Phases: waitingroom.NewPhases(phase)}}, store)
	code := []waitingroom.NewCode{{Code: benchLaneCode, Lane: "vip", MaxUses: waitingroom.MaxCodeUses}}
	if _, err := h.room.AddCodes(context.Background(), code, 1); err != nil {
		b.Fatal(err)
	}
	benchCodePollsCostNothing(b, h, store)
}

// BenchmarkStatusPollPhasePrequeue is BenchmarkStatusPoll for a fan
// registered in a phase's own pre-queue, drawn at the phase's start
// (docs/configuration.md, "Phases"): whether the key is in the pre-queue,
// and that it has no place yet, come from the node's view, so the polls
// cost the store nothing.
func BenchmarkStatusPollPhasePrequeue(b *testing.B) {
	store := &countingStore{Store: memstore.New()}
	phase := waitingroom.ScheduledPhase{Name: "general",
		PrequeueStart: time.Date(2000, 1, 1, 0, 0, 0, 0, time.UTC), ShuffleAtStart: true,
		Start: time.Date(2100, 1, 1, 0, 0, 0, 0, time.UTC), End: time.Date(2100, 1, 2, 0, 0, 0, 0, time.UTC)}
	h := testHandler(&testing.T{}, Handler{Settings: waitingroom.Settings{Phases: waitingroom.NewPhases(phase)}}, store)
	for range 1500 {
		serve(h, &origin{}, get("/"))
	}
	ticket := cookieFrom(serve(h, &origin{}, get("/")), "foyer_ticket")
	if err := h.room.Tick(context.Background()); err != nil {
		b.Fatal(err)
	}
	if body := benchStatusBody(h, ticket); !strings.Contains(body, `"state":"prequeue"`) || !strings.Contains(body, `"position":null`) ||
		!strings.Contains(body, `"opens_at":"2100-01-01T00:00:00Z"`) {
		b.Fatalf("the fan's status in the phase's pre-queue: %s; want registered, no position, until the phase's start", body)
	}
	if snap := h.room.Snapshot(); len(snap.PhaseRanges) != 1 || snap.PhaseRanges[0].Closed {
		b.Fatalf("the store's phase pre-queues: %+v, want one open", snap.PhaseRanges)
	}
	benchPollsCostNothing(b, h, store, ticket)
}

// benchStatusBody is the status JSON the ticket gets.
func benchStatusBody(h *Handler, ticket *http.Cookie) string {
	req := get("/_waiting-room/status", ticket)
	req.Header.Set("Accept", "application/json")
	rec := httptest.NewRecorder()
	_ = h.ServeHTTP(rec, req, &origin{})
	return rec.Body.String()
}

// benchPollsCostNothing times the ticket's polls and fails unless they
// made no store call.
func benchPollsCostNothing(b *testing.B, h *Handler, store *countingStore, ticket *http.Cookie) {
	calls := store.calls.Load()
	benchPollsOf(b, h, ticket)
	b.StopTimer()
	if n := store.calls.Load() - calls; n != 0 {
		b.Fatalf("%d polls cost %d store calls; want none", b.N, n)
	}
}

// BenchmarkJoinLanes is BenchmarkJoin for newcomers of the presale lane, in
// a room with three lanes: each redeems the presale code, then joins.
func BenchmarkJoinLanes(b *testing.B) {
	benchJoinsWith(b, benchLaneHandler(b, nil), benchLaneCode)
}

// BenchmarkStatusPollSupply is BenchmarkStatusPoll in a room that knows its
// supply (docs/supply.md): each poll tells the fan their outcome, and marks
// what it told for the fairness report's count; the marks go with the
// node's beats, so the polls cost the store nothing.
func BenchmarkStatusPollSupply(b *testing.B) {
	store := &countingStore{Store: memstore.New()}
	h := testHandler(&testing.T{}, Handler{Settings: waitingroom.Settings{QueueAll: true}}, store)
	for range 1500 {
		serve(h, &origin{}, get("/"))
	}
	ticket := cookieFrom(serve(h, &origin{}, get("/")), "foyer_ticket")
	h.room.NoteSupply(400)
	if err := h.room.Tick(context.Background()); err != nil {
		b.Fatal(err)
	}
	if body := benchStatusBody(h, ticket); !strings.Contains(body, `"outcome":"unlikely"`) {
		b.Fatalf("the fan's status with 400 units left for 1,500 ahead: %s; want unlikely", body)
	}
	benchPollsCostNothing(b, h, store, ticket)
}

// BenchmarkStatusPollWaitlist is BenchmarkStatusPoll for a fan on the
// waitlist of a sold-out room (docs/waitlist.md): the position comes from
// the node's view as a queued fan's does, and the polls cost the store
// nothing.
func BenchmarkStatusPollWaitlist(b *testing.B) {
	store := &countingStore{Store: memstore.New()}
	h := testHandler(&testing.T{}, Handler{Settings: waitingroom.Settings{QueueAll: true, Waitlist: true}}, store)
	for range 1500 {
		serve(h, &origin{}, get("/"))
	}
	ticket := cookieFrom(serve(h, &origin{}, get("/")), "foyer_ticket")
	if _, err := h.room.Patch(context.Background(), waitingroom.OverridesOf(waitingroom.Settings{SoldOut: true}, "sold_out")); err != nil {
		b.Fatal(err)
	}
	if body := benchStatusBody(h, ticket); !strings.Contains(body, `"state":"waitlist"`) {
		b.Fatalf("the fan's status at sold out: %s; want the waitlist", body)
	}
	benchPollsCostNothing(b, h, store, ticket)
}
