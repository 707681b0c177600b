package waitingroom

import (
	"context"
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
	visitor string
	res     JoinResult
	err     error
	ready   chan struct{} // closed once: result delivered, or the lead passed on
	leads   bool
}

const (
	// maxJoinBatch bounds one store call, so that one slow batch never holds
	// an unbounded crowd.
	maxJoinBatch = 256
	// joinBatchTimeout bounds a batch's store call; followers wait for it
	// whatever their own request does, so it must end on its own.
	joinBatchTimeout = 5 * time.Second
)

// join queues visitor's join and returns its result. send performs one batch.
func (b *joinBatcher) join(ctx context.Context, visitor string, send func(context.Context, []string) ([]JoinResult, error)) (JoinResult, error) {
	c := &joinCall{visitor: visitor, ready: make(chan struct{})}
	b.mu.Lock()
	b.queue = append(b.queue, c)
	if b.busy {
		b.mu.Unlock()
		// A follower waits even if its own request goes away: it may be
		// handed the lead, and the queue behind it needs a leader.
		<-c.ready
		if !c.leads {
			return c.res, c.err
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

	visitors := make([]string, len(batch))
	for i, bc := range batch {
		visitors[i] = bc.visitor
	}
	sendCtx, cancel := context.WithTimeout(context.WithoutCancel(ctx), joinBatchTimeout)
	res, err := send(sendCtx, visitors)
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
