package memstore

import (
	"context"
	"time"

	"github.com/foyer-dev/foyer/booking"
)

var _ booking.StatsReader = (*Store)(nil)

// Stats counts what the store holds, under its lock.
func (s *Store) Stats(_ context.Context, now time.Time) (booking.Stats, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	st := booking.Stats{
		Orders:             map[booking.OrderStatus]int{},
		Payments:           map[booking.PaymentStatus]int{},
		Deliveries:         len(s.deliveries),
		IdempotencyRecords: len(s.idempotency),
	}
	for _, h := range s.active {
		if h.ExpiresAt.After(now) {
			st.ActiveHolds++
			st.HeldPlaces += h.Quantity
		}
	}
	for _, o := range s.orders {
		st.Orders[o.Status]++
		st.Payments[o.Payment.Status]++
		live := liveTickets(o)
		st.Tickets += live
		if o.Status == booking.OrderPaid && live == 0 {
			st.PaidWithoutTickets++
		}
	}
	for _, r := range s.outbox {
		if !r.published {
			if st.OutboxPending == 0 {
				st.OutboxOldest = r.msg.CreatedAt
			}
			st.OutboxPending++
		}
	}
	return st, nil
}
