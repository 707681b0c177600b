package integration

import (
	"cmp"
	"context"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"net/http"
	"slices"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/foyer-dev/foyer/gateway"
	"github.com/foyer-dev/foyer/internal/redistest"
	"github.com/foyer-dev/foyer/waitingroom"
)

// A crowd: fans arrive in waves, one wave a round, each through a node picked
// at random; every round the clock moves a second, all nodes tick at once,
// then every fan makes one request at once through a random node: the
// newcomers join, those waiting poll their status, those admitted visit the
// site and, after a round or two, check out (the origin revokes their pass).
const (
	crowdFans  = 240
	crowdWaves = 4
	crowdCap   = 20
	crowdRate  = 1200 // a minute: 20 a second, more than the slots free up
	crowdRoom  = "crowd"
	crowdMax   = 200 // rounds
)

// runCrowd runs a crowd through n nodes on the Redis that dial reaches, and
// proves:
//   - never more than total_active_users hold a session: distinct pass
//     subjects counted as fans get and give up passes, and the store's
//     active + pending read throughout by a watcher of its own;
//   - the rate holds across nodes: the ticks of all of them in one second
//     admit no more than new_users_per_minute allows a second;
//   - order keys follow join order across nodes: a fan whose join answered
//     before another's began has the smaller key, and no key is given twice;
//   - admission follows order keys: a fan is admitted no later than any fan
//     with a larger key, whichever nodes they used;
//   - a fan's position never rises, whichever node answers;
//   - every fan gets in, and the counters add up: one key a join, one claim a
//     fan, nobody abandoned.
func runCrowd(t *testing.T, dial func() redis.UniversalClient, n int) {
	clock := newTestClock()
	admin := dial()
	t.Cleanup(func() { admin.Close() })
	prefix := redistest.Prefix(t, admin)
	key := deploymentKey(t)
	cfg := gateway.Handler{Room: crowdRoom, Settings: waitingroom.Settings{TotalActiveUsers: crowdCap, NewUsersPerMinute: crowdRate}}
	c := &crowd{t: t, clock: clock, watch: redisNodeStore(t, dial, prefix), passes: make(map[string]bool)}
	for range n {
		c.nodes = append(c.nodes, newNode(t, clock.Now, cfg, redisNodeStore(t, dial, prefix), key))
	}
	tr := sharedTransport(t)
	for i := range crowdFans {
		c.fans = append(c.fans, &crowdFan{
			v:    newVisitor(tr),
			rng:  rand.New(rand.NewPCG(uint64(i), uint64(n))),
			wave: i % crowdWaves,
			pos:  -1,
		})
	}

	round := 0
	for ; !c.allDone(); round++ {
		if round == crowdMax {
			t.Fatalf("%d rounds and fans are still in line", crowdMax)
		}
		c.tick(round)
		c.fanPhase(round)
	}
	c.checkOrder()
	c.checkCounters()
	t.Logf("%d fans through %d nodes in %d rounds, %d walked straight in", crowdFans, n, round, c.walkIns())
}

type crowd struct {
	t     *testing.T
	clock *testClock
	nodes []*node
	fans  []*crowdFan
	watch waitingroom.Store // the watcher's own store, on its own client

	holding atomic.Int64 // fans holding a pass they have not given up
	mu      sync.Mutex
	passes  map[string]bool // subjects given a pass
}

type fanState int

const (
	fanArriving fanState = iota
	fanWaiting
	fanInside
	fanLeft
)

type crowdFan struct {
	v    *visitor
	rng  *rand.Rand
	wave int

	state              fanState
	joinStart, joinEnd time.Time
	key                uint64
	admitted           int   // round of admission
	pos                int64 // last position shown, -1 before any
	visits             int   // requests to the site before checking out
}

func (c *crowd) allDone() bool {
	for _, f := range c.fans {
		if f.state != fanLeft {
			return false
		}
	}
	return true
}

// tick moves the clock on a second and ticks every node at once; between
// them they admit no more than the rate allows a second.
func (c *crowd) tick(round int) {
	c.t.Helper()
	before := c.snapshot()
	c.clock.Advance(time.Second)
	if err := tickAll(c.nodes); err != nil {
		c.t.Fatalf("round %d: %v", round, err)
	}
	after := c.snapshot()
	if d := after.Admitted - before.Admitted; d > crowdRate/60 {
		c.t.Fatalf("round %d: one second's ticks admitted %d, the rate allows %d", round, d, crowdRate/60)
	}
}

// fanPhase lets every fan who has arrived make one request, all at once.
func (c *crowd) fanPhase(round int) {
	c.t.Helper()
	var wg sync.WaitGroup
	errs := make(chan error, len(c.fans)+len(c.nodes)+1)
	for _, f := range c.fans {
		if f.state == fanLeft || f.wave > round {
			continue
		}
		wg.Go(func() {
			if err := c.act(f, round); err != nil {
				errs <- err
			}
		})
	}
	// Meanwhile the watcher reads the store, and every node keeps refreshing
	// its view as its loop would; the clock stands still, so no node steps
	// the controller and the round's admissions stay those of its tick.
	done := make(chan struct{})
	var bg sync.WaitGroup
	untilDone := func(f func() error) {
		bg.Go(func() {
			for {
				if err := f(); err != nil {
					errs <- err
					return
				}
				select {
				case <-done:
					return
				default:
				}
			}
		})
	}
	untilDone(c.checkCap)
	for _, n := range c.nodes {
		untilDone(func() error { return n.room().Tick(context.Background()) })
	}
	wg.Wait()
	close(done)
	bg.Wait()
	close(errs)
	var all []error
	for err := range errs {
		all = append(all, err)
	}
	if len(all) > 0 {
		c.t.Fatalf("round %d: %d failures, first: %v", round, len(all), all[0])
	}
	if err := c.checkCap(); err != nil {
		c.t.Fatalf("round %d: %v", round, err)
	}
}

// act is one request of one fan through a random node.
func (c *crowd) act(f *crowdFan, round int) error {
	i := f.rng.IntN(len(c.nodes))
	n := c.nodes[i]
	switch f.state {
	case fanArriving:
		f.joinStart = time.Now()
		resp, body, err := f.v.get(n.url+"/events/42", false)
		f.joinEnd = time.Now()
		switch {
		case err != nil:
			return fmt.Errorf("join through node %d: %w", i, err)
		case resp.StatusCode == http.StatusOK && body == "origin":
			return c.admit(f, n, round) // the line was empty: straight in
		case resp.StatusCode == http.StatusOK && isWaitingPage(body):
			f.state = fanWaiting
			return nil
		}
		return fmt.Errorf("join through node %d: %d %.80q", i, resp.StatusCode, body)

	case fanWaiting:
		resp, body, err := f.v.get(n.url+"/_waiting-room/status", true)
		if err != nil {
			return fmt.Errorf("status through node %d: %w", i, err)
		}
		var st waitingroom.Status
		if resp.StatusCode != http.StatusOK || json.Unmarshal([]byte(body), &st) != nil {
			return fmt.Errorf("status through node %d: %d %.80q", i, resp.StatusCode, body)
		}
		switch {
		case st.State == waitingroom.StateAdmitted:
			return c.admit(f, n, round)
		case st.State != waitingroom.StateQueued || st.Position == nil || st.Reconnecting:
			return fmt.Errorf("status through node %d: %s", i, body)
		case f.pos >= 0 && int64(*st.Position) > f.pos:
			return fmt.Errorf("position rose from %d to %d (node %d)", f.pos, *st.Position, i)
		}
		f.pos = int64(*st.Position)
		return nil

	case fanInside:
		if f.visits > 0 {
			f.visits--
			resp, body, err := f.v.get(n.url+"/events/42", false)
			if err != nil || resp.StatusCode != http.StatusOK || body != "origin" {
				return fmt.Errorf("admitted fan through node %d: %v %.80q", i, err, body)
			}
			return nil
		}
		// Given up before the origin frees the slot, so the count never
		// runs behind the store's.
		c.holding.Add(-1)
		f.state = fanLeft
		resp, body, err := f.v.get(n.url+"/done", false)
		if err != nil || resp.StatusCode != http.StatusOK || body != "bye" {
			return fmt.Errorf("checkout through node %d: %v %.80q", i, err, body)
		}
		return nil
	}
	return fmt.Errorf("fan in state %d acted", f.state)
}

// admit records a fan's pass, checked by another node than the one that
// issued it.
func (c *crowd) admit(f *crowdFan, n *node, round int) error {
	tok := f.v.cookie(n.url, "foyer_pass")
	other := c.nodes[(slices.Index(c.nodes, n)+1)%len(c.nodes)]
	p, err := other.room().CheckPass(tok)
	if err != nil {
		return fmt.Errorf("admitted, but another node refuses the pass: %w", err)
	}
	c.mu.Lock()
	again := c.passes[p.Subject]
	c.passes[p.Subject] = true
	c.mu.Unlock()
	if again {
		return fmt.Errorf("subject %s was given a second pass", p.Subject)
	}
	if h := c.holding.Add(1); h > crowdCap {
		return fmt.Errorf("%d fans hold a pass, total_active_users is %d", h, crowdCap)
	}
	f.key, f.admitted, f.state = p.OrderKey, round, fanInside
	f.visits = f.rng.IntN(3)
	return nil
}

// checkCap reads the store as it is now: its sessions and the admissions not
// yet claimed stay within the cap.
func (c *crowd) checkCap() error {
	s := c.snapshot()
	if s.Active+s.Pending > crowdCap {
		return fmt.Errorf("store: %d active + %d pending, total_active_users is %d", s.Active, s.Pending, crowdCap)
	}
	return nil
}

func (c *crowd) snapshot() waitingroom.Snapshot {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	s, err := c.watch.Snapshot(ctx, crowdRoom, c.clock.Now(), 0)
	if err != nil {
		c.t.Errorf("watcher: %v", err)
	}
	return s
}

// checkOrder proves that keys follow join order and admission follows keys.
func (c *crowd) checkOrder() {
	c.t.Helper()
	fans := slices.Clone(c.fans)
	slices.SortFunc(fans, func(a, b *crowdFan) int { return cmp.Compare(a.key, b.key) })
	for i, f := range fans {
		if f.key != uint64(i) {
			c.t.Fatalf("keys are not 0..%d, one each: the %dth smallest is %d", len(fans)-1, i, f.key)
		}
	}
	// From the largest key down, the earliest answer among larger keys: a
	// join that answered before this one began must have a smaller key.
	earliest := time.Time{}
	for i := len(fans) - 1; i >= 0; i-- {
		f := fans[i]
		if !earliest.IsZero() && earliest.Before(f.joinStart) {
			c.t.Fatalf("key %d was given to a join that began after a join with a larger key had answered", f.key)
		}
		if earliest.IsZero() || f.joinEnd.Before(earliest) {
			earliest = f.joinEnd
		}
	}
	for i := 1; i < len(fans); i++ {
		if a, b := fans[i-1], fans[i]; a.admitted > b.admitted {
			c.t.Fatalf("key %d admitted in round %d, after key %d in round %d", a.key, a.admitted, b.key, b.admitted)
		}
	}
}

// checkCounters: every join took one key, every fan one claim, nobody was
// abandoned, and everyone has left.
func (c *crowd) checkCounters() {
	c.t.Helper()
	s := c.snapshot()
	if s.Seq != crowdFans || s.Admitted != crowdFans || s.Claimed != crowdFans || s.Abandoned != 0 || s.Active != 0 || s.Pending != 0 {
		c.t.Fatalf("store counters %+v, active %d, pending %d; want %d keys, admissions and claims, none abandoned, nobody left inside",
			s.Counters, s.Active, s.Pending, crowdFans)
	}
}

func (c *crowd) walkIns() uint64 {
	var n uint64
	for _, nd := range c.nodes {
		n += nd.room().Stats().DirectAdmits.Load()
	}
	return n
}
