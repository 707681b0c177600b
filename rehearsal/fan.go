package rehearsal

import (
	"math/rand/v2"
	"time"
)

// behaviour is how a fan treats the line. Most are patient; a few leave, so
// that the room's grace window is exercised, and a few step away for longer
// than the grace and come back, so that returning fans are too.
type behaviour uint8

const (
	patient      behaviour = iota
	leaveAtJoin            // joins, then never comes back
	leaveInLine            // polls a few times, then leaves: never claims
	lateReturner           // steps away for twice the grace once, then returns
)

// fanStep is the request a fan makes next.
type fanStep uint8

const (
	stepJoin fanStep = iota
	stepPoll
	stepSeats
	stepHold
	stepCheckout
	stepPay
	stepOrder
)

// outcome is how a fan's visit ended.
type outcome uint8

const (
	outNone        outcome = iota
	outBought              // paid, tickets delivered
	outSoldOutLine         // the room said sold_out while the fan waited (or on arrival)
	outSoldOutShop         // admitted, but every place was sold
	outGaveUp              // admitted, could not get a hold in its tries
	outAbandoned           // left the line on purpose
	outClosed              // the room was closed
	outLostPass            // the booking service stopped accepting the fan's pass
	outError               // something unexpected; see the samples
	outCut                 // stopped by -max-time
	outSiteFailed          // the site failed the checkout, and the fan gave up on it
	outWaitlisted          // on the waitlist until no place was left to come back
	nOutcomes
)

var outcomeNames = [nOutcomes]string{"unfinished", "bought", "sold out while waiting", "sold out when shopping", "gave up shopping", "abandoned", "room closed", "lost pass", "errors", "cut by -max-time", "failed by the site", "left on the waitlist"}

// fan is one simulated fan: a small state machine, stepped one request at a
// time by whichever worker picks it up. A fan is never stepped by two
// workers at once: it is either in the scheduler or with one worker.
type fan struct {
	behaviour behaviour
	step      fanStep
	outcome   outcome
	admitted  bool
	returned  bool   // a late returner that has had its pause
	polls     uint16 // status polls made
	leaveAt   uint16 // the poll after which a leaver leaves or a returner pauses
	retries   uint8  // transport errors and 503s at the current step

	ticket, pass string // cookie values, as a browser would keep them

	// What the fan saw of the line, as offsets from the start; -1 is never.
	joinStart, joinEnd, lastWait, passAt time.Duration
	key                                  uint64 // the pass's order_key
	lastPos                              int64  // last position shown, -1 before any
	posRises                             uint16 // times the position went up

	// The site failing the fan's checkout (docs/rehearsal.md, "An origin
	// that fails 2% of checkouts"), as offsets; -1 is never. failStart and
	// failEnd are the first failed checkout's request and answer; after a
	// requeue, requeueWait is the last request answered "wait" and
	// readmitAt the answer that let the fan in again. lastWait and passAt
	// keep the first admission's, for the FIFO check.
	failStart, failEnd, requeueWait, readmitAt time.Duration
	requeued                                   bool

	told told // the outcomes the room told the fan (calibration.go)

	// The waitlist (refundscenario.go): the last request answered
	// "waitlist", as an offset (-1: never), and whether the pass that let
	// the fan in carried the waitlist claim.
	lastWaitlist time.Duration
	fromWaitlist bool

	shop *shopping // while admitted
}

// shopping is an admitted fan's basket, dropped once it is done.
type shopping struct {
	want       int    // places the fan would like, 1 to 4
	areas      []area // sections and zones, from the last seat map
	tries      int    // holds refused
	maps       int    // seat maps fetched
	holdID     string // the hold, once taken
	orderID    string // the order, once checked out
	payURL     string // the provider's pay page
	orderPolls int    // order fetches
	seats      []string
}

// area is a section or a zone and what the seat map showed free in it.
type area struct {
	id    string
	zone  bool
	avail int
}

// Bounds on every loop a fan can be in, besides -max-time.
const (
	maxPolls      = 2000
	maxRetries    = 5
	maxHoldTries  = 8
	maxSeatMaps   = 6
	maxOrderPolls = 40
	orderEvery    = 1500 * time.Millisecond // the storefront's own cadence
)

func newFan(b behaviour, leaveAt uint16) fan {
	return fan{behaviour: b, leaveAt: leaveAt, joinStart: -1, joinEnd: -1, lastWait: -1, passAt: -1, lastPos: -1,
		failStart: -1, failEnd: -1, requeueWait: -1, readmitAt: -1, lastWaitlist: -1}
}

// statusJSON is the part of the room's status a fan acts on.
type statusJSON struct {
	State          string  `json:"state"`
	Position       *uint64 `json:"position"`
	RefreshSeconds int     `json:"refresh_seconds"`
	Outcome        string  `json:"outcome"`
}

// behaviours deals out the crowd's behaviours: abandon is the share who
// leave (half at once, half after a few polls), late the share who step away
// and return. The rest wait patiently.
func behaviours(n int, abandon, late float64, rng *rand.Rand) []fan {
	fans := make([]fan, n)
	for i := range fans {
		u := rng.Float64()
		switch {
		case u < abandon/2:
			fans[i] = newFan(leaveAtJoin, 0)
		case u < abandon:
			fans[i] = newFan(leaveInLine, uint16(1+rng.IntN(5)))
		case u < abandon+late:
			fans[i] = newFan(lateReturner, uint16(1+rng.IntN(3)))
		default:
			fans[i] = newFan(patient, 0)
		}
	}
	return fans
}
