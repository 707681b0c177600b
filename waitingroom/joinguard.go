package waitingroom

import (
	"context"
	"errors"
	"fmt"
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
