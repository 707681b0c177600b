package rehearsal

import (
	"context"
	"fmt"
	"math/rand/v2"
	"net/http"
	"os"
	"strconv"
	"sync"
	"sync/atomic"
	"time"
)

// rehearsal is one on-sale played out against the real servers.
type rehearsal struct {
	cfg    Config
	st     *stack
	client *http.Client

	eventID                         int64
	capacity                        int
	eventPath, seatsPath, holdsPath string

	t0          time.Time
	elapsed     time.Duration // until the last fan was done, or the run stopped
	timedOut    bool          // -max-time ended the run
	interrupted bool
	fans        []fan
	workers     []*worker
	sched       *scheduler
	left        atomic.Int64 // fans not done yet
	live        liveCounters
	procs       procWatch
	maxGor      atomic.Int64

	series []secondSample // the sale, second by second (written by watch only)
	report *reportFile    // where the HTML report goes, when one was asked for

	pg                *pgWatch      // the booking database's backends, when it is PostgreSQL
	busy0, total0     time.Duration // the machine's CPU time at the start
	busyRun, totalRun time.Duration // and over the run
	cpuBySec          []float64     // the machine's busy share, by second of the run (written by watch only)
	otherBySec        []float64     // of which not ours: the kernel's and other processes' (idem)
	ours0             time.Duration // our processes' CPU time at the start

	mu      sync.Mutex
	notes   map[string]int       // unexpected things fans met, by message
	subs    map[string]int32     // pass subjects seen, to find one given twice
	dupSubs int                  // passes whose subject another fan's pass had
	badAud  int                  // passes for another room
	orders  map[string]orderSeen // delivered orders, by id

	bots    atomic.Int64 // places the bots made
	summary runSummary   // what a comparison of runs needs, set by verdict

	calib       calibLive    // the outcomes told, by second (calibration.go)
	calibration *calibration // the calibration scenario's count, once judged

	refunds      *refunds         // the refund scenario's refunds (refundscenario.go)
	refundJudged *refundJudgement // and its verdict, once judged

	roomRequeued uint64      // the room's count of requeues, once read
	roomRead     bool        // whether it was read
	baseline     *runSummary // the run without retry, beside which this one is reported
}

// orderSeen is a delivered order as its fan saw it.
type orderSeen struct {
	seats   []string
	zones   []string
	paidAt  time.Time
	revoked bool // the pass was cleared on the answer that showed the tickets

	// What a refund of the order needs (refundscenario.go): its amount as
	// the API wrote it, its currency and the provider's payment id; whether
	// its fan was let in from the waitlist, and whether it was refunded.
	amount, currency, paymentID string
	fromWaitlist, refunded      bool
}

// liveCounters follow the sale while it runs, for the progress lines.
type liveCounters struct {
	arrived, waiting, admitted, shopping atomic.Int64
	bought, places                       atomic.Int64
	soldOutSeen                          atomic.Int64 // offset when a fan was first told sold_out
	soldAllSeen                          atomic.Int64 // offset when the fans' orders reached capacity
	perSecond                            []atomic.Int64
}

func (l *liveCounters) count(at time.Duration) {
	if i := int(at / time.Second); i >= 0 && i < len(l.perSecond) {
		l.perSecond[i].Add(1)
	}
}

// worker is one of the bounded pool that steps fans. It keeps its own
// latencies, merged once the run is over.
type worker struct {
	rng     *rand.Rand
	due     time.Duration // when the step at hand was due
	reqs    []reqSample
	served  []servedSample // shop requests' own account from the booking service
	lags    []lagSample    // how late steps started against when they were due
	byClass [nKinds][6]int
	failed  [nKinds]int // no answer at all
	conns   workerConns // the worker's keep-alive connections
}

// Run plays one on-sale on this machine and prints its verdict: it starts
// the stack, lets the crowd loose until every fan is done, c.MaxTime passes
// or ctx ends, then reads what the sale left behind. release is called once
// the fans have stopped, before the verdict is read (the command passes the
// stop of its Ctrl-C handler there, so that a second Ctrl-C ends it at once);
// it may be nil. The error is non-nil when a place was sold twice, an
// invariant of the booking service does not hold or could not be read, or
// the stack could not be started. With c.CompareLiveness the sale is played
// twice, the second time with liveness out of reach, and the two compared.
func Run(ctx context.Context, c Config, release func()) error {
	if err := c.Validate(); err != nil {
		return err
	}
	c.Stack.Grace = c.Grace
	if c.CompareRequeue && c.FailCheckouts == 0 {
		c.FailCheckouts = defaultFailCheckouts
	}
	c.Stack.FailPayments, c.Stack.FailAttempts = c.FailCheckouts, failAttempts
	c.Stack.Waitlist = c.Refunds
	// The report's file is made first, so that a path it cannot be written
	// to is known before a sale is played for nothing.
	report, err := createReport(c.Report)
	if err != nil {
		return err
	}
	if report != nil {
		defer report.close()
	}
	if c.CompareRequeue {
		return compareRequeue(ctx, c, release, report)
	}
	if !c.CompareLiveness {
		_, err := runOnce(ctx, c, release, report, nil)
		return err
	}
	fmt.Println("=== with liveness")
	with, err := runOnce(ctx, c, nil, report, nil)
	if err != nil || ctx.Err() != nil {
		return err
	}
	without := c
	without.Stack.WaitingIdle = time.Hour // no place is judged within a rehearsal
	fmt.Println("\n=== without liveness (waiting_idle_timeout 1h: no place is judged)")
	wo, err := runOnce(ctx, without, release, nil, nil)
	if err != nil {
		return err
	}
	fmt.Println("\nliveness (with / without)")
	fmt.Printf("  sold out at         %s / %s (fans' orders reached capacity)\n", offset(with.soldAt), offset(wo.soldAt))
	fmt.Printf("  slots on ghosts     %d / %d (admitted, never claimed)\n", with.abandoned, wo.abandoned)
	fmt.Printf("  ghosts skipped      %d / %d (no slot spent)\n", with.skipped, wo.skipped)
	return nil
}

// runSummary is what a comparison needs of one run.
type runSummary struct {
	soldAt             int64 // offset at which the fans' orders reached capacity; 0: never
	abandoned, skipped uint64
	fates              requeueFates
	sale               saleJudgement
	requeued           uint64 // the room's count of requeues
}

// runOnce plays one sale; baseline, when given, is a run without retry that
// its verdict and report set the fates of the fans the site failed beside.
func runOnce(ctx context.Context, c Config, release func(), report *reportFile, baseline *runSummary) (runSummary, error) {
	st, err := startStack(c.Stack)
	if err != nil {
		return runSummary{}, err
	}
	defer st.stop()
	r := &rehearsal{
		cfg: c, st: st,
		client: &http.Client{
			Transport:     newTransport(c.Workers),
			Timeout:       30 * time.Second,
			CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse },
		},
		notes: map[string]int{}, subs: map[string]int32{}, orders: map[string]orderSeen{},
	}
	r.report, r.baseline = report, baseline
	if c.Refunds {
		r.refunds = &refunds{}
	}
	if r.eventID, r.capacity, err = st.createEvent(r.client, c.Seats, c.Standing); err != nil {
		return runSummary{}, err
	}
	id := strconv.FormatInt(r.eventID, 10)
	r.eventPath, r.seatsPath, r.holdsPath = "/events/"+id, "/api/events/"+id+"/seats", "/api/events/"+id+"/holds"
	r.procs.add("foyer", st.foyer.PID())
	r.procs.add("booking", st.booking.Process.Pid)
	if st.redisPID > 0 {
		r.procs.add("redis-server", st.redisPID)
	}
	r.procs.add("onsale (simulator)", os.Getpid())
	if c.Stack.DatabaseURL != "" {
		if r.pg, err = newPGWatch(c.Stack.DatabaseURL); err != nil {
			fmt.Fprintf(os.Stderr, "onsale: the PostgreSQL backends' CPU will not be measured: %v\n", err)
		} else {
			defer r.pg.close()
		}
	}

	fmt.Printf("on-sale rehearsal: %d fans for %d places (event %d), arriving over %v; room: %d/min, cap %d, session %v, grace %v; store %s; booking on %s\n",
		c.Fans, r.capacity, r.eventID, c.Arrival, c.Stack.Rate, c.Stack.Cap, c.Stack.Session, c.Grace, st.storeName, bookingStore(c.Stack.DatabaseURL))
	fmt.Printf("  Foyer %s, booking %s; %d workers; %.0f%% abandon, %.0f%% return late; %d cookieless bots; think %v; at most %v\n",
		st.base, st.bookingURL, c.Workers, 100*c.Abandon, 100*c.Late, c.Bots, c.Think, c.MaxTime)

	r.run(ctx)
	if release != nil {
		release()
	}
	err = r.verdict()
	return r.summary, err
}

// now is the offset from the start of the rehearsal.
func (r *rehearsal) now() time.Duration { return time.Since(r.t0) }
