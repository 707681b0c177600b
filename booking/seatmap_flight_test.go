package booking_test

import (
	"context"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/foyer-dev/foyer/booking"
)

// countingStore counts the reads a seat map costs, and holds each inventory
// read until released, so that a crowd of requests is in flight together.
type countingStore struct {
	booking.Store
	events, inventories atomic.Int64
	gate                chan struct{}
}

func (c *countingStore) Event(ctx context.Context, id int64) (booking.Event, error) {
	c.events.Add(1)
	return c.Store.Event(ctx, id)
}

func (c *countingStore) Inventory(ctx context.Context, id int64, now time.Time) ([]booking.SeatState, []booking.ZoneState, error) {
	c.inventories.Add(1)
	<-c.gate
	return c.Store.Inventory(ctx, id, now)
}

// TestSeatMapRebuiltOnceForACrowd: when the cached map expires under a crowd
// of shoppers, one request reads the inventory and the others wait for it;
// the venue is read once for the life of the service. Both backends.
func TestSeatMapRebuiltOnceForACrowd(t *testing.T) {
	backends(t, func(t *testing.T, newStore func(t *testing.T) booking.Store) {
		h := newHarness(t, newStore(t))
		id := h.createEvent(smallVenue())
		cs := &countingStore{Store: h.store, gate: make(chan struct{})}
		svc := booking.NewService(booking.Config{Store: cs, Clock: h.clock})
		for round := 1; round <= 3; round++ {
			var wg sync.WaitGroup
			errs := make(chan error, 64)
			for range 64 {
				wg.Add(1)
				go func() {
					defer wg.Done()
					m, err := svc.SeatMap(context.Background(), id)
					if err == nil && m.Capacity != 16 {
						t.Errorf("capacity %d, want 16", m.Capacity)
					}
					errs <- err
				}()
			}
			// Let the crowd pile up behind the first read, then release it.
			for cs.inventories.Load() < int64(round) {
				time.Sleep(time.Millisecond)
			}
			time.Sleep(20 * time.Millisecond)
			close(cs.gate)
			wg.Wait()
			close(errs)
			for err := range errs {
				if err != nil {
					t.Fatal(err)
				}
			}
			if n := cs.inventories.Load(); n != int64(round) {
				t.Fatalf("round %d: %d inventory reads for 64 concurrent requests, want one per expiry", round, n)
			}
			cs.gate = make(chan struct{})
			h.clock.Advance(2 * time.Second) // the map expires
		}
		if n := cs.events.Load(); n != 1 {
			t.Fatalf("the venue was read %d times, want once", n)
		}
	})
}
