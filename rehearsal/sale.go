package rehearsal

import (
	"errors"
	"fmt"
)

// errOversold makes the command fail: the one rule that never bends.
var errOversold = errors.New("rehearsal failed: a place was sold twice or an invariant does not hold")

// saleJudgement is what the verdict says of the sale itself.
type saleJudgement struct {
	sold     int  // tickets, by the booking service's count
	soldOut  bool // every place sold, by that count
	oversold int  // places sold twice, or tickets beyond capacity, as the fans saw them

	fanTickets, seatsOver, zoneOver int  // what oversold is made of
	invOK                           bool // the invariants were read and hold

	// err fails the rehearsal: a place sold twice, an invariant broken, or
	// the invariants unreadable, so that 0 oversold is not proven.
	err error
}

// proven is the target "0 oversold": nothing oversold as the fans saw it,
// and the booking service's invariants read and holding.
func (j saleJudgement) proven() bool { return j.oversold == 0 && j.invOK }

// judgeSale sets the orders the fans saw delivered, and the booking
// service's invariant check (or the error reading it), against the venue.
// The fans' side counts seats with more than one ticket, zone places over
// the zone's capacity, and tickets beyond capacity in all; the service's
// side is its own proof. Either one finding a place sold twice fails the
// run, and so does an invariant check that could not be read.
func judgeSale(orders map[string]orderSeen, standing, capacity int, inv invariants, invErr error) saleJudgement {
	j := saleJudgement{sold: inv.Report.Tickets}
	j.seatsOver, j.zoneOver, j.fanTickets = countTickets(orders, standing)
	j.soldOut = invErr == nil && j.sold >= capacity
	j.oversold = j.seatsOver + j.zoneOver
	if j.fanTickets > capacity {
		j.oversold += j.fanTickets - capacity
	}
	j.invOK = invErr == nil && inv.OK
	switch {
	case j.oversold > 0 || (invErr == nil && !inv.OK):
		j.err = errOversold
	case invErr != nil:
		j.err = fmt.Errorf("rehearsal failed: the booking service's invariants could not be read, so 0 oversold is not proven: %w", invErr)
	}
	return j
}

// countTickets counts, from the orders the fans saw delivered and kept (not
// refunded), seats with
// more than one ticket and zone places beyond a zone's capacity (the zone
// capacity is the venue's standing places).
func countTickets(orders map[string]orderSeen, standing int) (seatsOver, zoneOver, tickets int) {
	perSeat := map[string]int{}
	perZone := map[string]int{}
	for _, o := range orders {
		if o.refunded {
			continue // its places were sold again: the refund scenario's
		}
		for _, s := range o.seats {
			perSeat[s]++
		}
		for _, z := range o.zones {
			perZone[z]++
		}
		tickets += len(o.seats) + len(o.zones)
	}
	for _, n := range perSeat {
		if n > 1 {
			seatsOver += n - 1
		}
	}
	for _, n := range perZone {
		zoneOver += max(0, n-standing)
	}
	return seatsOver, zoneOver, tickets
}
