package memstore

import (
	"context"
	"time"

	"github.com/foyer-dev/foyer/waitingroom"
)

// ReportSupply implements waitingroom.Store.
func (s *Store) ReportSupply(_ context.Context, name string, units uint64, now time.Time) (waitingroom.SupplySample, bool, error) {
	r, err := s.lockRoomAt(name, now)
	if err != nil {
		return waitingroom.SupplySample{}, false, err
	}
	defer r.mu.Unlock()
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
	if last.N > 0 && units < last.Units && len(r.wlGrants) > 0 {
		// A fall pays what the waitlist's fans were let in for.
		r.wlGrants = waitingroom.PayWaitlist(r.wlGrants, last.Units-units)
	} else if last.N == 0 {
		// The first report since the room was created, which took up a
		// waitlist's debt from before a loss: no more can be owed than is
		// left.
		if owed := r.waitlistState(now).Owed; owed > units {
			r.wlGrants = waitingroom.PayWaitlist(r.wlGrants, owed-units)
		}
	}
	r.supply = append(r.supply, smp)
	if over := len(r.supply) - waitingroom.MaxSupplyTail; over > 0 {
		r.supply = append(r.supply[:0:0], r.supply[over:]...)
	}
	cp := smp
	r.history = append(r.history, waitingroom.HistoryEntry{Kind: waitingroom.HistorySupply, At: now, Supply: &cp})
	return smp, true, nil
}
