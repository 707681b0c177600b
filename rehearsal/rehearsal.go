package rehearsal

import (
	"context"
	"fmt"
	"math/rand/v2"
	"net/http"
	"os"
	"runtime"
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

// Run plays one on-sale on this machine and prints its verdict: it starts
// the stack, lets the crowd loose until every fan is done, c.MaxTime passes
// or ctx ends, then reads what the sale left behind. release is called once
// the fans have stopped, before the verdict is read (the command passes the
// stop of its Ctrl-C handler there, so that a second Ctrl-C ends it at once);
// it may be nil. The error is non-nil when a place was sold twice, an
// invariant of the booking service does not hold or could not be read, or
// the stack could not be started.
func Run(ctx context.Context, c Config, release func()) error {
	if err := c.Validate(); err != nil {
		return err
	}
	c.Stack.Grace = c.Grace

	st, err := startStack(c.Stack)
	if err != nil {
		return err
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
	if r.eventID, r.capacity, err = st.createEvent(r.client, c.Seats, c.Standing); err != nil {
		return err
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
	fmt.Printf("  Foyer %s, booking %s; %d workers; %.0f%% abandon, %.0f%% return late; think %v; at most %v\n",
		st.base, st.bookingURL, c.Workers, 100*c.Abandon, 100*c.Late, c.Think, c.MaxTime)

	r.run(ctx)
	if release != nil {
		release()
	}
	return r.verdict()
}

// run plays the on-sale until every fan is done, -max-time passes, or the
// rehearsal is interrupted.
func (r *rehearsal) run(parent context.Context) {
	c := r.cfg
	rng := rand.New(rand.NewPCG(c.Seed, 0x5eed))
	r.fans = behaviours(c.Fans, c.Abandon, c.Late, rng)
	r.sched = newScheduler(c.Fans)
	for i, at := range arrivals(c.Fans, c.Arrival) {
		r.sched.push(int32(i), at)
	}
	r.left.Store(int64(c.Fans))
	r.live.perSecond = make([]atomic.Int64, int(c.MaxTime/time.Second)+2)
	r.cpuBySec = make([]float64, len(r.live.perSecond))
	r.otherBySec = make([]float64, len(r.live.perSecond))

	timed, cancelTimed := context.WithTimeout(parent, c.MaxTime)
	defer cancelTimed()
	ctx, finish := context.WithCancel(timed)
	defer finish()

	r.ours0 = r.ourCPU()
	r.busy0, r.total0, _ = machineCPU()
	r.t0 = time.Now()
	due := make(chan dueStep)
	var wg sync.WaitGroup
	wg.Go(func() { r.sched.run(ctx, r.t0, due) })
	workers := make([]*worker, c.Workers)
	for i := range workers {
		w := &worker{rng: rand.New(rand.NewPCG(c.Seed, uint64(i)+1))}
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
