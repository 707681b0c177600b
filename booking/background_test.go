package booking_test

import (
	"context"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/foyer-dev/foyer/booking"
	"github.com/foyer-dev/foyer/booking/memstore"
	"github.com/foyer-dev/foyer/booking/stream"
)

// backgroundRecorder is a store that notes, for a few of its calls, whether
// their context was marked as background work: a store across the network
// serves such calls from connections of their own.
type backgroundRecorder struct {
	booking.Store
	mu    sync.Mutex
	calls map[string][]bool
	seen  chan string
}

func newBackgroundRecorder() *backgroundRecorder {
	return &backgroundRecorder{Store: memstore.New(), calls: map[string][]bool{}, seen: make(chan string, 64)}
}

func (r *backgroundRecorder) note(ctx context.Context, call string) {
	r.mu.Lock()
	r.calls[call] = append(r.calls[call], booking.IsBackground(ctx))
	r.mu.Unlock()
	select {
	case r.seen <- call:
	default:
	}
}

func (r *backgroundRecorder) marks(call string) []bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]bool(nil), r.calls[call]...)
}

func (r *backgroundRecorder) Hold(ctx context.Context, req booking.HoldRequest, now time.Time) (booking.Hold, error) {
	r.note(ctx, "Hold")
	return r.Store.Hold(ctx, req, now)
}

func (r *backgroundRecorder) ConfirmPayment(ctx context.Context, c booking.PaymentConfirmation, now time.Time) (booking.Order, error) {
	r.note(ctx, "ConfirmPayment")
	return r.Store.ConfirmPayment(ctx, c, now)
}

func (r *backgroundRecorder) PendingOutbox(ctx context.Context, limit int) ([]booking.OutboxMessage, error) {
	r.note(ctx, "PendingOutbox")
	return r.Store.PendingOutbox(ctx, limit)
}

func (r *backgroundRecorder) PruneIdempotency(ctx context.Context, cutoff time.Time, limit int) (int, error) {
	r.note(ctx, "PruneIdempotency")
	return r.Store.PruneIdempotency(ctx, cutoff, limit)
}

func TestBackgroundMark(t *testing.T) {
	ctx := context.Background()
	if booking.IsBackground(ctx) {
		t.Fatal("a plain context is background")
	}
	bg := booking.Background(ctx)
	if !booking.IsBackground(bg) || booking.Background(bg) != bg {
		t.Fatal("Background: not marked, or marked twice")
	}
	derived, cancel := context.WithTimeout(bg, time.Minute)
	defer cancel()
	if !booking.IsBackground(derived) {
		t.Fatal("a context derived from a background one lost the mark")
	}
}

// TestBackgroundWorkIsMarked: a fan's hold is the fans' work; the payment
// webhook, the workers' loops and the idempotency pruner are background work.
func TestBackgroundWorkIsMarked(t *testing.T) {
	rec := newBackgroundRecorder()
	h := newHarness(t, rec)
	id := h.createEvent(smallVenue())
	var hold holdJSON
	h.req("POST", fmt.Sprintf("/api/events/%d/holds", id), "fan", map[string]any{"seats": []string{"A-1-2"}}).want(t, 201).decode(t, &hold)
	var co checkoutJSON
	h.req("POST", "/api/holds/"+hold.ID+"/checkout", "fan", nil).want(t, 200).decode(t, &co)
	h.payOnPage(co.Payment.PayURL)
	if a, r := h.fake.DeliverDue(context.Background()); a == 0 || r != 0 {
		t.Fatalf("webhooks: %d accepted, %d refused", a, r)
	}
	if got := rec.marks("Hold"); len(got) != 1 || got[0] {
		t.Errorf("the fan's hold: background %v; want [false]", got)
	}
	confirmations := rec.marks("ConfirmPayment")
	if len(confirmations) == 0 {
		t.Fatal("the webhook confirmed nothing")
	}
	for _, bg := range confirmations {
		if !bg {
			t.Errorf("the webhook's confirmation was not marked as background work")
		}
	}

	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	h.svc.RunWorkers(ctx, stream.NewMemory(), "test")
	go h.svc.RunIdempotencyPruner(ctx, time.Millisecond)
	for want := map[string]bool{"PendingOutbox": true, "PruneIdempotency": true}; len(want) > 0; {
		call := <-rec.seen
		delete(want, call)
	}
	cancel()
	for _, call := range []string{"PendingOutbox", "PruneIdempotency"} {
		for _, bg := range rec.marks(call) {
			if !bg {
				t.Errorf("%s from a background loop was not marked", call)
			}
		}
	}
}
