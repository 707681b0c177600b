package gateway

import (
	"sync"

	"github.com/foyer-dev/foyer/waitingroom"
)

// liveConns counts the live connections this node holds open per ticket
// (its visitor), so that one ticket, copied into many clients, cannot hold
// connections by the hundred (MaxLiveConnectionsPerTicket).
type liveConns struct {
	mu sync.Mutex
	n  map[waitingroom.VisitorID]int
}

// take counts one more connection of visitor, or reports that it has its
// share open already.
func (l *liveConns) take(visitor waitingroom.VisitorID) bool {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.n[visitor] >= MaxLiveConnectionsPerTicket {
		return false
	}
	if l.n == nil {
		l.n = make(map[waitingroom.VisitorID]int)
	}
	l.n[visitor]++
	return true
}

// release counts a connection of visitor closed.
func (l *liveConns) release(visitor waitingroom.VisitorID) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.n[visitor] <= 1 {
		delete(l.n, visitor)
		return
	}
	l.n[visitor]--
}

// liveConns is the room's count, kept across config reloads with the room.
// Only a handler built outside Caddy (unit tests) has no room handle: it
// counts each connection on its own, that is, not at all.
func (h *Handler) liveConns() *liveConns {
	if h.handle != nil {
		return &h.handle.live
	}
	return new(liveConns)
}
