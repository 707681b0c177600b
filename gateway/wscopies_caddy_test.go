package gateway

import (
	"context"
	"net/http"
	"net/http/cookiejar"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/coder/websocket"

	"github.com/foyer-dev/foyer/waitingroom"
)

// TestCaddyCopiedTicketCannotHoardLiveConnections: one ticket, copied into
// many clients, opens live connections by the hundred. join_limit bounds the
// tickets an address gets, not what one ticket does, and each connection
// holds a goroutine and wakes with every view of the room. A node keeps at
// most MaxLiveConnectionsPerTicket open per ticket and refuses the rest with
// 429; a connection that closes frees its slot.
func TestCaddyCopiedTicketCannotHoardLiveConnections(t *testing.T) {
	newCaddy(t, caddyConfig(t.TempDir(), `
	http://localhost:9080 {
		waiting_room {
			room ws-hoard
			queue_all
		}
		respond "origin"
	}`))
	holder := newFan(t)
	if st := holder.status(base); st.State == waitingroom.StateAdmitted {
		t.Fatalf("holder: %+v, want held in line", st)
	}
	u, _ := url.Parse(base)
	var ticket string
	for _, c := range holder.client.Jar.Cookies(u) {
		if c.Name == "foyer_ticket" {
			ticket = c.Value
		}
	}
	if ticket == "" {
		t.Fatal("the holder got no ticket")
	}
	copyClient := func() *http.Client {
		jar, _ := cookiejar.New(nil)
		jar.SetCookies(u, []*http.Cookie{{Name: "foyer_ticket", Value: ticket, Path: "/"}})
		return &http.Client{Jar: jar}
	}
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	wsURL := strings.Replace(base, "http", "ws", 1) + "/_waiting-room/ws"
	dial := func() (*websocket.Conn, *http.Response, error) {
		return websocket.Dial(ctx, wsURL, &websocket.DialOptions{HTTPClient: copyClient()})
	}
	var open []*websocket.Conn
	defer func() {
		for _, c := range open {
			c.CloseNow()
		}
	}()
	for i := range MaxLiveConnectionsPerTicket {
		conn, resp, err := dial()
		if err != nil {
			t.Fatalf("connection %d of the ticket: %v (%v)", i, err, resp)
		}
		if _, msg, err := conn.Read(ctx); err != nil || !strings.Contains(string(msg), `"room":"ws-hoard"`) {
			t.Fatalf("connection %d pushed %q %v", i, msg, err)
		}
		open = append(open, conn)
	}
	refused := 0
	for range 20 {
		conn, resp, err := dial()
		if err == nil {
			open = append(open, conn)
			continue
		}
		if resp != nil && resp.StatusCode == http.StatusTooManyRequests {
			refused++
		}
	}
	if refused != 20 {
		t.Fatalf("%d of 20 connections beyond %d of one ticket refused with 429, want all (%d open)", refused, MaxLiveConnectionsPerTicket, len(open))
	}
	// Another fan is not held back by the copies.
	other := newFan(t)
	other.status(base)
	if conn, resp, err := websocket.Dial(ctx, wsURL, &websocket.DialOptions{HTTPClient: other.client}); err != nil {
		t.Fatalf("another fan's connection: %v (%v)", err, resp)
	} else {
		conn.CloseNow()
	}
	// A copy that closes frees its slot.
	open[0].Close(websocket.StatusNormalClosure, "")
	open = open[1:]
	deadline := time.Now().Add(5 * time.Second)
	for {
		conn, _, err := dial()
		if err == nil {
			open = append(open, conn)
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("after a connection closed: %v", err)
		}
		time.Sleep(50 * time.Millisecond)
	}
}
