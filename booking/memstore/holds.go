package memstore

import (
	"context"
	"slices"
	"time"

	"github.com/foyer-dev/foyer/booking"
)

// Hold takes the requested places all at once, or none.
func (s *Store) Hold(_ context.Context, req booking.HoldRequest, now time.Time) (booking.Hold, error) {
	q, err := req.Validate()
	if err != nil {
		return booking.Hold{}, err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	e, ok := s.events[req.EventID]
	if !ok {
		return booking.Hold{}, errEventNotFound(req.EventID)
	}
	// The customer's own expired holds no longer count against the cap, even
	// if the sweeper has not been round yet.
	for _, h := range s.active {
		if h.EventID == e.ID && h.CustomerID == req.CustomerID && h.Status == booking.HoldActive && !now.Before(h.ExpiresAt) {
			s.expireLocked(e, h)
		}
	}
	if have := e.quotas[req.CustomerID]; have+q > req.MaxPerCustomer {
		return booking.Hold{}, booking.OverLimit(req.MaxPerCustomer, have)
	}
	h := &booking.Hold{
		ID: booking.NewID("hold"), EventID: e.ID, CustomerID: req.CustomerID, Quantity: q,
		Status: booking.HoldActive, CreatedAt: now.UTC(), ExpiresAt: now.Add(req.TTL).UTC(),
	}
	switch {
	case len(req.Seats) > 0:
		seats, err := s.seatsByID(e, req.Seats)
		if err != nil {
			return booking.Hold{}, err
		}
		var taken []string
		for _, st := range seats {
			if effectiveStatus(st, now) != booking.SeatAvailable {
				taken = append(taken, st.id)
			}
		}
		if len(taken) > 0 {
			return booking.Hold{}, booking.SeatsUnavailable(taken)
		}
		s.holdSeatsLocked(e, h, seats)
	case req.Section != "":
		sec, ok := e.Section(req.Section)
		if !ok {
			return booking.Hold{}, booking.Errorf(booking.KindNotFound, booking.CodeSectionNotFound, "no section %q", req.Section)
		}
		var cands []booking.Candidate
		for _, id := range e.seatOrder {
			st := e.seats[id]
			if st.section == sec.ID && effectiveStatus(st, now) == booking.SeatAvailable {
				cands = append(cands, booking.Candidate{ID: id, Row: st.row, Number: st.num})
			}
		}
		chosen := booking.ChooseBestAvailable(cands, q)
		if chosen == nil {
			return booking.Hold{}, booking.SoldOutIn("section "+sec.ID, q)
		}
		seats := make([]*seat, len(chosen))
		for i, c := range chosen {
			seats[i] = e.seats[c.ID]
		}
		s.holdSeatsLocked(e, h, seats)
	default:
		z, ok := e.zones[req.Zone]
		if !ok {
			return booking.Hold{}, booking.Errorf(booking.KindNotFound, booking.CodeZoneNotFound, "no zone %q", req.Zone)
		}
		if z.capacity-z.held-z.sold < q {
			s.reclaimZoneLocked(e, req.Zone, now)
		}
		if z.capacity-z.held-z.sold < q {
			return booking.Hold{}, booking.SoldOutIn("zone "+req.Zone, q)
		}
		z.held += q
		h.Zone = req.Zone
		zs, _ := e.Zone(req.Zone)
		h.Amount = zs.Price * booking.Money(q)
	}
	e.quotas[req.CustomerID] += q
	s.holds[h.ID] = h
	s.active[h.ID] = h
	return cloneHold(h), nil
}

func (s *Store) seatsByID(e *event, ids []string) ([]*seat, error) {
	seats := make([]*seat, 0, len(ids))
	var missing []string
	for _, id := range ids {
		st, ok := e.seats[id]
		if !ok {
			missing = append(missing, id)
			continue
		}
		seats = append(seats, st)
	}
	if len(missing) > 0 {
		return nil, &booking.Error{Kind: booking.KindNotFound, Code: booking.CodeSeatNotFound, Message: "no such seats in this event", Seats: missing}
	}
	return seats, nil
}

func (s *Store) holdSeatsLocked(e *event, h *booking.Hold, seats []*seat) {
	for _, st := range seats {
		st.status, st.holdID, st.heldUntil = booking.SeatHeld, h.ID, h.ExpiresAt
		sec, _ := e.Section(st.section)
		h.Amount += sec.Price
		h.Seats = append(h.Seats, st.id)
	}
	slices.Sort(h.Seats)
}

// reclaimZoneLocked expires the zone's lapsed holds so their places count as
// free; the zone's counters otherwise only shrink when the sweeper runs.
func (s *Store) reclaimZoneLocked(e *event, zone string, now time.Time) {
	for _, h := range s.active {
		if h.EventID == e.ID && h.Zone == zone && h.Status == booking.HoldActive && !now.Before(h.ExpiresAt) {
			s.expireLocked(e, h)
		}
	}
}

// expireLocked returns an active hold's places and marks it expired.
func (s *Store) expireLocked(e *event, h *booking.Hold) {
	s.returnPlacesLocked(e, h)
	s.setStatusLocked(h, booking.HoldExpired)
}

// setStatusLocked changes a hold's status and keeps the index of active
// holds, which the cap check, zone reclaim and sweeper walk instead of every
// hold ever made.
func (s *Store) setStatusLocked(h *booking.Hold, status booking.HoldStatus) {
	h.Status = status
	if status == booking.HoldActive {
		s.active[h.ID] = h
	} else {
		delete(s.active, h.ID)
	}
}

// returnPlacesLocked frees whatever the hold still holds and uncounts it from
// the customer's cap. Seats another hold has taken since are left alone.
func (s *Store) returnPlacesLocked(e *event, h *booking.Hold) {
	for _, id := range h.Seats {
		st := e.seats[id]
		if st.status == booking.SeatHeld && st.holdID == h.ID {
			st.status, st.holdID, st.heldUntil = booking.SeatAvailable, "", time.Time{}
		}
	}
	if h.Zone != "" {
		e.zones[h.Zone].held -= h.Quantity
	}
	e.quotas[h.CustomerID] -= h.Quantity
	if e.quotas[h.CustomerID] == 0 {
		delete(e.quotas, h.CustomerID)
	}
}

// GetHold returns the customer's hold.
func (s *Store) GetHold(_ context.Context, id, customerID string) (booking.Hold, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	h, ok := s.holds[id]
	if !ok || h.CustomerID != customerID {
		return booking.Hold{}, errHoldNotFound(id)
	}
	return cloneHold(h), nil
}

// ReleaseHold gives an active hold's places back.
func (s *Store) ReleaseHold(_ context.Context, id, customerID string, now time.Time) (booking.Hold, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	h, ok := s.holds[id]
	if !ok || h.CustomerID != customerID {
		return booking.Hold{}, errHoldNotFound(id)
	}
	switch h.Status {
	case booking.HoldOrdered:
		return booking.Hold{}, booking.Errorf(booking.KindConflict, booking.CodeHoldNotActive, "hold %s is paid for", id)
	case booking.HoldActive:
		e := s.events[h.EventID]
		if !now.Before(h.ExpiresAt) {
			s.expireLocked(e, h)
			break
		}
		s.returnPlacesLocked(e, h)
		s.setStatusLocked(h, booking.HoldReleased)
	}
	return cloneHold(h), nil
}

// SweepExpiredHolds expires up to limit lapsed holds.
func (s *Store) SweepExpiredHolds(_ context.Context, now time.Time, limit int) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return sweep(s.active, limit,
		func(h *booking.Hold) bool { return h.Status == booking.HoldActive && !now.Before(h.ExpiresAt) },
		func(_ string, h *booking.Hold) { s.expireLocked(s.events[h.EventID], h) }), nil
}

func cloneHold(h *booking.Hold) booking.Hold {
	c := *h
	c.Seats = slices.Clone(h.Seats)
	return c
}

func errHoldNotFound(id string) error {
	return booking.Errorf(booking.KindNotFound, booking.CodeHoldNotFound, "no hold %q", id)
}
