package waitingroom

import (
	"net/netip"

	"github.com/foyer-dev/foyer/waitingroom/clientlimit"
)

// MaxTrackedClients bounds the client addresses a room's join limit keeps on
// one node: about 160 bytes each (see clientlimit's BenchmarkMemoryPerClient),
// so at most about 10 MiB per room. Beyond it the address seen longest ago is
// forgotten and starts again with a full allowance.
const MaxTrackedClients = 1 << 16

// AllowJoin decides whether the newcomer at client may take a new place now,
// under the room's join_limit: nil, or a *JoinLimitedError saying when to
// come back. Call it only for a visitor who is about to join: polls, live
// connections and admitted requests never spend the allowance, and cost
// nothing here. A room that would give no place (not yet open, closed, sold
// out, rejecting) lets everyone see so. This is the node's own count, the
// first and free filter; a join it lets through is weighed again by the
// store, for every node sharing it (Limits.JoinLimit, Joiner.Client).
func (r *Room) AllowJoin(client netip.Addr) error {
	now := r.now()
	s := r.view.Load().settings
	if s.JoinLimit.IsZero() || !s.placesOpen(now) {
		return nil
	}
	t := r.clients.Load()
	if t == nil {
		r.clients.CompareAndSwap(nil, clientlimit.New(MaxTrackedClients))
		t = r.clients.Load()
	}
	if ok, retry := t.Allow(clientlimit.KeyOf(client), now, s.JoinLimit.Rate(), s.JoinLimit.BurstSize()); !ok {
		r.stats.JoinsLimited.Add(1)
		return &JoinLimitedError{RetryAfter: retry}
	}
	return nil
}

// TrackedClients is the number of client addresses the join limit keeps on
// this node now.
func (r *Room) TrackedClients() int {
	if t := r.clients.Load(); t != nil {
		return t.Len()
	}
	return 0
}

// ReturnJoin gives client back the allowance AllowJoin took, for a join that
// made no place: a 503 (the store away, or the room settling after a loss) is
// not a place, and must not leave the fan limited once the store answers.
func (r *Room) ReturnJoin(client netip.Addr) {
	s := r.view.Load().settings
	if s.JoinLimit.IsZero() {
		return
	}
	if t := r.clients.Load(); t != nil {
		t.Return(clientlimit.KeyOf(client), r.now(), s.JoinLimit.BurstSize())
	}
}
