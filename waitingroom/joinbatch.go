package waitingroom

import (
	"context"
	"errors"
	"sync"
	"time"
)

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

// ErrJoinQueueFull is returned, wrapped in ErrStoreUnavailable by Room.Join,
// when MaxJoinQueue joins already wait for the store.
var ErrJoinQueueFull = errors.New("too many joins waiting for the store")

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
