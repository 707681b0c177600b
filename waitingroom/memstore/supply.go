package memstore

import (
	"context"
	"time"

	"github.com/foyer-dev/foyer/waitingroom"
)

// ReportSupply implements waitingroom.Store.
func (s *Store) ReportSupply(_ context.Context, name string, units uint64, now time.Time) (waitingroom.SupplySample, bool, error) {
	r, err := s.room(name)
	if err != nil {
		return waitingroom.SupplySample{}, false, err
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	r.expireSessions(now)
	var last waitingroom.SupplySample
	if k := len(r.supply); k > 0 {
		last = r.supply[k-1]
		if now.Before(last.At) {
			return last, false, nil
		}
	}
	smp := waitingroom.SupplySample{
		N: last.N + 1, Units: units, At: now, Claimed: r.c.Claimed,
		Active: uint64(len(r.live)), Waiting: r.c.Seq - min(r.c.Seq, r.c.Serving),
	}
	r.supply = append(r.supply, smp)
	if over := len(r.supply) - waitingroom.MaxSupplyTail; over > 0 {
		r.supply = append(r.supply[:0:0], r.supply[over:]...)
	}
	cp := smp
	r.history = append(r.history, waitingroom.HistoryEntry{Kind: waitingroom.HistorySupply, At: now, Supply: &cp})
	return smp, true, nil
}
