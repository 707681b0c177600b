package gateway

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/coder/websocket"

	"github.com/foyer-dev/foyer/waitingroom"
)

// wsReloadSite is a site whose room holds everyone while queueAll is set;
// title is a room setting, so a new one makes a new room, and reply is not,
// so a new one keeps the room.
func wsReloadSite(storage, room, title string, queueAll bool, reply string) string {
	hold := ""
	if queueAll {
		hold = "queue_all"
	}
	return caddyConfig(storage, fmt.Sprintf(`
	http://localhost:9080 {
		waiting_room {
			room %s
			title %q
			total_active_users 1
			new_users_per_minute 60
			%s
		}
		respond %q
	}`, room, title, hold, reply))
}

// roomHandles are the pool's handles on the room with the given ID.
func roomHandles(id string) []*roomHandle {
	var out []*roomHandle
	rooms.Range(func(_, v any) bool {
		if rh := v.(*roomHandle); rh.room.ID() == id {
			out = append(out, rh)
		}
		return true
	})
	return out
}

// liveFan is a fan's WebSocket, read under one deadline.
type liveFan struct {
	t    *testing.T
	ctx  context.Context
	conn *websocket.Conn
}

func openLive(t *testing.T, ctx context.Context, f *fan) *liveFan {
	t.Helper()
	wsURL := strings.Replace(base, "http", "ws", 1) + "/_waiting-room/ws"
	conn, resp, err := websocket.Dial(ctx, wsURL, &websocket.DialOptions{HTTPClient: f.client})
	if err != nil {
		t.Fatalf("opening the live connection: %v (%v)", err, resp)
	}
	t.Cleanup(func() { conn.CloseNow() })
	return &liveFan{t: t, ctx: ctx, conn: conn}
}

// next reads the next push, or returns the error that ended the connection.
func (l *liveFan) next() (waitingroom.Status, error) {
	l.t.Helper()
	_, msg, err := l.conn.Read(l.ctx)
	if err != nil {
		return waitingroom.Status{}, err
	}
	var st waitingroom.Status
	if err := json.Unmarshal(msg, &st); err != nil {
		l.t.Fatalf("push %q: %v", msg, err)
	}
	return st, nil
}

// admitted reads pushes until the one that says "admitted", which must be
// followed by a normal close.
func (l *liveFan) admitted() {
	l.t.Helper()
	for {
		st, err := l.next()
		if err != nil {
			l.t.Fatalf("the connection ended before the fan was admitted: %v", err)
		}
		if st.State == waitingroom.StateAdmitted {
			break
		}
	}
	if _, err := l.next(); websocket.CloseStatus(err) != websocket.StatusNormalClosure {
		l.t.Fatalf("after admitted: %v, want a normal close", err)
	}
}

// TestCaddyReloadReplacingTheRoomRestartsLiveConnections: a reload that
// changes a room setting replaces the room, and the old one stops. A live
// connection on it would show the fan a frozen place for ever; it closes
// with 1012 (service restart) instead, and the new connection the page opens
// reads the new room, whose news reach it.
func TestCaddyReloadReplacingTheRoomRestartsLiveConnections(t *testing.T) {
	clock := useTestClock(t)
	storage := t.TempDir()
	tester := newCaddy(t, wsReloadSite(storage, "ws-replaced", "Before", true, "origin"))
	fan := newFan(t)
	if st := fan.status(base); st.State == waitingroom.StateAdmitted {
		t.Fatalf("fan: %+v, want held in line", st)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	old := openLive(t, ctx, fan)
	if _, err := old.next(); err != nil {
		t.Fatalf("first push: %v", err)
	}
	before := roomHandles("ws-replaced")

	// A new title, and entry open: a new room on the same store.
	tester.InitServer(wsReloadSite(storage, "ws-replaced", "After", false, "origin"), "caddyfile")
	if after := roomHandles("ws-replaced"); len(after) != 1 || len(before) != 1 || after[0] == before[0] {
		t.Fatalf("room handles before the reload %v, after %v: want one each, not the same", before, after)
	}
	// The old room's view still says queue_all: a push or two from it may
	// come before the close. The wait is bounded by ctx.
	for {
		_, err := old.next()
		if err == nil {
			continue
		}
		if websocket.CloseStatus(err) != websocket.StatusServiceRestart {
			t.Fatalf("the old room's connection ended with %v, want a close with 1012", err)
		}
		break
	}

	// The page opens a new connection: the new room answers it, and its
	// controller lets the fan in, which the connection is told at once.
	fresh := openLive(t, ctx, fan)
	if st, err := fresh.next(); err != nil || st.QueueAll {
		t.Fatalf("first push of the new room: %+v %v, want entry open", st, err)
	}
	clock.step(t, 2)
	fresh.admitted()
}

// TestCaddyReloadKeepingTheRoomKeepsLiveConnections: a reload that changes
// nothing of the room (here only the site's reply) keeps the room, running;
// its live connections stay open and go on bringing its news.
func TestCaddyReloadKeepingTheRoomKeepsLiveConnections(t *testing.T) {
	clock := useTestClock(t)
	storage := t.TempDir()
	tester := newCaddy(t, wsReloadSite(storage, "ws-kept", "Kept", true, "origin"))
	fan := newFan(t)
	if st := fan.status(base); st.State == waitingroom.StateAdmitted {
		t.Fatalf("fan: %+v, want held in line", st)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	live := openLive(t, ctx, fan)
	if _, err := live.next(); err != nil {
		t.Fatalf("first push: %v", err)
	}
	before := roomHandles("ws-kept")

	tester.InitServer(wsReloadSite(storage, "ws-kept", "Kept", true, "origin, reloaded"), "caddyfile")
	if after := roomHandles("ws-kept"); len(after) != 1 || len(before) != 1 || after[0] != before[0] {
		t.Fatalf("room handles before the reload %v, after %v: want the same one", before, after)
	}
	select {
	case <-before[0].room.Done():
		t.Fatal("the kept room was stopped by the reload")
	default:
	}

	// Entry opens: the connection opened before the reload tells the fan.
	if code, body := adminCall(t, http.MethodPatch, "/waiting-room/ws-kept", `{"queue_all": false}`); code != http.StatusOK {
		t.Fatalf("PATCH: %d %s", code, body)
	}
	clock.step(t, 2)
	live.admitted()
}
