package booking_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/foyer-dev/foyer/booking"
	"github.com/foyer-dev/foyer/booking/pgstore/pgtest"
	"github.com/foyer-dev/foyer/booking/stream"
	"github.com/foyer-dev/foyer/internal/redistest"
)

// TestOutboxThroughRedis runs the production path for paid orders: the
// PostgreSQL outbox, relayed to a Redis Stream (twice, as after a crash
// between publishing and marking), consumed by the ticket delivery worker.
func TestOutboxThroughRedis(t *testing.T) {
	client := redistest.Shared(t)
	// The stream's keys share one hash tag, as a Cluster needs.
	prefix := redistest.Prefix(t, client) + ":{stream}:"
	h := newHarness(t, openPG(t, pgtest.NewDatabase(t)))
	rs := stream.NewRedis(client, prefix)
	rs.Block = 50 * time.Millisecond
	id := h.createEvent(smallVenue())
	var orders []string
	for i, seat := range []string{"A-1-1", "A-1-2", "A-1-3"} {
		var hold holdJSON
		h.req("POST", fmt.Sprintf("/api/events/%d/holds", id), fan(i), map[string]any{"seats": []string{seat}}).want(t, 201).decode(t, &hold)
		var co checkoutJSON
		h.req("POST", "/api/holds/"+hold.ID+"/checkout", fan(i), nil).want(t, 200).decode(t, &co)
		h.payOnPage(co.Payment.PayURL)
		orders = append(orders, co.Order.ID)
	}
	ctx := context.Background()
	h.fake.DeliverDue(ctx)
	msgs, err := h.store.PendingOutbox(ctx, 10)
	if err != nil || len(msgs) != 3 {
		t.Fatalf("outbox = %d, %v", len(msgs), err)
	}
	// A relay that died after publishing: the stream already has one message.
	if _, err := rs.Publish(ctx, stream.Message{ID: msgs[0].ID, Topic: msgs[0].Topic, Payload: msgs[0].Payload}); err != nil {
		t.Fatal(err)
	}
	if n, err := h.svc.RelayOutbox(ctx, rs); err != nil || n != 3 {
		t.Fatalf("relay = %d, %v", n, err)
	}
	if n, _ := h.svc.RelayOutbox(ctx, rs); n != 0 {
		t.Fatalf("second relay published %d", n)
	}
	if n, err := client.XLen(ctx, prefix+"stream").Result(); err != nil || n != 3 {
		t.Fatalf("stream length = %d, %v; want 3", n, err)
	}
	cctx, cancel := context.WithCancel(ctx)
	defer cancel()
	go func() { _ = rs.Consume(cctx, booking.DeliveryGroup, "worker-1", h.svc.DeliverTickets) }()
	h.waitDelivered(ctx, orders, 10*time.Second)
	h.checkInvariants()
}
