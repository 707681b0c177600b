package gateway

import (
	"context"
	"fmt"
	"net/http"
	"sync"
	"testing"
	"time"

	"github.com/caddyserver/caddy/v2"
	"github.com/caddyserver/caddy/v2/caddytest"

	"github.com/foyer-dev/foyer/internal/redistest"
)

func init() { caddy.RegisterModule(eventRecorder{}) }

// eventRecorder is an event handler module of the tests' own, as an
// operator's hook would be: it keeps every event it is given.
type eventRecorder struct{}

type recordedEvent struct {
	name, origin string
	data         map[string]any
}

var recorded struct {
	sync.Mutex
	events []recordedEvent
}

func (eventRecorder) CaddyModule() caddy.ModuleInfo {
	return caddy.ModuleInfo{ID: "events.handlers.foyer_test_recorder", New: func() caddy.Module { return new(eventRecorder) }}
}

func (eventRecorder) Handle(_ context.Context, e caddy.Event) error {
	origin := ""
	if o := e.Origin(); o != nil {
		origin = string(o.CaddyModule().ID)
	}
	recorded.Lock()
	recorded.events = append(recorded.events, recordedEvent{name: e.Name(), origin: origin, data: e.Data})
	recorded.Unlock()
	return nil
}

// awaitEvent waits for the next event of that name for room, recorded from
// index from on, and returns it with the index after it.
func awaitEvent(t *testing.T, from int, name, room string, within time.Duration) (recordedEvent, int) {
	t.Helper()
	deadline := time.Now().Add(within)
	for {
		recorded.Lock()
		for i := from; i < len(recorded.events); i++ {
			if e := recorded.events[i]; e.name == name && e.data["room"] == room {
				recorded.Unlock()
				return e, i + 1
			}
		}
		var seen []string
		for _, e := range recorded.events[from:] {
			seen = append(seen, e.name)
		}
		recorded.Unlock()
		if time.Now().After(deadline) {
			t.Fatalf("no %s for %s within %v; since then: %v", name, room, within, seen)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// TestCaddyEventsReachAHandler: a real Caddy whose events app subscribes a
// handler module to everything the waiting_room module emits. An admin's
// pause, resume, queue_all, sold out and reopen each reach it as an event
// with the room's id, and so do the store going away (Redis killed), coming
// back empty, and the room re-seeded into it; a second room's pre-queue,
// start and end reach it in order, and its phase's switches on and off.
func TestCaddyEventsReachAHandler(t *testing.T) {
	if testing.Short() {
		t.Skip("starts Caddy and redis-server")
	}
	srv := redistest.StartServer(t, nil)
	// A second room runs through its schedule meanwhile, in real time: its
	// pre-queue opens seconds after the config loads, with room for a slow
	// load on a busy machine (a room that starts mid-pre-queue announces no
	// opening).
	t0 := time.Now().Truncate(time.Second)
	at := func(s int) string { return t0.Add(time.Duration(s) * time.Second).UTC().Format(time.RFC3339) }
	recorded.Lock()
	recorded.events = nil
	recorded.Unlock()
	config := fmt.Sprintf(`{
		"admin": {"listen": %q},
		"storage": {"module": "file_system", "root": %q},
		"apps": {
			"events": {"subscriptions": [{
				"modules": ["http.handlers.waiting_room"],
				"handlers": [{"handler": "foyer_test_recorder"}]
			}]},
			"http": {
				"http_port": %d,
				"grace_period": 1,
				"servers": {"site": {
					"listen": [":%d"],
					"automatic_https": {"disable": true},
					"routes": [{
						"match": [{"host": ["localhost"]}],
						"handle": [
							{"handler": "waiting_room", "room": "evented", "store": {"backend": "redis", "url": "redis://%s"}},
							{"handler": "static_response", "body": "origin"}
						]
					}, {
						"handle": [
							{"handler": "waiting_room", "room": "scheduled", "prequeue_start": %q, "event_start": %q, "event_end": %q,
							 "phases": [{"name": "early", "prequeue_start": %q, "start": %q, "end": %q, "shuffle_at_start": true, "new_users_per_minute": 100}]},
							{"handler": "static_response", "body": "origin"}
						]
					}]
				}}
			}
		}
	}`, adminAddr, t.TempDir(), sitePort, sitePort, srv.Addr, at(5), at(8), at(12), at(9), at(10), at(11))
	tester := caddytest.NewTester(t)
	tester.InitServer(config, "json")
	t.Cleanup(func() { _ = unloadCaddy() })

	next := 0
	step := func(method, path, body, event string) {
		t.Helper()
		if code, out := adminCall(t, method, "/waiting-room/evented"+path, body); code != http.StatusOK {
			t.Fatalf("%s %s %s: %d %s", method, path, body, code, out)
		}
		var e recordedEvent
		e, next = awaitEvent(t, next, event, "evented", 10*time.Second)
		if e.origin != "http.handlers.waiting_room" {
			t.Errorf("%s came from %q, want the waiting_room module", event, e.origin)
		}
	}
	step(http.MethodPost, "/pause", "", EventPaused)
	step(http.MethodPost, "/resume", "", EventResumed)
	step(http.MethodPatch, "", `{"queue_all": true}`, EventQueueAllOn)
	step(http.MethodPatch, "", `{"queue_all": false}`, EventQueueAllOff)
	step(http.MethodPost, "/sold-out", "", EventSoldOut)
	step(http.MethodPost, "/reopen", "", EventReopened)

	// A fan is let in: on the spot, or at the room's next step, which the
	// fan's page asks again for. The budget is nothing while the room
	// admits nobody (sold out), and the loop's step that follows the
	// reopening may come just after the fan (seen under load in CI).
	fan := newFan(t)
	var body string
	for deadline := time.Now().Add(10 * time.Second); ; {
		if _, body = fan.get(base + "/"); body == "origin" || time.Now().After(deadline) {
			break
		}
		time.Sleep(250 * time.Millisecond)
	}
	if body != "origin" {
		t.Fatalf("a fan, 10 s after the reopening: %.200q, want the origin", body)
	}
	srv.Stop(t)
	_, next = awaitEvent(t, next, EventStoreLost, "evented", 15*time.Second)
	srv.Restart(t)
	back, _ := awaitEvent(t, next, EventStoreBack, "evented", 15*time.Second)
	if d, ok := back.data["down_seconds"].(float64); !ok || d <= 0 {
		t.Errorf("store back: down_seconds %v, want how long it was away", back.data["down_seconds"])
	}
	reseeded, _ := awaitEvent(t, next, EventReseeded, "evented", 15*time.Second)
	if n, ok := reseeded.data["reseeds"].(uint64); !ok || n < 1 {
		t.Errorf("reseeded: reseeds %v, want the node's count", reseeded.data["reseeds"])
	}

	// The other room's schedule, in order, and its phase starting and
	// ending (docs/configuration.md, "Phases").
	i := 0
	for _, name := range []string{EventPrequeueOpened, EventStarted, EventClosed} {
		_, i = awaitEvent(t, i, name, "scheduled", 10*time.Second)
	}
	// The phase's own pre-queue opens at the room's start and is drawn at
	// the phase's (docs/fairness.md, "A phase's draw").
	opened, k := awaitEvent(t, 0, EventPhasePrequeueOpened, "scheduled", 10*time.Second)
	if opened.data["phase"] != "early" || opened.data["draw"] != true {
		t.Errorf("phase pre-queue opened: %v", opened.data)
	}
	if drawn, _ := awaitEvent(t, k, EventPhaseDrawn, "scheduled", 10*time.Second); drawn.data["phase"] != "early" || drawn.data["draw_size"] != uint64(0) {
		t.Errorf("phase drawn: %v", drawn.data)
	}
	on, j := awaitEvent(t, 0, EventPhaseSwitched, "scheduled", 10*time.Second)
	if on.data["phase"] != "early" || on.data["previous_phase"] != "" || on.data["start"] == nil {
		t.Errorf("phase switch on: %v", on.data)
	}
	if off, _ := awaitEvent(t, j, EventPhaseSwitched, "scheduled", 10*time.Second); off.data["phase"] != "" || off.data["previous_phase"] != "early" {
		t.Errorf("phase switch off: %v", off.data)
	}
}
