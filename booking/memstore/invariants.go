package memstore

import (
	"context"
	"fmt"

	"github.com/foyer-dev/foyer/booking"
)

// CheckInvariants walks the whole state. It reads what is stored rather than
// trusting the counters, so it can catch a counter that drifted.
func (s *Store) CheckInvariants(context.Context) (booking.InvariantReport, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	var r booking.InvariantReport
	bad := func(format string, args ...any) { r.Violations = append(r.Violations, fmt.Sprintf(format, args...)) }
	ticketsPerSeat := map[int64]map[string]int{}
	zoneTickets := map[int64]map[string]int{}
	for _, o := range s.orders {
		live := liveTickets(o)
		if o.Status == booking.OrderPaid && live == 0 {
			bad("order %s is paid and has no ticket", o.ID)
		}
		if o.Status != booking.OrderPaid && live != 0 {
			bad("order %s is %s and has %d live tickets", o.ID, o.Status, live)
		}
		for _, t := range o.Tickets {
			if !t.Live() {
				continue // its place is for sale again
			}
			r.Tickets++
			if t.Seat != "" {
				if ticketsPerSeat[t.EventID] == nil {
					ticketsPerSeat[t.EventID] = map[string]int{}
				}
				ticketsPerSeat[t.EventID][t.Seat]++
			} else {
				if zoneTickets[t.EventID] == nil {
					zoneTickets[t.EventID] = map[string]int{}
				}
				zoneTickets[t.EventID][t.Zone]++
			}
		}
	}
	for _, e := range s.events {
		r.Events++
		quota := map[string]int{}
		for _, h := range s.holds {
			if h.EventID == e.ID && (h.Status == booking.HoldActive || h.Status == booking.HoldOrdered) {
				quota[h.CustomerID] += h.Quantity
			}
		}
		for c, n := range quota {
			if e.quotas[c] != n {
				bad("event %d: customer count %d, holds and orders say %d", e.ID, e.quotas[c], n)
			}
		}
		for id, st := range e.seats {
			r.Seats++
			n := ticketsPerSeat[e.ID][id]
			switch {
			case n > 1:
				bad("event %d: seat %s has %d live tickets", e.ID, id, n)
			case st.status == booking.SeatSold && n != 1:
				bad("event %d: seat %s is sold with %d tickets", e.ID, id, n)
			case st.status != booking.SeatSold && n != 0:
				bad("event %d: seat %s is %s but has a ticket", e.ID, id, st.status)
			}
		}
		for id, z := range e.zones {
			if z.held < 0 || z.sold < 0 || z.held+z.sold > z.capacity {
				bad("event %d: zone %s has held %d + sold %d over capacity %d", e.ID, id, z.held, z.sold, z.capacity)
			}
			if n := zoneTickets[e.ID][id]; n != z.sold {
				bad("event %d: zone %s sold %d but has %d tickets", e.ID, id, z.sold, n)
			}
		}
	}
	return r, nil
}

// liveTickets counts the order's tickets that were not cancelled.
func liveTickets(o *booking.Order) int {
	n := 0
	for _, t := range o.Tickets {
		if t.Live() {
			n++
		}
	}
	return n
}
