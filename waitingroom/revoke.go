package waitingroom

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"
)

// A revocation is never lost. The node that accepts it refuses the pass at
// once, keeps it until the pass would have expired anyway, and makes sure the
// store records it so that every node learns it:
//
//   - while the store does not answer, the revocation waits in the node's
//     outbox (revokeOutbox), and every refresh that reaches the store writes
//     what waits there;
//   - after a refresh failed, or the room was created anew in the store (it
//     lost its data), the next refresh reads every live revocation from the
//     store and queues again each one this node knows that the store does
//     not: a store that came back empty, or a Cluster replica promoted before
//     it had the last writes, is re-seeded with them, expiry included;
//   - a node that starts reads every live revocation from the store.
//
// While the store is away, the other nodes cannot know, and accept the pass
// until they read the store again. So that this lasts as little as it can
// once the store answers, a node whose refresh has just reached the store
// after a failure catches up: for catchUpSpan it refreshes every
// catchUpInterval rather than every RefreshInterval. Every node failed
// together, so every node catches up together: the one holding the
// revocation writes it at its first good refresh, and the others read it
// within a catch-up tick. The window, from the store answering to every node
// refusing the pass, is then the time the node holding it takes to find the
// store back (up to a RefreshInterval, and up to a second more while a Redis
// client whose dials all failed waits before probing again) plus one
// catchUpInterval (measured in TestFaultRevocationsReachEveryNodeAfterOutage).
//
// A node that restarts while the store is unreachable knows no revocation
// until the store answers; that is the one loss no node can cover alone.

// maxRevocationFlush bounds the revocations one refresh writes, so that a
// node that piled many up during an outage does not stall its refresh; the
// rest go out on the next ones.
const maxRevocationFlush = 256

// catchUpInterval and catchUpSpan shape the refreshes of a node whose store
// has just come back: ten refreshes in the second after, instead of two, so
// that what another node kept for the store during the outage reaches this
// one a catch-up tick after it is written. A node that ticks faster still
// advances the line at most once a second.
const (
	catchUpInterval = 100 * time.Millisecond
	catchUpSpan     = time.Second
)

func (r *Room) catchUpUntil() time.Time { return time.Unix(0, r.catchUp.Load()) }

// Revoke ends the session a pass belongs to (the origin is done with the
// visitor) and refuses the pass from now on, on this node at once, and on
// every node once the store has it.
func (r *Room) Revoke(ctx context.Context, p Pass) error {
	now := r.now()
	r.revoked.add(p.ID, p.ExpiresAt)
	r.stats.Revokes.Add(1)
	if !r.Healthy() {
		// No round trip, and no timeout to wait out, against a store this
		// node already knows is away.
		r.unsent.add(p.ID, p.Subject, p.ExpiresAt)
		return ErrRevocationDeferred
	}
	err := r.store.Release(ctx, r.id, p.Subject, p.ID, p.ExpiresAt, now, r.settings().limitsAt(now))
	if err != nil {
		r.unsent.add(p.ID, p.Subject, p.ExpiresAt)
		if !errors.Is(err, ErrNoRoom) {
			r.storeFailed()
		}
		return fmt.Errorf("%w: %w", ErrRevocationDeferred, err)
	}
	return nil
}

// Unsent is how many revocations this node holds that the store has yet to
// record.
func (r *Room) Unsent() int { return r.unsent.len() }

// flushRevocations writes the revocations waiting in the outbox. It stops at
// the first failure; what is left waits for the next refresh.
func (r *Room) flushRevocations(ctx context.Context, now time.Time) error {
	due := r.unsent.due(now, maxRevocationFlush)
	if len(due) == 0 {
		return nil
	}
	lim := r.settings().limitsAt(now)
	for _, u := range due {
		if err := r.store.Release(ctx, r.id, u.visitor, u.id, u.until, now, lim); err != nil {
			return err
		}
		r.unsent.done(u.id)
	}
	return nil
}

// resyncRevocations queues again every live revocation this node knows that
// is not among stored, all those the store holds.
func (r *Room) resyncRevocations(stored []Revocation, now time.Time) {
	in := make(map[string]bool, len(stored))
	for _, rv := range stored {
		if rv.Visitor != "" {
			continue // an idle-out, which the store decided
		}
		in[rv.PassID] = true
	}
	r.revoked.mu.RLock()
	defer r.revoked.mu.RUnlock()
	for id, rv := range r.revoked.m {
		if rv.until.After(now) && !in[id] {
			r.unsent.add(id, "", rv.until)
		}
	}
}

// revokeOutbox holds the revocations a node accepted that the store has not
// recorded. It grows only while the store is away, by the passes revoked
// meanwhile, and entries leave once written or once their pass has expired.
type revokeOutbox struct {
	mu sync.Mutex
	m  map[string]unsentRevocation
}

type unsentRevocation struct {
	id      string
	visitor string // whose session to end; empty when only the pass is refused
	until   time.Time
}

func (o *revokeOutbox) add(id, visitor string, until time.Time) {
	o.mu.Lock()
	defer o.mu.Unlock()
	if o.m == nil {
		o.m = make(map[string]unsentRevocation)
	}
	if old, ok := o.m[id]; ok && visitor == "" {
		visitor = old.visitor
	}
	o.m[id] = unsentRevocation{id: id, visitor: visitor, until: until}
}

// due drops what has expired and returns up to n of the rest.
func (o *revokeOutbox) due(now time.Time, n int) []unsentRevocation {
	o.mu.Lock()
	defer o.mu.Unlock()
	var out []unsentRevocation
	for id, u := range o.m {
		if !u.until.After(now) {
			delete(o.m, id)
		} else if len(out) < n {
			out = append(out, u)
		}
	}
	return out
}

func (o *revokeOutbox) done(id string) {
	o.mu.Lock()
	delete(o.m, id)
	o.mu.Unlock()
}

func (o *revokeOutbox) len() int {
	o.mu.Lock()
	defer o.mu.Unlock()
	return len(o.m)
}

// Requeue puts the holder of pass p back at the front: the origin failed
// their session through no fault of theirs (docs/PROTOCOL.md, "Requeue").
// The session ends, its pass is refused on this node at once and on every
// node once the store has it, and the fan waits first with their place,
// behind only the fans requeued before. The transition says which it was:
// to TicketRequeued, or, with the ticket's requeues spent, the session runs
// on (ActionForward). Unlike a revocation, a requeue is not kept for later:
// with the store away it is refused (ErrStoreUnavailable), and the session
// runs on, since only the store can place the fan at the front.
func (r *Room) Requeue(ctx context.Context, p Pass) (*Transition, error) {
	if !r.Healthy() {
		return nil, ErrStoreUnavailable
	}
	now := r.now()
	lim := r.settings().limitsAt(now)
	res, err := r.store.Requeue(ctx, r.id, p.Subject, p.ID, p.ExpiresAt, now, lim)
	if errors.Is(err, ErrNoRoom) {
		if err = r.reseed(ctx, now); err == nil {
			res, err = r.store.Requeue(ctx, r.id, p.Subject, p.ID, p.ExpiresAt, now, lim)
		}
	}
	if err != nil {
		r.storeFailed()
		return nil, fmt.Errorf("%w: %w", ErrStoreUnavailable, err)
	}
	if res.Status != RequeueDone {
		r.stats.RequeuesSpent.Add(1)
		return follow(TicketInSession, EventRequeueRefused)
	}
	r.revoked.add(p.ID, p.ExpiresAt)
	r.stats.Requeues.Add(1)
	return follow(TicketInSession, EventRequeue)
}

// revocations is the set of pass IDs that must be refused before they expire.
type revocations struct {
	expiringSet[revocation]
}

// revocation is one revoked pass, kept until the pass would have expired.
type revocation struct {
	until time.Time
}

func (rv revocation) forgetAt() time.Time { return rv.until }

func (r *revocations) add(id string, until time.Time) {
	r.put(id, revocation{until: until})
}
