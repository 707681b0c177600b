package rehearsal

import (
	"errors"
	"time"
)

// Config is one rehearsal: the crowd, the venue and the servers. The error
// messages of Validate name the onsale flags each field is set by.
type Config struct {
	Fans, Seats, Standing int           // fans; places in the venue, of which standing ones
	Arrival, MaxTime      time.Duration // window the fans arrive over; bound on the whole run
	Think, Grace          time.Duration // a fan's time between shopping steps; the room's admission_grace
	Jitter, Abandon, Late float64       // poll lateness as a share of refresh_seconds; shares of leavers and late returners
	Workers               int           // requests in flight at most
	Seed                  uint64        // seed of the crowd's behaviours
	Report                string        // path of the HTML report to write beside the verdict; empty: none
	// Bots make places without cookies: each request a new visitor, never
	// seen again, sent before the fans arrive.
	Bots int
	// CompareLiveness plays the sale a second time with liveness out of
	// reach (waiting_idle_timeout of an hour: no place is judged in a
	// rehearsal), and sets the two side by side.
	CompareLiveness bool
	// FailCheckouts is the share of checkouts the booking service fails on
	// its side (its fake provider's rehearsal fault); 0: none.
	FailCheckouts float64
	// CompareRequeue plays the sale twice with FailCheckouts (2% when it is
	// 0): the booking service's retry suppressed, then sent, and sets the
	// fates of the fans the site failed side by side (docs/rehearsal.md,
	// "An origin that fails 2% of checkouts").
	CompareRequeue bool
	// Calibration records every status answer's outcome (docs/supply.md)
	// and judges the room's supply estimates against who was served
	// (docs/rehearsal.md, "Calibration of the outcome").
	Calibration bool
	// Refunds plays the scenario "a sell-out followed by refunds"
	// (docs/rehearsal.md): the room's waitlist on, the booking service
	// with -waitlist, and once the sale sold out, RefundShare of the paid
	// orders (at least minRefunds) refunded through the provider's signed
	// charge.refunded webhook; the returned places must go to the
	// waitlisted fans in order.
	Refunds     bool
	RefundShare float64
	Stack       StackConfig
}

// StackConfig is what the rehearsal starts: the binaries, the stores and the
// room's settings. Grace is taken from Config.Grace.
type StackConfig struct {
	FoyerBin, BookingBin string
	Store                string // memory, redis (a private server) or a loopback redis:// URL
	DatabaseURL          string // PostgreSQL for the booking service; empty: memory
	DBMaxConns           int    // the booking service's pool bound on it; 0: its default
	DBBackgroundConns    int    // its pool for work no fan waits on; 0: its default
	Rate, Cap            int    // new_users_per_minute, total_active_users
	Session, Grace       time.Duration
	HoldTTL              time.Duration // the booking service's hold time
	WaitingIdle          time.Duration // waiting_idle_timeout; 0: the room's default
	// The booking service's rehearsal faults: the share of payments its
	// fake provider fails and how many attempts of each; NoRetry never
	// asks the gateway to requeue a fan it failed.
	FailPayments float64
	FailAttempts int
	NoRetry      bool
	// Waitlist turns the room's waitlist on and runs the booking service
	// with -waitlist (docs/waitlist.md).
	Waitlist bool
}

// Validate refuses a rehearsal outside the bounds every loop of it is sized
// for.
func (c Config) Validate() error {
	switch {
	case c.Fans < 1 || c.Fans > 10_000_000:
		return errors.New("rehearsal: -fans must be 1 to 10,000,000")
	case c.Seats < 1 || c.Seats > 200_000 || c.Standing < 0 || c.Standing > c.Seats:
		return errors.New("rehearsal: -seats must be 1 to 200,000 and -standing 0 to -seats")
	case c.Workers < 1 || c.Workers > 10_000:
		return errors.New("rehearsal: -workers must be 1 to 10,000")
	case c.MaxTime <= 0 || c.Arrival < 0 || c.Think < 0:
		return errors.New("rehearsal: durations must be positive")
	case c.Stack.DBMaxConns < 0 || c.Stack.DBMaxConns > 1000:
		return errors.New("rehearsal: -db-max-conns must be 0 to 1000")
	case c.Stack.DBBackgroundConns < 0 || c.Stack.DBBackgroundConns > 1000:
		return errors.New("rehearsal: -db-background-conns must be 0 to 1000")
	case c.Bots < 0 || c.Bots > 10_000_000:
		return errors.New("rehearsal: -bots must be 0 to 10,000,000")
	case !(c.FailCheckouts >= 0 && c.FailCheckouts <= 1):
		return errors.New("rehearsal: -fail-checkouts must be a share from 0 to 1")
	case c.Calibration && (c.CompareRequeue || c.CompareLiveness):
		return errors.New("rehearsal: -calibration is a scenario of its own: not with -compare-requeue or -compare-liveness")
	case c.Refunds && (c.Calibration || c.CompareRequeue || c.CompareLiveness):
		return errors.New("rehearsal: -refunds is a scenario of its own: not with -calibration, -compare-requeue or -compare-liveness")
	case c.Refunds && !(c.RefundShare > 0 && c.RefundShare <= 1):
		return errors.New("rehearsal: -refund-share must be a share above 0, at most 1")
	case c.CompareRequeue && c.CompareLiveness:
		return errors.New("rehearsal: -compare-requeue and -compare-liveness are separate scenarios: pick one")
	case c.Jitter < 0 || c.Jitter > 1 || c.Abandon < 0 || c.Late < 0 || c.Abandon+c.Late > 1:
		return errors.New("rehearsal: -jitter, -abandon and -late are fractions")
	}
	return nil
}
