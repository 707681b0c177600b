package rehearsal

import (
	"errors"
	"strings"
	"testing"
)

// answered is the booking service's invariant check as it answered: ok or
// not, with its count of tickets.
func answered(ok bool, tickets int) invariants {
	var inv invariants
	inv.OK = ok
	inv.Report.Tickets = tickets
	return inv
}

func seats(ids ...string) orderSeen { return orderSeen{seats: ids} }
func zone(id string, n int) orderSeen {
	o := orderSeen{}
	for range n {
		o.zones = append(o.zones, id)
	}
	return o
}

func TestJudgeSale(t *testing.T) {
	unread := errors.New("connection refused")
	cases := []struct {
		name            string
		orders          map[string]orderSeen
		standing, capac int
		inv             invariants
		invErr          error

		soldOut                              bool
		oversold, seatsOver, zoneOver, fanTk int
		proven                               bool
		fails                                error  // errOversold, or nil
		failsWith                            string // a failure other than errOversold
	}{{
		name:     "sold out cleanly",
		orders:   map[string]orderSeen{"o1": seats("A-1-1", "A-1-2"), "o2": seats("A-1-3"), "o3": zone("FLOOR", 2)},
		standing: 2, capac: 5, inv: answered(true, 5),
		soldOut: true, fanTk: 5, proven: true,
	}, {
		name:   "places left, nothing wrong",
		orders: map[string]orderSeen{"o1": seats("A-1-1")},
		capac:  4, inv: answered(true, 1),
		fanTk: 1, proven: true,
	}, {
		name:   "a seat two fans both hold tickets for",
		orders: map[string]orderSeen{"o1": seats("A-1-1", "A-1-2"), "o2": seats("A-1-2")},
		capac:  10, inv: answered(true, 3),
		oversold: 1, seatsOver: 1, fanTk: 3, fails: errOversold,
	}, {
		name:   "a seat three fans hold tickets for counts twice",
		orders: map[string]orderSeen{"o1": seats("B-2-7"), "o2": seats("B-2-7"), "o3": seats("B-2-7")},
		capac:  10, inv: answered(true, 3),
		oversold: 2, seatsOver: 2, fanTk: 3, fails: errOversold,
	}, {
		name:     "more standing tickets than the floor holds",
		orders:   map[string]orderSeen{"o1": zone("FLOOR", 2), "o2": zone("FLOOR", 1)},
		standing: 2, capac: 10, inv: answered(true, 3),
		oversold: 1, zoneOver: 1, fanTk: 3, fails: errOversold,
	}, {
		name:   "distinct seats, but more tickets than the venue has places",
		orders: map[string]orderSeen{"o1": seats("A-1-1", "A-1-2"), "o2": seats("A-1-3")},
		capac:  2, inv: answered(true, 2),
		soldOut: true, oversold: 1, fanTk: 3, fails: errOversold,
	}, {
		name:   "the fans saw nothing wrong, the booking service's invariants are violated",
		orders: map[string]orderSeen{"o1": seats("A-1-1")},
		capac:  4, inv: answered(false, 1),
		fanTk: 1, fails: errOversold,
	}, {
		name:   "invariants could not be read: 0 oversold is not proven",
		orders: map[string]orderSeen{"o1": seats("A-1-1")},
		capac:  1, invErr: unread,
		fanTk: 1, failsWith: "could not be read",
	}, {
		name:   "oversold and invariants unread: oversold wins",
		orders: map[string]orderSeen{"o1": seats("A-1-1"), "o2": seats("A-1-1")},
		capac:  4, invErr: unread,
		oversold: 1, seatsOver: 1, fanTk: 2, fails: errOversold,
	}}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			j := judgeSale(c.orders, c.standing, c.capac, c.inv, c.invErr)
			if j.soldOut != c.soldOut || j.oversold != c.oversold || j.seatsOver != c.seatsOver || j.zoneOver != c.zoneOver || j.fanTickets != c.fanTk {
				t.Errorf("sold out %v, oversold %d (seats %d, zone %d), fans' tickets %d; want %v, %d (%d, %d), %d",
					j.soldOut, j.oversold, j.seatsOver, j.zoneOver, j.fanTickets, c.soldOut, c.oversold, c.seatsOver, c.zoneOver, c.fanTk)
			}
			if j.proven() != c.proven {
				t.Errorf("0 oversold proven: %v, want %v", j.proven(), c.proven)
			}
			switch {
			case c.fails != nil:
				if !errors.Is(j.err, c.fails) {
					t.Errorf("run ends with %v, want %v", j.err, c.fails)
				}
			case c.failsWith != "":
				if j.err == nil || errors.Is(j.err, errOversold) || !strings.Contains(j.err.Error(), c.failsWith) || !errors.Is(j.err, c.invErr) {
					t.Errorf("run ends with %v, want a failure saying %q and wrapping %v", j.err, c.failsWith, c.invErr)
				}
			case j.err != nil:
				t.Errorf("run ends with %v, want success", j.err)
			}
		})
	}
}
