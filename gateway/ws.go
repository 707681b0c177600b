package gateway

import (
	"context"
	"encoding/json"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/coder/websocket"

	"github.com/foyer-dev/foyer/waitingroom"
)

// MaxLiveConnectionsPerTicket bounds the live connections a node keeps open
// for one ticket: a fan with a few tabs, not a ticket copied into a hundred
// clients, each connection a goroutine that wakes with every view.
const MaxLiveConnectionsPerTicket = 4

// Pacing of pushes over a live connection.
const (
	// wsMinGap spaces pushes that only move a position or an ETA; a change of
	// state goes out at once.
	wsMinGap = 2 * time.Second
	// wsKeepAlive is the longest silence on a connection, so that proxies and
	// load balancers do not reap it.
	wsKeepAlive = 25 * time.Second
	wsWriteWait = 10 * time.Second
)

// serveWS keeps a WebSocket open to a waiting fan and pushes their status when
// it changes, answered from the node's view (no store call per push). When their
// turn comes it pushes "admitted" and closes: the page goes back to the fan's URL,
// which claims the session and sets the pass.
//
// A connection follows the room it reads, not the handler that accepted it: a
// config reload that keeps the room (docs/ARCHITECTURE.md, "Config reloads")
// leaves it open, since the room goes on refreshing its view. When the room
// stops (a reload replaced it, or Caddy is stopping), the connection closes
// with 1012 (service restart) and the page opens a new one, which the new
// config's room answers.
func (h *Handler) serveWS(w http.ResponseWriter, r *http.Request) error {
	if !isUpgrade(r) {
		return writeError(w, http.StatusBadRequest, "websocket_required", "This endpoint speaks WebSocket only; poll status instead.")
	}
	ticket, _ := h.ourCookies(r)
	if ticket == "" {
		return writeError(w, http.StatusUnauthorized, "no_ticket", "Join the line first: no ticket was sent.")
	}
	t, err := h.room.OpenTicket(ticket)
	if err != nil || t.Claimed {
		return writeError(w, http.StatusUnauthorized, "invalid_ticket", "The ticket is not valid for this room; reload the page.")
	}
	live := h.liveConns()
	if !live.take(t.Visitor) {
		w.Header().Set("Retry-After", strconv.Itoa(int(wsKeepAlive/time.Second)))
		return writeError(w, http.StatusTooManyRequests, "too_many_connections",
			"This ticket has "+strconv.Itoa(MaxLiveConnectionsPerTicket)+" live connections open on this node already; poll status instead.")
	}
	defer live.release(t.Visitor)
	// The default origin check admits only pages from this host, so that no
	// other site can watch a fan's place.
	conn, err := websocket.Accept(w, r, nil)
	if err != nil {
		return nil // Accept has answered the client
	}
	defer conn.CloseNow()
	ctx := conn.CloseRead(r.Context())

	loc := h.langs.lookup(r.URL.Query().Get("lang"))
	var last waitingroom.Status
	var lastSent time.Time
	for {
		// A stopped room's view is frozen. It is checked before any push, so
		// that a connection that reached a room just as it stopped brings no
		// news and the page, after a retry or two, polls instead.
		select {
		case <-h.room.Done():
			// A fan who cannot answer the close handshake has gone already:
			// there is nothing to report to Caddy.
			_ = conn.Close(websocket.StatusServiceRestart, "room restarted")
			return nil
		default:
		}
		changed := h.room.Changed()
		st, next := h.room.Peek(t)
		t = next
		final := st.State == waitingroom.StateAdmitted || st.State == waitingroom.StateSoldOut || st.State == waitingroom.StateClosed
		// A new variant of the page (a new state, the front of the line,
		// queue_all, the store away) goes out at once: the page reloads on it.
		due := lastSent.IsZero() || variantOf(st, false) != variantOf(last, false) || st.Reconnecting != last.Reconnecting ||
			(time.Since(lastSent) >= wsMinGap && !sameFigures(st, last)) ||
			time.Since(lastSent) >= wsKeepAlive
		if due {
			if err := h.push(ctx, conn, st, loc); err != nil {
				return nil
			}
			last, lastSent = st, time.Now()
		}
		if final {
			return conn.Close(websocket.StatusNormalClosure, string(st.State))
		}
		// Figures held back by the gap go out when it ends, whether or not
		// the view changes again by then.
		wait := wsKeepAlive
		if !due && !sameFigures(st, last) {
			wait = max(0, wsMinGap-time.Since(lastSent))
		}
		select {
		case <-ctx.Done():
			return nil
		case <-h.room.Done(): // handled at the top of the loop
		case <-changed:
		case <-time.After(wait):
		}
	}
}

// livePush is a live update: the status, and the page's words for it.
type livePush struct {
	waitingroom.Status
	Page pageView `json:"page"`
}

func (h *Handler) push(ctx context.Context, conn *websocket.Conn, st waitingroom.Status, l *locale) error {
	view, _ := pageViewOf(st, false, l)
	msg, err := json.Marshal(livePush{st, view})
	if err != nil {
		return err
	}
	ctx, cancel := context.WithTimeout(ctx, wsWriteWait)
	defer cancel()
	return conn.Write(ctx, websocket.MessageText, msg)
}

// sameFigures reports whether two statuses would read the same to a fan.
func sameFigures(a, b waitingroom.Status) bool {
	eq := func(x, y *uint64) bool { return (x == nil) == (y == nil) && (x == nil || *x == *y) }
	eqi := func(x, y *int64) bool { return (x == nil) == (y == nil) && (x == nil || *x == *y) }
	return eq(a.Position, b.Position) && eqi(a.ETASeconds, b.ETASeconds)
}

func isUpgrade(r *http.Request) bool {
	return r.Method == http.MethodGet &&
		strings.EqualFold(r.Header.Get("Upgrade"), "websocket") &&
		strings.Contains(strings.ToLower(r.Header.Get("Connection")), "upgrade")
}
