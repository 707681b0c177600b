package booking_test

import (
	"context"
	"fmt"
	"sync/atomic"
	"testing"
	"time"

	"github.com/foyer-dev/foyer/booking"
	"github.com/foyer-dev/foyer/booking/memstore"
)

// stallingStore holds up reads of one order until released, as a slow
// database holds up one delivery.
type stallingStore struct {
	booking.Store
	stall   atomic.Value // order id
	release chan struct{}
}

func (s *stallingStore) Order(ctx context.Context, id, customerID string) (booking.Order, error) {
	if v, _ := s.stall.Load().(string); v == id {
		select {
		case <-s.release:
		case <-ctx.Done():
			return booking.Order{}, ctx.Err()
		}
	}
	return s.Store.Order(ctx, id, customerID)
}

// TestDeliveryLoopsSideBySide: while one order's delivery waits on the
// store, the workers deliver the next order's tickets. With one delivery
// loop per process, every order queued behind the slow one.
func TestDeliveryLoopsSideBySide(t *testing.T) {
	store := &stallingStore{Store: memstore.New(), release: make(chan struct{})}
	h := newHarness(t, store)
	id := h.createEvent(smallVenue())
	var orders []string
	for i, seat := range []string{"A-1-1", "A-1-2"} {
		var hold holdJSON
		h.req("POST", fmt.Sprintf("/api/events/%d/holds", id), fan(i), map[string]any{"seats": []string{seat}}).want(t, 201).decode(t, &hold)
		var co checkoutJSON
		h.req("POST", "/api/holds/"+hold.ID+"/checkout", fan(i), nil).want(t, 200).decode(t, &co)
		h.payOnPage(co.Payment.PayURL)
		orders = append(orders, co.Order.ID)
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	h.fake.DeliverDue(ctx)
	if n, err := h.svc.RelayOutbox(ctx, h.stream); err != nil || n != 2 {
		t.Fatalf("relay = %d, %v", n, err)
	}
	// The first order published is the one whose delivery stalls.
	store.stall.Store(orders[0])
	h.svc.RunWorkers(ctx, h.stream, "test")
	h.waitDelivered(ctx, orders[1:], 10*time.Second)
	close(store.release)
	h.waitDelivered(ctx, orders[:1], 10*time.Second)
	h.checkInvariants()
}
