package gateway

import (
	"context"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"go.uber.org/zap"
	"go.uber.org/zap/zapcore"
	"go.uber.org/zap/zaptest/observer"

	"github.com/foyer-dev/foyer/waitingroom"
)

// watchLogs follows r with watchRoom into an observed log, until the test
// ends.
func watchLogs(t *testing.T, r *waitingroom.Room) *observer.ObservedLogs {
	t.Helper()
	core, logs := observer.New(zapcore.DebugLevel)
	logger := zap.New(core)
	ctx, cancel := context.WithCancel(context.Background())
	var wg sync.WaitGroup
	wg.Go(func() { watchRoom(ctx, r, func() *zap.Logger { return logger }, func() *eventSink { return nil }) })
	t.Cleanup(func() {
		cancel()
		wg.Wait()
	})
	return logs
}

// awaitLog waits until a line whose message starts with msg was written.
func awaitLog(t *testing.T, logs *observer.ObservedLogs, msg string) observer.LoggedEntry {
	t.Helper()
	deadline := time.Now().Add(5 * time.Second)
	for time.Now().Before(deadline) {
		for _, e := range logs.All() {
			if strings.HasPrefix(e.Message, msg) {
				return e
			}
		}
		time.Sleep(5 * time.Millisecond)
	}
	t.Fatalf("no line %q; the log has:\n%s", msg, messages(logs))
	return observer.LoggedEntry{}
}

func messages(logs *observer.ObservedLogs) string {
	var b strings.Builder
	for _, e := range logs.All() {
		b.WriteString(e.Level.String() + " " + e.Message + "\n")
	}
	return b.String()
}

// TestRoomEventsAreLogged: a room's life in the log, each event once, as it
// happens on the node: it starts, its pre-queue opens, the event starts and
// the draw is made (its seed with it), it sells out and reopens, and it
// closes.
func TestRoomEventsAreLogged(t *testing.T) {
	e := newAdminEnv(t, nil)
	t0 := e.clock.Now()
	r := e.node("logged", waitingroom.Settings{
		NewUsersPerMinute: 600, TotalActiveUsers: 100,
		PrequeueStart: t0.Add(30 * time.Second), EventStart: t0.Add(time.Minute), EventEnd: t0.Add(3 * time.Minute),
		ShuffleAtEventStart: true,
	})
	logs := watchLogs(t, r)
	if got := awaitLog(t, logs, "waiting room started"); got.ContextMap()["phase"] != "not_yet_open" || got.ContextMap()["room"] != "logged" {
		t.Errorf("start line %v", got.ContextMap())
	}

	e.step(31, r)
	awaitLog(t, logs, "waiting room pre-queue opened")
	e.join(r, 3)
	e.step(30, r)
	awaitLog(t, logs, "waiting room event started")
	draw := awaitLog(t, logs, "waiting room draw made").ContextMap()
	if draw["registrations"] != uint64(3) || draw["seed"] == "" || draw["commitment"] == "" {
		t.Errorf("draw line %v, want 3 registrations, the seed and the commitment", draw)
	}

	// The log follows the room's view, so a change undone before the next
	// look at it is not an event: each waits to be seen.
	for _, step := range []struct {
		soldOut bool
		msg     string
	}{{true, "waiting room sold out"}, {false, "waiting room reopened"}} {
		if _, err := r.Patch(context.Background(), waitingroom.OverridesOf(waitingroom.Settings{SoldOut: step.soldOut}, "sold_out")); err != nil {
			t.Fatal(err)
		}
		awaitLog(t, logs, step.msg)
	}

	e.step(120, r)
	closed := awaitLog(t, logs, "waiting room closed").ContextMap()
	if closed["places_issued"] != uint64(3) {
		t.Errorf("closing line %v, want the 3 places issued", closed)
	}

	// A minute more of refreshes adds nothing: every event was written once.
	e.step(60, r)
	for _, msg := range []string{"waiting room started", "waiting room pre-queue opened", "waiting room event started",
		"waiting room draw made", "waiting room sold out", "waiting room reopened", "waiting room closed"} {
		n := 0
		for _, l := range logs.All() {
			if strings.HasPrefix(l.Message, msg) {
				n++
			}
		}
		if n != 1 {
			t.Errorf("%q written %d times, want once:\n%s", msg, n, messages(logs))
		}
	}
	if logs.Len() != 7 {
		t.Errorf("%d lines, want the 7 events:\n%s", logs.Len(), messages(logs))
	}
	for _, l := range logs.All() {
		if l.Level != zapcore.InfoLevel {
			t.Errorf("%q at %s, want info", l.Message, l.Level)
		}
	}
}

// TestRandomDrawSeedIsLoggedWhenRevealed: the random method's seed is
// revealed when the room closes, and the log says so once.
func TestRandomDrawSeedIsLoggedWhenRevealed(t *testing.T) {
	e := newAdminEnv(t, nil)
	r := e.node("lottery", waitingroom.Settings{
		QueueingMethod: waitingroom.Random, NewUsersPerMinute: 60, TotalActiveUsers: 100,
		EventEnd: e.clock.Now().Add(time.Minute),
	})
	logs := watchLogs(t, r)
	awaitLog(t, logs, "waiting room started")
	e.join(r, 10)
	e.step(5, r) // rolling draws among those waiting
	if len(r.DrawInfo().Epochs) == 0 {
		t.Fatal("no rolling draw was made")
	}
	e.step(60, r)
	awaitLog(t, logs, "waiting room closed")
	seed := awaitLog(t, logs, "waiting room draw seed revealed").ContextMap()
	if seed["seed"] == "" || seed["seed"] != r.DrawInfo().Seed {
		t.Errorf("seed line %v, want the room's seed %s", seed, r.DrawInfo().Seed)
	}
}

// TestKeysAreLoggedOncePerSet: the keys a room signs and verifies with are
// logged when first loaded and when they change, not at every reload.
func TestKeysAreLoggedOncePerSet(t *testing.T) {
	core, logs := observer.New(zapcore.DebugLevel)
	log := zap.New(core)
	k1, _ := waitingroom.GenerateSigningKey()
	k2, _ := waitingroom.GenerateSigningKey()
	room := "keys-logged-" + k1.KeyID()
	logKeysLoaded(log, room, "", k1, nil)
	logKeysLoaded(log, room, "", k1, nil) // a reload, or a second handler
	logKeysLoaded(log, room, "/etc/foyer/next.pem", k2, []*waitingroom.SigningKey{k1})
	lines := logs.FilterMessage("waiting room signing key loaded").All()
	if len(lines) != 2 {
		t.Fatalf("%d lines, want one per set of keys:\n%s", len(lines), messages(logs))
	}
	first, second := lines[0].ContextMap(), lines[1].ContextMap()
	if first["kid"] != k1.KeyID() || first["from"] != "Caddy storage" {
		t.Errorf("first line %v", first)
	}
	if second["kid"] != k2.KeyID() || second["from"] != "/etc/foyer/next.pem" {
		t.Errorf("second line %v", second)
	}
	if v, _ := second["verifying_kids"].([]any); len(v) != 1 || v[0] != k1.KeyID() {
		t.Errorf("second line verifies with %v, want %s", second["verifying_kids"], k1.KeyID())
	}
}

// TestAdminReadsLogAtDebug: the admin API logs a read at debug and a change
// at info.
func TestAdminReadsLogAtDebug(t *testing.T) {
	e := newAdminEnv(t, nil)
	r := e.node("concert", waitingroom.Settings{})
	core, logs := observer.New(zapcore.DebugLevel)
	a := adminFor(r)
	a.logger = zap.New(core)
	call(t, a, http.MethodGet, "/waiting-room/", "")
	call(t, a, http.MethodGet, "/waiting-room/concert", "")
	if n := logs.FilterLevelExact(zapcore.InfoLevel).Len(); n != 0 {
		t.Errorf("reads wrote %d lines at info:\n%s", n, messages(logs))
	}
	if n := logs.FilterMessage("waiting room admin read").FilterLevelExact(zapcore.DebugLevel).Len(); n != 2 {
		t.Errorf("%d reads at debug, want 2:\n%s", n, messages(logs))
	}
	call(t, a, http.MethodPatch, "/waiting-room/concert", `{"paused": true}`)
	if n := logs.FilterMessage("waiting room settings changed").FilterLevelExact(zapcore.InfoLevel).Len(); n != 1 {
		t.Errorf("the change: %d lines at info, want 1:\n%s", n, messages(logs))
	}
}
