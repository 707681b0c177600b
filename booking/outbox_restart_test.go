package booking_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/foyer-dev/foyer/booking"
	"github.com/foyer-dev/foyer/booking/pgstore/pgtest"
	"github.com/foyer-dev/foyer/booking/stream"
	"github.com/foyer-dev/foyer/internal/redistest"
)

// TestFaultRedisLosesPublishedMessages publishes paid orders to a private
// redis-server, kills it before any consumer read them and starts it empty:
// the outbox knows they were never delivered, publishes them again, and the
// tickets are delivered.
func TestFaultRedisLosesPublishedMessages(t *testing.T) {
	srv := redistest.StartServer(t, nil)
	client := redis.NewClient(&redis.Options{Addr: srv.Addr, DialTimeout: time.Second})
	defer client.Close()
	h := newHarness(t, openPG(t, pgtest.NewDatabase(t)))
	rs := stream.NewRedis(client, "")
	rs.Block = 50 * time.Millisecond
	ctx := context.Background()
	id := h.createEvent(smallVenue())
	var orders []string
	for i := range 2 {
		var hold holdJSON
		h.req("POST", fmt.Sprintf("/api/events/%d/holds", id), fan(i), map[string]any{"section": "A", "quantity": 1}).want(t, 201).decode(t, &hold)
		var co checkoutJSON
		h.req("POST", "/api/holds/"+hold.ID+"/checkout", fan(i), nil).want(t, 200).decode(t, &co)
		h.payOnPage(co.Payment.PayURL)
		orders = append(orders, co.Order.ID)
	}
	h.fake.DeliverDue(ctx)
	if n, err := h.svc.RelayOutbox(ctx, rs); n != 2 || err != nil {
		t.Fatalf("relay = %d, %v", n, err)
	}
	if n, _ := h.svc.RepublishUndelivered(ctx, rs); n != 0 {
		t.Fatalf("republished %d messages the stream still holds", n)
	}

	srv.Stop(t)
	srv.Restart(t)
	cctx, cancel := context.WithCancel(ctx)
	defer cancel()
	go func() { _ = rs.Consume(cctx, booking.DeliveryGroup, "worker-1", h.svc.DeliverTickets) }()
	if n, _ := h.svc.RepublishUndelivered(ctx, rs); n != 0 {
		t.Fatalf("republished %d messages before RepublishAfter", n)
	}
	h.clock.Advance(booking.RepublishAfter + time.Second)
	n, err := h.svc.RepublishUndelivered(ctx, rs)
	if n != 2 || err != nil {
		t.Fatalf("republish after the loss = %d, %v; want 2", n, err)
	}
	h.waitDelivered(ctx, orders, 10*time.Second)
	// The worker marks a message delivered just after it delivers it.
	for deadline := time.Now().Add(5 * time.Second); time.Now().Before(deadline); {
		if left, _ := h.store.UndeliveredOutbox(ctx, h.clock.Now().Add(time.Hour), 10); len(left) == 0 {
			break
		}
		time.Sleep(20 * time.Millisecond)
	}
	if left, _ := h.store.UndeliveredOutbox(ctx, h.clock.Now().Add(time.Hour), 10); len(left) != 0 {
		t.Fatalf("%d messages still undelivered after delivery", len(left))
	}
	h.checkInvariants()
}
