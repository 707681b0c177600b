package waitingroom

import (
	"context"
	"errors"
	"fmt"
	"net/netip"
	"sync"
	"time"

	"github.com/foyer-dev/foyer/waitingroom/clientlimit"
)

// joinable refuses a join at once, without queueing it for the store, while
// this node knows the store is not answering: its view went stale, or a join
// batch failed since its last good refresh. Holding newcomers against a store
// that is down would pile up a goroutine and a connection per arrival, each
// waiting out a timeout to be told the same 503.
func (r *Room) joinable(v *view) error {
	if !v.healthy {
		return fmt.Errorf("%w: this node has not reached its store recently", ErrStoreUnavailable)
	}
	if r.joinsDown.Load() {
		return fmt.Errorf("%w: the last joins failed; waiting for the store to answer a refresh", ErrStoreUnavailable)
	}
	return nil
}

// joinFailed turns a failed join into the error Join returns. A store failure
// stops further joins until the next good refresh (see joinable); a full join
// queue, a store that is settling after a loss (it answers, and holds
// newcomers on purpose) or the joiner's own cancellation says nothing about
// the store being down.
func (r *Room) joinFailed(ctx context.Context, err error) error {
	switch {
	case errors.Is(err, ErrJoinQueueFull), errors.Is(err, ErrSettling):
	case ctx.Err() != nil && errors.Is(err, ctx.Err()):
	default:
		r.joinsDown.Store(true)
		r.storeFailed()
	}
	return fmt.Errorf("%w: %w", ErrStoreUnavailable, err)
}

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

// joinBatcher sends the joins that arrive while a call to the store is in flight
// as one call. At rest a join goes out at once, alone; in a stampede each store
// round trip carries every visitor who arrived during the previous one. Nothing
// waits on a timer: a batch is simply whatever queued up meanwhile.
//
// The caller whose join finds no call in flight leads: it sends a batch, hands
// the results out, and passes the lead to the first caller still waiting.
type joinBatcher struct {
	mu    sync.Mutex
	queue []*joinCall
	busy  bool
}

type joinCall struct {
	joiner Joiner
	res    JoinResult
	err    error
	ready  chan struct{} // closed once: result delivered, or the lead passed on
	leads  bool
}

const (
	// maxJoinBatch bounds one store call, so that one slow batch never holds
	// an unbounded crowd.
	maxJoinBatch = 256
	// MaxJoinQueue bounds the joins waiting behind a call in flight: a few
	// batches' worth, which a store that answers clears in a few round trips.
	// Beyond it a store is not keeping up (or not answering), and a newcomer is
	// better told to come back at once than held: each held join is a
	// goroutine and a connection.
	MaxJoinQueue = 4 * maxJoinBatch
	// joinBatchTimeout bounds a batch's store call; followers taken into a
	// batch wait for it whatever their own request does, so it must end on
	// its own.
	joinBatchTimeout = 5 * time.Second
)

// join queues j's join and returns its result. send performs one batch.
func (b *joinBatcher) join(ctx context.Context, j Joiner, send func(context.Context, []Joiner) ([]JoinResult, error)) (JoinResult, error) {
	c := &joinCall{joiner: j, ready: make(chan struct{})}
	b.mu.Lock()
	if b.busy && len(b.queue) >= MaxJoinQueue {
		b.mu.Unlock()
		return JoinResult{}, ErrJoinQueueFull
	}
	b.queue = append(b.queue, c)
	if b.busy {
		b.mu.Unlock()
		if err := b.follow(ctx, c); err != nil || !c.leads {
			return c.res, err
		}
	} else {
		b.busy = true
		b.mu.Unlock()
	}

	b.mu.Lock()
	n := min(len(b.queue), maxJoinBatch)
	batch := append([]*joinCall(nil), b.queue[:n]...)
	b.queue = b.queue[n:]
	b.mu.Unlock()

	joiners := make([]Joiner, len(batch))
	for i, bc := range batch {
		joiners[i] = bc.joiner
	}
	sendCtx, cancel := context.WithTimeout(context.WithoutCancel(ctx), joinBatchTimeout)
	res, err := send(sendCtx, joiners)
	cancel()
	for i, bc := range batch {
		if err == nil {
			bc.res = res[i]
		}
		bc.err = err
		if bc != c {
			close(bc.ready)
		}
	}

	b.mu.Lock()
	if err != nil {
		// Those queued behind a failed batch would face the same store: they
		// are told at once rather than each waiting out another call.
		for _, q := range b.queue {
			q.err = err
			close(q.ready)
		}
		b.queue = nil
	}
	if len(b.queue) > 0 {
		next := b.queue[0]
		next.leads = true
		close(next.ready)
	} else {
		b.busy = false
	}
	b.mu.Unlock()
	return c.res, c.err
}

// follow waits until c's batch is done or c is handed the lead. A follower
// whose request goes away while it still only waits in the queue leaves it at
// once; one already taken into a batch, or handed the lead, sees it through,
// which takes at most joinBatchTimeout, since the others depend on it.
func (b *joinBatcher) follow(ctx context.Context, c *joinCall) error {
	select {
	case <-c.ready:
		return c.err
	case <-ctx.Done():
	}
	b.mu.Lock()
	if !c.leads {
		for i, q := range b.queue {
			if q == c {
				b.queue = append(b.queue[:i], b.queue[i+1:]...)
				b.mu.Unlock()
				return ctx.Err()
			}
		}
	}
	b.mu.Unlock()
	<-c.ready
	return c.err
}

// Join gives a new visitor a ticket, as Admit does for a newcomer with no
// account, no challenge asked and no join_limit weighed. When the room is open
// with a free slot and nobody waiting, the visitor is admitted at once and
// Visit.Pass is set.
func (r *Room) Join(ctx context.Context) (Visit, error) {
	return r.join(ctx, &arrival{})
}
