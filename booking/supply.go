package booking

import (
	"context"
	"net/http"
	"strconv"
)

// SupplyHeader tells the gateway how many places are left to sell for the
// event (docs/supply.md, docs/booking.md): the seats and standing places
// neither sold nor held. The booking service sends it on its answers to
// admitted fans that change the inventory or show its effect: a hold (made,
// or refused for want of places), a release, a checkout and an order (whose
// refund, made in the background, shows on the next answer).
const SupplyHeader = "X-Waiting-Room-Supply"

// PlacesLeft counts the event's places neither sold nor held now, read from
// the store rather than the cached seat map, so that the count follows the
// operation it answers. It refreshes the cached map on the way.
func (s *Service) PlacesLeft(ctx context.Context, eventID int64) (int, error) {
	e, err := s.event(ctx, eventID)
	if err != nil {
		return 0, err
	}
	now := s.cfg.Clock.Now()
	seats, zones, err := s.cfg.Store.Inventory(ctx, eventID, now)
	if err != nil {
		return 0, err
	}
	m := BuildSeatMap(e, seats, zones, now)
	s.mu.Lock()
	if old, ok := s.seatMaps[eventID]; !ok || !m.GeneratedAt.Before(old.GeneratedAt) {
		s.seatMaps[eventID] = m
	}
	if m.Available == 0 && m.Capacity > 0 {
		if s.soldOut == nil {
			s.soldOut = map[int64]bool{}
		}
		s.soldOut[eventID] = true
	}
	s.mu.Unlock()
	return m.Available, nil
}

// SoldOutOnce reports whether the event had no place left (neither sold nor
// held) on any count this service made: every free place since came back,
// from an expired or released hold. Kept by this process: a restarted
// service learns it again at the next count of 0.
func (s *Service) SoldOutOnce(eventID int64) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.soldOut[eventID]
}

// reportSupply sets the supply header on an answer about the event. A count
// that cannot be read is left out (the gateway keeps the last one) and
// logged: the fan's answer does not fail for it.
func (a *API) reportSupply(ctx context.Context, w http.ResponseWriter, eventID int64) {
	n, err := a.svc.PlacesLeft(ctx, eventID)
	if err != nil {
		a.log.Warn("counting the places left for the supply header", "event", eventID, "error", err)
		return
	}
	w.Header().Set(SupplyHeader, strconv.Itoa(n))
}
