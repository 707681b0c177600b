package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"math/rand/v2"
	"net/http"
	"os"
	"os/signal"
	"runtime"
	"strconv"
	"sync"
	"sync/atomic"
	"time"
)

// rehearsalConfig is the rehearsal's flags.
type rehearsalConfig struct {
	fans, seats, standing int
	arrival, maxTime      time.Duration
	think, grace          time.Duration
	jitter, abandon, late float64
	workers               int
	seed                  uint64
	stack                 stackConfig
}

// rehearsal is one on-sale played out against the real servers.
type rehearsal struct {
	cfg    rehearsalConfig
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
}

// orderSeen is a delivered order as its fan saw it.
type orderSeen struct {
	seats   []string
	zones   []string
	paidAt  time.Time
	revoked bool // the pass was cleared on the answer that showed the tickets
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
	lags    []lagSample // how late steps started against when they were due
	byClass [nKinds][6]int
	failed  [nKinds]int // no answer at all
}

func rehearse(args []string) error {
	var c rehearsalConfig
	fs := flag.NewFlagSet("rehearsal", flag.ExitOnError)
	fs.IntVar(&c.fans, "fans", 100_000, "simulated fans")
	fs.IntVar(&c.seats, "seats", 10_000, "places in the venue, standing ones included")
	fs.IntVar(&c.standing, "standing", 0, "of those, places in a standing zone")
	fs.DurationVar(&c.arrival, "arrival", time.Minute, "window over which fans arrive, most of them in its first eighth")
	fs.DurationVar(&c.maxTime, "max-time", 15*time.Minute, "stop and report after this long, whatever is left")
	fs.DurationVar(&c.think, "think", time.Second, "a fan's time between two shopping steps (±50%)")
	fs.Float64Var(&c.jitter, "jitter", 0.2, "polls come this fraction of refresh_seconds late at most, at random")
	fs.Float64Var(&c.abandon, "abandon", 0.03, "share of fans who leave the line and never claim")
	fs.Float64Var(&c.late, "late", 0.01, "share of fans who step away for twice the grace, then return")
	fs.IntVar(&c.workers, "workers", 256, "requests in flight at most (the fans share their connections)")
	fs.Uint64Var(&c.seed, "seed", 1, "seed of the crowd's behaviours")
	fs.StringVar(&c.stack.foyerBin, "foyer", "bin/foyer", "path of the foyer binary")
	fs.StringVar(&c.stack.bookingBin, "booking", "bin/booking", "path of the booking binary")
	fs.StringVar(&c.stack.store, "store", "memory", "the room's store: memory, redis (a private redis-server, also the booking outbox's stream) or a loopback redis:// URL")
	fs.StringVar(&c.stack.databaseURL, "database-url", "", "PostgreSQL URL of a fresh database for the booking service (empty: memory)")
	fs.IntVar(&c.stack.rate, "rate", 6000, "the room's new_users_per_minute")
	fs.IntVar(&c.stack.cap, "cap", 1000, "the room's total_active_users")
	fs.DurationVar(&c.stack.session, "session", 10*time.Minute, "the room's session_duration")
	fs.DurationVar(&c.grace, "grace", 30*time.Second, "the room's admission_grace")
	fs.DurationVar(&c.stack.holdTTL, "hold-ttl", 5*time.Minute, "the booking service's hold time")
	_ = fs.Parse(args)
	c.stack.grace = c.grace
	switch {
	case fs.NArg() > 0:
		return fmt.Errorf("rehearsal: unexpected arguments %v", fs.Args())
	case c.fans < 1 || c.fans > 10_000_000:
		return errors.New("rehearsal: -fans must be 1 to 10,000,000")
	case c.seats < 1 || c.seats > 200_000 || c.standing < 0 || c.standing > c.seats:
		return errors.New("rehearsal: -seats must be 1 to 200,000 and -standing 0 to -seats")
	case c.workers < 1 || c.workers > 10_000:
		return errors.New("rehearsal: -workers must be 1 to 10,000")
	case c.maxTime <= 0 || c.arrival < 0 || c.think < 0:
		return errors.New("rehearsal: durations must be positive")
	case c.jitter < 0 || c.jitter > 1 || c.abandon < 0 || c.late < 0 || c.abandon+c.late > 1:
		return errors.New("rehearsal: -jitter, -abandon and -late are fractions")
	}

	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()

	st, err := startStack(c.stack)
	if err != nil {
		return err
	}
	defer st.stop()
	r := &rehearsal{
		cfg: c, st: st,
		client: &http.Client{
			Transport:     newTransport(c.workers),
			Timeout:       30 * time.Second,
			CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse },
		},
		notes: map[string]int{}, subs: map[string]int32{}, orders: map[string]orderSeen{},
	}
	if r.eventID, r.capacity, err = st.createEvent(r.client, c.seats, c.standing); err != nil {
		return err
	}
	id := strconv.FormatInt(r.eventID, 10)
	r.eventPath, r.seatsPath, r.holdsPath = "/events/"+id, "/api/events/"+id+"/seats", "/api/events/"+id+"/holds"
	r.procs.add("foyer", st.foyer.cmd.Process.Pid)
	r.procs.add("booking", st.booking.Process.Pid)
	if st.redisPID > 0 {
		r.procs.add("redis-server", st.redisPID)
	}
	r.procs.add("onsale (simulator)", os.Getpid())
	if c.stack.databaseURL != "" {
		if r.pg, err = newPGWatch(c.stack.databaseURL); err != nil {
			fmt.Fprintf(os.Stderr, "onsale: the PostgreSQL backends' CPU will not be measured: %v\n", err)
		} else {
			defer r.pg.close()
		}
	}

	fmt.Printf("on-sale rehearsal: %d fans for %d places (event %d), arriving over %v; room: %d/min, cap %d, session %v, grace %v; store %s; booking on %s\n",
		c.fans, r.capacity, r.eventID, c.arrival, c.stack.rate, c.stack.cap, c.stack.session, c.grace, st.storeName, bookingStore(c.stack.databaseURL))
	fmt.Printf("  Foyer %s, booking %s; %d workers; %.0f%% abandon, %.0f%% return late; think %v; at most %v\n",
		st.base, st.bookingURL, c.workers, 100*c.abandon, 100*c.late, c.think, c.maxTime)

	r.run(ctx)
	stop() // a second Ctrl-C ends onsale at once
	return r.verdict()
}

// run plays the on-sale until every fan is done, -max-time passes, or the
// rehearsal is interrupted.
func (r *rehearsal) run(parent context.Context) {
	c := r.cfg
	rng := rand.New(rand.NewPCG(c.seed, 0x5eed))
	r.fans = behaviours(c.fans, c.abandon, c.late, rng)
	r.sched = newScheduler(c.fans)
	for i, at := range arrivals(c.fans, c.arrival) {
		r.sched.push(int32(i), at)
	}
	r.left.Store(int64(c.fans))
	r.live.perSecond = make([]atomic.Int64, int(c.maxTime/time.Second)+2)
	r.cpuBySec = make([]float64, len(r.live.perSecond))
	r.otherBySec = make([]float64, len(r.live.perSecond))

	timed, cancelTimed := context.WithTimeout(parent, c.maxTime)
	defer cancelTimed()
	ctx, finish := context.WithCancel(timed)
	defer finish()

	r.ours0 = r.ourCPU()
	r.busy0, r.total0, _ = machineCPU()
	r.t0 = time.Now()
	due := make(chan dueStep)
	var wg sync.WaitGroup
	wg.Go(func() { r.sched.run(ctx, r.t0, due) })
	workers := make([]*worker, c.workers)
	for i := range workers {
		w := &worker{rng: rand.New(rand.NewPCG(c.seed, uint64(i)+1))}
		workers[i] = w
		wg.Go(func() {
			for {
				var d dueStep
				select {
				case d = <-due:
				case <-ctx.Done():
					return
				}
				now := r.now()
				w.due = d.at
				w.lags = append(w.lags, lagSample{at: msOf(now), us: usOf(now - d.at)})
				f := &r.fans[d.fan]
				next, done := r.step(ctx, w, d.fan, f)
				if !done {
					r.sched.push(d.fan, next)
					continue
				}
				if r.left.Add(-1) == 0 {
					finish()
				}
			}
		})
	}
	watchDone := make(chan struct{})
	var watchers sync.WaitGroup
	watchers.Go(func() { r.watch(watchDone) })

	wg.Wait()
	close(watchDone)
	watchers.Wait()
	r.procs.sample()
	r.elapsed = r.now()
	if busy, total, err := machineCPU(); err == nil && r.total0 > 0 {
		r.busyRun, r.totalRun = busy-r.busy0, total-r.total0
	}
	r.timedOut = timed.Err() != nil && r.left.Load() > 0
	r.interrupted = parent.Err() != nil
	for i := range r.fans {
		if f := &r.fans[i]; f.outcome == outNone {
			f.outcome = outCut
		}
	}
	r.workers = workers
}

// watch samples the servers' memory every second and prints progress every
// five, until done is closed.
func (r *rehearsal) watch(done <-chan struct{}) {
	tick := time.NewTicker(time.Second)
	defer tick.Stop()
	last, lastAt := int64(0), time.Duration(0)
	busy0, total0, ours0 := r.busy0, r.total0, r.ours0
	for n := 1; ; n++ {
		select {
		case <-done:
			return
		case <-tick.C:
		}
		ours := r.ourCPU()
		if busy, total, err := machineCPU(); err == nil && total > total0 {
			if i := int(r.now() / time.Second); i < len(r.cpuBySec) {
				r.cpuBySec[i] = float64(busy-busy0) / float64(total-total0)
				r.otherBySec[i] = max(0, float64(busy-busy0-(ours-ours0))/float64(total-total0))
			}
			busy0, total0 = busy, total
		}
		ours0 = ours
		r.maxGor.Store(max(r.maxGor.Load(), int64(runtime.NumGoroutine())))
		if n%5 != 0 {
			continue
		}
		now := r.now()
		var total int64
		for i := range r.live.perSecond {
			total += r.live.perSecond[i].Load()
		}
		rate := float64(total-last) / (now - lastAt).Seconds()
		last, lastAt = total, now
		l := &r.live
		sold := ""
		if at := l.soldOutSeen.Load(); at > 0 {
			sold = fmt.Sprintf("  sold_out since %.0fs", time.Duration(at).Seconds())
		}
		// The room's own counters say what the fans cannot see: who was
		// let in but has not come back to claim yet.
		room := ""
		if rc, err := r.st.room(r.client); err == nil {
			room = fmt.Sprintf("  room: serving %d, active %d, pending %d", rc.Counters.Serving, rc.Active, rc.Pending)
		}
		fmt.Fprintf(os.Stderr, "  %4.0fs  arrived %d  waiting %d  admitted %d  shopping %d  bought %d (%d places)  %.0f req/s%s%s\n",
			now.Seconds(), l.arrived.Load(), l.waiting.Load(), l.admitted.Load(), l.shopping.Load(), l.bought.Load(), l.places.Load(), rate, room, sold)
	}
}

// ourCPU samples the CPU time our processes have used so far: the servers,
// the simulator, and the booking database's backends.
func (r *rehearsal) ourCPU() time.Duration {
	r.procs.sample()
	var sum time.Duration
	for _, p := range r.procs.snapshot() {
		sum += p.cpu
	}
	if r.pg != nil {
		r.pg.sample()
		cpu, _ := r.pg.total()
		sum += cpu
	}
	return sum
}

// now is the offset from the start of the rehearsal.
func (r *rehearsal) now() time.Duration { return time.Since(r.t0) }

// note counts an unexpected thing a fan met, by message.
func (r *rehearsal) note(msg string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if _, ok := r.notes[msg]; ok || len(r.notes) < 100 {
		r.notes[msg]++
	} else {
		r.notes["(other messages)"]++
	}
}

// notePass checks that no two fans were handed a pass for the same visitor,
// and that every pass is for this room.
func (r *rehearsal) notePass(fan int32, c passClaims) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if prev, ok := r.subs[c.Subject]; ok && prev != fan {
		r.dupSubs++
	}
	r.subs[c.Subject] = fan
	if c.Audience != rehearsalRoom {
		r.badAud++
	}
}

// recordOrder keeps a delivered order's places, to count tickets per seat.
func (r *rehearsal) recordOrder(o orderJSON, revoked bool) {
	seen := orderSeen{revoked: revoked}
	if o.PaidAt != nil {
		seen.paidAt = *o.PaidAt
	}
	for _, t := range o.Tickets {
		if t.Seat != "" {
			seen.seats = append(seen.seats, t.Seat)
		} else {
			seen.zones = append(seen.zones, t.Zone)
		}
	}
	r.mu.Lock()
	_, again := r.orders[o.ID]
	r.orders[o.ID] = seen
	r.mu.Unlock()
	if again {
		return
	}
	r.live.bought.Add(1)
	if n := r.live.places.Add(int64(len(o.Tickets))); n >= int64(r.capacity) {
		r.live.soldAllSeen.CompareAndSwap(0, int64(r.now()))
	}
}

func bookingStore(databaseURL string) string {
	if databaseURL == "" {
		return "memory"
	}
	return "PostgreSQL"
}
