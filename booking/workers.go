package booking

import (
	"context"
	"encoding/json"
	"fmt"
	"time"

	"github.com/foyer-dev/foyer/booking/stream"
	"github.com/foyer-dev/foyer/internal/loop"
)

// Background work. Each Run* loop stops when ctx ends; each step is also
// exported so tests run it once, deterministically, with the injected clock.

// Sweep returns the places of holds that have expired.
func (s *Service) Sweep(ctx context.Context) (int, error) {
	return s.cfg.Store.SweepExpiredHolds(ctx, s.cfg.Clock.Now(), 1000)
}

// RelayOutbox publishes pending outbox messages to the stream, then marks
// them published. A crash between the two republishes them, and the stream
// deduplicates by outbox id.
func (s *Service) RelayOutbox(ctx context.Context, st stream.Stream) (int, error) {
	msgs, err := s.cfg.Store.PendingOutbox(ctx, 100)
	if err != nil || len(msgs) == 0 {
		return 0, err
	}
	ids := make([]int64, 0, len(msgs))
	for _, m := range msgs {
		if _, err := st.Publish(ctx, stream.Message{ID: m.ID, Topic: m.Topic, Payload: m.Payload}); err != nil {
			break // publish in order: stop at the first failure, retry later
		}
		ids = append(ids, m.ID)
	}
	if len(ids) == 0 {
		return 0, fmt.Errorf("publishing outbox: nothing published")
	}
	return len(ids), s.cfg.Store.MarkPublished(ctx, ids, s.cfg.Clock.Now())
}

// RepublishAfter is how long a published message may wait for its consumer
// before the relay publishes it again. The stream deduplicates by outbox id,
// so this is a no-op while the stream still holds the message; it matters
// when the stream lost it (Redis restarted empty).
const RepublishAfter = 5 * time.Second

// RepublishUndelivered publishes again the messages published more than
// RepublishAfter ago that no consumer has marked delivered.
func (s *Service) RepublishUndelivered(ctx context.Context, st stream.Stream) (int, error) {
	msgs, err := s.cfg.Store.UndeliveredOutbox(ctx, s.cfg.Clock.Now().Add(-RepublishAfter), 100)
	if err != nil {
		return 0, err
	}
	n := 0
	for _, m := range msgs {
		appended, err := st.Publish(ctx, stream.Message{ID: m.ID, Topic: m.Topic, Payload: m.Payload})
		if err != nil {
			return n, fmt.Errorf("republishing outbox: %w", err)
		}
		if appended {
			n++
		}
	}
	if n > 0 {
		s.cfg.Logger.Info("undelivered outbox messages published again", "messages", n)
	}
	return n, nil
}

// DeliveriesRecorder is a store that records an order's deliveries at once,
// each kept only if the ticket had none, as RecordDelivery does one by one.
// On a store across the network, one round trip per ticket made the
// delivery loops fall behind a busy sale.
type DeliveriesRecorder interface {
	RecordDeliveries(ctx context.Context, ds []Delivery) error
}

// deliveryConsumers is how many delivery loops a process runs.
const deliveryConsumers = 4

// DeliveryGroup is the stream consumer group of the ticket delivery worker.
const DeliveryGroup = "ticket-delivery"

// DeliverTickets handles one stream message: for an order.paid message, each
// ticket of the order gets its signed code, recorded once. Handling the same
// message twice changes nothing.
func (s *Service) DeliverTickets(ctx context.Context, m stream.Message) error {
	if err := s.deliverTickets(ctx, m); err != nil {
		return err
	}
	// Recorded after the work, so a crash in between delivers again (which
	// changes nothing) rather than never.
	return s.cfg.Store.MarkDelivered(ctx, []int64{m.ID}, s.cfg.Clock.Now())
}

func (s *Service) deliverTickets(ctx context.Context, m stream.Message) error {
	if m.Topic != TopicOrderPaid {
		return nil
	}
	var p OrderPaidPayload
	if err := json.Unmarshal(m.Payload, &p); err != nil {
		s.cfg.Logger.Error("undecodable outbox message dropped", "id", m.ID, "error", err)
		return nil
	}
	o, err := s.cfg.Store.Order(ctx, p.OrderID, "")
	if err != nil {
		return err
	}
	var ds []Delivery
	for _, t := range o.Tickets {
		// A ticket a refund cancelled before it was delivered is never
		// delivered.
		if t.Delivery == nil && t.Live() {
			ds = append(ds, Delivery{TicketID: t.ID, Code: TicketCode(s.cfg.TicketSecret, t), DeliveredAt: s.cfg.Clock.Now()})
		}
	}
	if many, ok := s.cfg.Store.(DeliveriesRecorder); ok && len(ds) > 1 {
		if err := many.RecordDeliveries(ctx, ds); err != nil {
			return err
		}
		ds = nil
	}
	for _, d := range ds {
		if _, err := s.cfg.Store.RecordDelivery(ctx, d); err != nil {
			return err
		}
	}
	s.cfg.Logger.Info("tickets delivered", "order", o.ID, "tickets", len(o.Tickets))
	return nil
}

// RunWorkers runs the sweeper, the outbox relay and republisher, the ticket
// delivery worker, the payment reconciler and the refund retrier until ctx
// ends. Their store calls are background work (Background): no fan waits on
// them, and they must not take the connections the fans' requests need.
func (s *Service) RunWorkers(ctx context.Context, st stream.Stream, consumer string) {
	ctx = Background(ctx)
	go every(ctx, time.Second, func() {
		if n, err := s.Sweep(ctx); err != nil {
			s.cfg.Logger.Warn("sweeper", "error", err)
		} else if n > 0 {
			s.cfg.Logger.Info("expired holds returned", "holds", n)
		}
	})
	go every(ctx, 200*time.Millisecond, func() {
		if _, err := s.RelayOutbox(ctx, st); err != nil {
			s.cfg.Logger.Warn("outbox relay", "error", err)
		}
	})
	go every(ctx, 2*time.Second, func() {
		if _, err := s.RepublishUndelivered(ctx, st); err != nil {
			s.cfg.Logger.Warn("outbox republisher", "error", err)
		}
	})
	go every(ctx, min(s.cfg.ReconcileAfter/2, 10*time.Second), func() {
		if _, err := s.Reconcile(ctx); err != nil {
			s.cfg.Logger.Warn("reconciler", "error", err)
		}
	})
	go every(ctx, 10*time.Second, func() {
		if _, err := s.RetryRefunds(ctx); err != nil {
			s.cfg.Logger.Warn("refund retrier", "error", err)
		}
	})
	// Several consumers of the group per process: each delivery waits on
	// the store a few times, and one at a time fell behind a busy sale on
	// PostgreSQL (the fans' sessions, revoked only once their tickets are
	// delivered, then held the room's places). The group hands each message
	// to one of them.
	for i := range deliveryConsumers {
		name := fmt.Sprintf("%s/%d", consumer, i)
		go func() {
			for ctx.Err() == nil {
				if err := st.Consume(ctx, DeliveryGroup, name, s.DeliverTickets); err != nil && ctx.Err() == nil {
					s.cfg.Logger.Warn("ticket delivery", "error", err)
					time.Sleep(time.Second)
				}
			}
		}()
	}
}

func every(ctx context.Context, d time.Duration, fn func()) {
	loop.Every(ctx, d, func(context.Context) { fn() })
}
