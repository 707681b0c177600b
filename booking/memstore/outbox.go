package memstore

import (
	"context"
	"slices"
	"time"

	"github.com/foyer-dev/foyer/booking"
)

// PendingOutbox returns unpublished messages, oldest first.
func (s *Store) PendingOutbox(_ context.Context, limit int) ([]booking.OutboxMessage, error) {
	return s.outboxWhere(limit, func(r *outboxRow) bool { return !r.published }), nil
}

// MarkPublished flags messages as relayed.
func (s *Store) MarkPublished(_ context.Context, ids []int64, now time.Time) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, r := range s.outbox {
		if !r.published && slices.Contains(ids, r.msg.ID) {
			r.published, r.publishedAt = true, now
		}
	}
	return nil
}

// UndeliveredOutbox returns published messages no consumer has handled.
func (s *Store) UndeliveredOutbox(_ context.Context, publishedBefore time.Time, limit int) ([]booking.OutboxMessage, error) {
	return s.outboxWhere(limit, func(r *outboxRow) bool {
		return r.published && !r.delivered && r.publishedAt.Before(publishedBefore)
	}), nil
}

// outboxWhere returns copies of the first limit messages, oldest first, that
// keep says to: a caller may change what it gets without touching the store.
func (s *Store) outboxWhere(limit int, keep func(*outboxRow) bool) []booking.OutboxMessage {
	s.mu.Lock()
	defer s.mu.Unlock()
	var out []booking.OutboxMessage
	for _, r := range s.outbox {
		if len(out) >= limit {
			break
		}
		if keep(r) {
			m := r.msg
			m.Payload = slices.Clone(m.Payload)
			out = append(out, m)
		}
	}
	return out
}

// MarkDelivered flags messages as handled by their consumer.
func (s *Store) MarkDelivered(_ context.Context, ids []int64, _ time.Time) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, r := range s.outbox {
		if slices.Contains(ids, r.msg.ID) {
			r.delivered = true
		}
	}
	return nil
}

// RecordDelivery keeps the first delivery of each ticket.
func (s *Store) RecordDelivery(_ context.Context, d booking.Delivery) (bool, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if !s.tickets[d.TicketID] {
		return false, booking.Errorf(booking.KindNotFound, booking.CodeNotFound, "no ticket %q", d.TicketID)
	}
	if _, ok := s.deliveries[d.TicketID]; ok {
		return false, nil
	}
	d.DeliveredAt = d.DeliveredAt.UTC()
	s.deliveries[d.TicketID] = d
	return true, nil
}
