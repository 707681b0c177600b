package gateway

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/coder/websocket"

	"github.com/foyer-dev/foyer/waitingroom"
)

func TestWebSocketPushesUntilAdmitted(t *testing.T) {
	clock := useTestClock(t)
	h := testHandler(t, Handler{Settings: waitingroom.Settings{TotalActiveUsers: 1, NewUsersPerMinute: 60}}, nil)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if err := h.ServeHTTP(w, r, &origin{}); err != nil {
			t.Error(err)
		}
	}))
	defer srv.Close()

	first := serve(h, &origin{}, get("/"))
	second := cookieFrom(serve(h, &origin{}, get("/")), "foyer_ticket")
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	hdr := http.Header{"Cookie": {second.String()}}
	conn, _, err := websocket.Dial(ctx, "ws"+strings.TrimPrefix(srv.URL, "http")+"/_waiting-room/ws", &websocket.DialOptions{HTTPHeader: hdr})
	if err != nil {
		t.Fatal(err)
	}
	defer conn.CloseNow()
	read := func() waitingroom.Status {
		t.Helper()
		_, msg, err := conn.Read(ctx)
		if err != nil {
			t.Fatalf("read: %v", err)
		}
		var st waitingroom.Status
		if err := json.Unmarshal(msg, &st); err != nil {
			t.Fatal(err)
		}
		return st
	}
	if st := read(); st.State != waitingroom.StateQueued {
		t.Fatalf("first push: %+v, want queued", st)
	}
	// The first fan leaves; the next step admits the second, who is told at once.
	pass, _ := h.room.CheckPass(cookieFrom(first, "foyer_pass").Value)
	if err := h.room.Revoke(ctx, pass); err != nil {
		t.Fatal(err)
	}
	clock.Advance(time.Second)
	if err := h.room.Tick(ctx); err != nil {
		t.Fatal(err)
	}
	for {
		st := read()
		if st.State == waitingroom.StateAdmitted {
			break
		}
		if st.State != waitingroom.StateQueued {
			t.Fatalf("push %+v, want queued then admitted", st)
		}
	}
	if _, _, err := conn.Read(ctx); websocket.CloseStatus(err) != websocket.StatusNormalClosure {
		t.Fatalf("after admitted: %v, want a normal close", err)
	}
}

func TestWebSocketBadRequests(t *testing.T) {
	h := testHandler(t, Handler{}, nil)
	cases := []struct {
		name    string
		req     *http.Request
		code    int
		errCode string
	}{
		{"not an upgrade", get("/_waiting-room/ws"), 400, "websocket_required"},
		{"no ticket", upgrade(get("/_waiting-room/ws")), 401, "no_ticket"},
		{"forged ticket", upgrade(get("/_waiting-room/ws", &http.Cookie{Name: "foyer_ticket", Value: "forged"})), 401, "invalid_ticket"},
	}
	for _, tc := range cases {
		rec := serve(h, &origin{}, tc.req)
		var e apiError
		if rec.Code != tc.code || json.Unmarshal(rec.Body.Bytes(), &e) != nil || e.Error != tc.errCode {
			t.Errorf("%s: got %d %s, want %d %s", tc.name, rec.Code, rec.Body, tc.code, tc.errCode)
		}
	}
}

func upgrade(r *http.Request) *http.Request {
	r.Header.Set("Upgrade", "websocket")
	r.Header.Set("Connection", "Upgrade")
	return r
}

// TestWebSocketClosesWhenTheRoomStops: a stopped room's view is frozen and
// its change signal never fires again, so a live connection on it would show
// the fan the same place for ever. The connection closes with 1012 (service
// restart), for which the page opens a new one; one that reaches the room
// once it has stopped is closed so before any push.
func TestWebSocketClosesWhenTheRoomStops(t *testing.T) {
	useTestClock(t)
	h := testHandler(t, Handler{Settings: waitingroom.Settings{QueueAll: true}}, nil)
	runCtx, stop := context.WithCancel(context.Background())
	defer stop()
	go h.room.Run(runCtx)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if err := h.ServeHTTP(w, r, &origin{}); err != nil {
			t.Error(err)
		}
	}))
	defer srv.Close()

	ticket := cookieFrom(serve(h, &origin{}, get("/")), "foyer_ticket")
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	dial := func() *websocket.Conn {
		t.Helper()
		conn, _, err := websocket.Dial(ctx, "ws"+strings.TrimPrefix(srv.URL, "http")+"/_waiting-room/ws",
			&websocket.DialOptions{HTTPHeader: http.Header{"Cookie": {ticket.String()}}})
		if err != nil {
			t.Fatal(err)
		}
		return conn
	}
	conn := dial()
	defer conn.CloseNow()
	if _, msg, err := conn.Read(ctx); err != nil || !strings.Contains(string(msg), `"queue_all":true`) {
		t.Fatalf("first push: %q %v, want the fan held by queue_all", msg, err)
	}
	stop()
	// The read is bounded by ctx: a connection left open fails the test
	// after 10 s instead of hanging it.
	if _, msg, err := conn.Read(ctx); websocket.CloseStatus(err) != websocket.StatusServiceRestart {
		t.Fatalf("after the room stopped: %q %v, want a close with 1012", msg, err)
	}

	late := dial()
	defer late.CloseNow()
	if _, msg, err := late.Read(ctx); websocket.CloseStatus(err) != websocket.StatusServiceRestart {
		t.Fatalf("a connection to the stopped room: %q %v, want a close with 1012 and no push", msg, err)
	}
}
