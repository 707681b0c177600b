package bench

import (
	"context"
	"errors"
	"fmt"
	"math"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/foyer-dev/foyer/internal/redisserver"
	"github.com/foyer-dev/foyer/waitingroom"
	"github.com/foyer-dev/foyer/waitingroom/redisstore"
)

// ScaleOptions are the lines Scale measures.
type ScaleOptions struct {
	Sizes []uint64 // places issued in each room, one room per size
}

// ScalePoint is what one size of line costs.
type ScalePoint struct {
	Places    uint64
	FillRate  float64 // places issued per second while filling
	KeyBytes  int64   // MEMORY USAGE of every key of the room, bitmaps included
	Live      int     // places whose holders poll
	StepUs    float64 // median wall time of one controller step (Store.Advance)
	StepCalls float64 // Redis commands a step runs, scripts' insides included
	StepSent  float64 // commands a step sends: its round trips
	SnapBytes int     // the live counts and head a node reads with each snapshot
	PollNs    float64 // one status poll of the last place (Room.Peek)
	PollAlloc float64 // allocations of that poll
	Steps     int     // controller steps run, counting caught up included
	Last      Tail    // the status of the fan at the last place, and what it should be
}

// Tail is the status a node gives the fan at the last place, beside the
// bench's own computation of it from who it made poll.
type Tail struct {
	Place            uint64
	State            waitingroom.State
	Position, Expect uint64
	Slack            uint64 // live places in the fan's own block: a block's live places are spread evenly
	ETA, ExpectETA   int64
}

// Scale issues a line of each size on a private redis-server, as fast as the
// store takes joins, keeps a few thousand of its places polling (most near the
// front, some at the very back, and the last place), runs the room's
// controller until the live counts cover the whole line and then some more
// steps, and reports what Redis holds for it, what a step and a poll cost,
// and whether the last fan's status is right. See ScaleRun.
func Scale(o ScaleOptions) ([]ScalePoint, error) {
	srv, admin, stop, err := privateRedis("onsale-scale-")
	if err != nil {
		return nil, err
	}
	defer stop()
	client := redis.NewClient(&redis.Options{Addr: srv.Addr, PoolSize: 8})
	defer client.Close()
	version, _ := redisserver.Info(context.Background(), admin, "server")
	fmt.Printf("Scale of the line: one room per size on a private redis-server %s; places issued with Store.JoinMany, %d a call, %d calls at once\n",
		version["redis_version"], scaleBatch, scaleJoiners)
	fmt.Printf("%12s %12s %12s %8s %10s %12s %10s %10s %10s %8s  %s\n",
		"places", "joins/s", "key bytes", "live", "step µs", "step calls", "step sent", "snap bytes", "poll ns", "steps", "the last fan: node / computed")
	var out []ScalePoint
	for _, n := range o.Sizes {
		if err := admin.FlushAll(context.Background()).Err(); err != nil {
			return out, err
		}
		p, err := ScaleRun(context.Background(), client, admin, n)
		if err != nil {
			return out, fmt.Errorf("%d places: %w", n, err)
		}
		fmt.Printf("%12d %12.0f %12d %8d %10.0f %12.1f %10.1f %10d %10.0f %8d  %s position %d (computed %d±%d), ETA %d s (computed %d s)\n",
			p.Places, p.FillRate, p.KeyBytes, p.Live, p.StepUs, p.StepCalls, p.StepSent, p.SnapBytes, p.PollNs, p.Steps,
			p.Last.State, p.Last.Position, p.Last.Expect, p.Last.Slack, p.Last.ETA, p.Last.ExpectETA)
		out = append(out, p)
		if err := p.Last.Check(); err != nil {
			return out, fmt.Errorf("%d places: %w", n, err)
		}
	}
	return out, nil
}

// Check compares the node's answer with the bench's computation: the state
// is queued, the position is the live places ahead (within the spread of the
// fan's own block), and the ETA is that many admissions at the pace the
// store admitted (within a tenth, and two seconds of rounding).
func (t Tail) Check() error {
	var errs []error
	if t.State != waitingroom.StateQueued {
		errs = append(errs, fmt.Errorf("state %s, want %s", t.State, waitingroom.StateQueued))
	}
	if diff := max(t.Position, t.Expect) - min(t.Position, t.Expect); diff > t.Slack {
		errs = append(errs, fmt.Errorf("position %d, computed %d (slack %d)", t.Position, t.Expect, t.Slack))
	}
	if math.Abs(float64(t.ETA-t.ExpectETA)) > 0.1*float64(t.ExpectETA)+2 {
		errs = append(errs, fmt.Errorf("ETA %d s, computed %d s", t.ETA, t.ExpectETA))
	}
	if len(errs) > 0 {
		return fmt.Errorf("the fan at place %d: %w", t.Place, errors.Join(errs...))
	}
	return nil
}

const (
	scaleBatch   = 10000 // places per JoinMany: a node under a crowd batches its joins the same way
	scaleJoiners = 4     // JoinMany calls in flight at once, as several nodes
	scaleRoom    = "scale"
	scaleStep    = 5 * time.Second // controller steps this far apart on the bench's clock
	scaleMeasure = 20              // steps measured once the counts cover the line
	// scaleFront: every scaleFrontEvery-th place among the first scaleFront
	// polls (the controller admits them, passing the ghosts between); so do
	// scaleTail places at the back, one a block, and the last place.
	scaleFront      = 200_000
	scaleFrontEvery = 31
	scaleTail       = 64
)

// scaleLimits: a slow room (one live admission a step), so that the fans at
// the back are still waiting at the end, with a cap that never binds.
func scaleSettings() waitingroom.Settings {
	return waitingroom.Settings{
		NewUsersPerMinute:  12,
		TotalActiveUsers:   100_000,
		SessionDuration:    10 * time.Minute,
		WaitingIdleTimeout: time.Minute,
	}
}

// ScaleRun measures one line of n places in a room of its own on the store
// behind client (admin counts commands on the same server, and nothing else
// may use it meanwhile).
func ScaleRun(ctx context.Context, client, admin *redis.Client, n uint64) (ScalePoint, error) {
	p := ScalePoint{Places: n}
	store, err := redisstore.New(client, redisstore.WithPrefix(fmt.Sprintf("scale%d", n)))
	if err != nil {
		return p, err
	}
	if err := store.LoadScripts(ctx); err != nil {
		return p, err
	}
	now := time.Date(2026, 6, 1, 10, 0, 0, 0, time.UTC)
	var clock atomic.Pointer[time.Time]
	clock.Store(&now)
	counted := &countedStore{Store: store, admin: admin}
	key, err := waitingroom.GenerateSigningKey()
	if err != nil {
		return p, err
	}
	room, err := waitingroom.NewRoom(waitingroom.Config{
		ID: scaleRoom, Settings: scaleSettings(), Store: counted, Key: key,
		Now: func() time.Time { return *clock.Load() },
	})
	if err != nil {
		return p, err
	}
	if err := store.Init(ctx, scaleRoom, waitingroom.Recall{}); err != nil {
		return p, err
	}
	start := time.Now()
	if err := fillLine(ctx, store, n, now); err != nil {
		return p, err
	}
	p.FillRate = float64(n) / time.Since(start).Seconds()
	if err := room.Start(ctx); err != nil {
		return p, err
	}

	live := scaleLive(n)
	p.Live = len(live)
	step := func() error {
		now = now.Add(scaleStep)
		clock.Store(&now)
		serving := room.Snapshot().Serving
		for _, place := range live {
			if place >= serving {
				room.Peek(waitingroom.Ticket{Room: scaleRoom, Key: place, Joined: now})
			}
		}
		p.Steps++
		return room.Tick(ctx)
	}
	// Until the first window that may judge anyone, then until the counts
	// reach the end of the line.
	for room.Snapshot().Live.Young < n {
		if p.Steps > 40+int(n/waitingroom.LiveBlock/(waitingroom.LiveStepBlocks-waitingroom.LiveHeadBlocks)) {
			return p, fmt.Errorf("the live counts reach place %d after %d steps, not the end of the line", room.Snapshot().Live.Young, p.Steps)
		}
		if err := step(); err != nil {
			return p, err
		}
	}
	counted.measure(true)
	first := room.Snapshot()
	for range scaleMeasure {
		if err := step(); err != nil {
			return p, err
		}
	}
	counted.measure(false)
	p.StepUs, p.StepCalls, p.StepSent = counted.figures()
	last := room.Snapshot()
	p.SnapBytes = 2*len(last.Live.Counts) + len(last.Live.Head)
	// The bench's clock runs faster than Redis's: the heartbeat windows
	// that would have expired by now at a real pace go as their TTL would
	// have taken them.
	if err := expireWindows(ctx, admin, now, scaleSettings().WaitingIdleTimeout); err != nil {
		return p, err
	}
	if keys, err := roomBytes(ctx, admin); err == nil {
		p.KeyBytes = keys
	} else {
		return p, err
	}

	if err := checkCounts(last.Live, last.Serving, live); err != nil {
		return p, err
	}

	// The fan at the last place, on their first look.
	fan := waitingroom.Ticket{Room: scaleRoom, Key: n - 1, Joined: now}
	st, _ := room.Peek(fan)
	p.Last = Tail{Place: n - 1, State: st.State}
	if st.Position != nil {
		p.Last.Position = *st.Position
	}
	if st.ETASeconds != nil {
		p.Last.ETA = *st.ETASeconds
	}
	for _, place := range live {
		if place >= last.Serving && place < n-1 {
			p.Last.Expect++
		}
		if place >= last.Serving && place/waitingroom.LiveBlock == (n-1)/waitingroom.LiveBlock {
			// The fan's own block, the fan included: a node spreads its
			// count evenly over it.
			p.Last.Slack++
		}
	}
	pace := float64(last.Admitted-first.Admitted) / (scaleMeasure * scaleStep).Seconds()
	p.Last.ExpectETA = int64(math.Ceil(float64(p.Last.Expect+1) / pace))

	// The median of five rounds: the machine is shared.
	const polls, rounds = 40_000, 5
	p.PollAlloc = testing.AllocsPerRun(1000, func() { room.Peek(fan) })
	var each []float64
	for range rounds {
		start = time.Now()
		for range polls {
			room.Peek(fan)
		}
		each = append(each, float64(time.Since(start).Nanoseconds())/polls)
	}
	slices.Sort(each)
	p.PollNs = each[rounds/2]
	return p, nil
}

// checkCounts compares the live counts a node reads with the places the
// bench made poll: every block's count, and every bit of the head, from
// serving on (places below it were seen until they were admitted, and a
// node never asks about them).
func checkCounts(lv waitingroom.Liveness, serving uint64, live []uint64) error {
	want := make([]uint16, len(lv.Counts))
	head := make([]byte, len(lv.Head))
	for _, p := range live {
		if p < lv.From || p >= lv.Young {
			continue
		}
		off := p - lv.From
		if i := off / waitingroom.LiveBlock; i < uint64(len(want)) {
			want[i]++
		}
		if off/8 < uint64(len(head)) {
			head[off/8] |= 0x80 >> (off % 8)
		}
	}
	got := slices.Clone(lv.Head)
	for off := uint64(0); off < serving-lv.From && off/8 < uint64(len(got)); off++ {
		got[off/8] &^= 0x80 >> (off % 8)
		head[off/8] &^= 0x80 >> (off % 8)
	}
	for i := range want {
		if i == 0 && serving > lv.From {
			continue // serving's own block: see above
		}
		if lv.Counts[i] != want[i] {
			return fmt.Errorf("live count of places [%d, %d): %d, the bench made %d of them poll",
				lv.From+uint64(i)*waitingroom.LiveBlock, lv.From+uint64(i+1)*waitingroom.LiveBlock, lv.Counts[i], want[i])
		}
	}
	if !slices.Equal(head, got) {
		return fmt.Errorf("the head's bits differ from the places the bench made poll")
	}
	return nil
}

// fillLine issues n places as fast as the store takes them: JoinMany calls of
// scaleBatch places, scaleJoiners at once. The room admits nobody meanwhile
// (Open false), so no visitor id is ever used and one short one does for all.
func fillLine(ctx context.Context, store waitingroom.Store, n uint64, now time.Time) error {
	lim := waitingroom.Limits{Rate: 12, Cap: 100_000, Session: 10 * time.Minute, Retention: time.Hour}
	var next atomic.Uint64
	var wg sync.WaitGroup
	errs := make(chan error, scaleJoiners)
	for range scaleJoiners {
		wg.Add(1)
		go func() {
			defer wg.Done()
			visitors := make([]waitingroom.Joiner, scaleBatch)
			for i := range visitors {
				visitors[i].Visitor = "v"
			}
			for {
				from := next.Add(scaleBatch) - scaleBatch
				if from >= n {
					return
				}
				k := min(scaleBatch, n-from)
				if _, err := store.JoinMany(ctx, scaleRoom, visitors[:k], now, lim); err != nil {
					errs <- err
					return
				}
			}
		}()
	}
	wg.Wait()
	close(errs)
	return <-errs
}

// scaleLive are the places whose holders poll, in order.
func scaleLive(n uint64) []uint64 {
	var live []uint64
	for p := uint64(0); p < min(scaleFront, n/2); p += scaleFrontEvery {
		live = append(live, p)
	}
	for k := uint64(scaleTail); k >= 1; k-- {
		if back := k * waitingroom.LiveBlock; back < n/2 {
			live = append(live, n-1-back)
		}
	}
	live = append(live, n-1)
	return slices.Compact(live)
}

// expireWindows deletes the heartbeat windows ("...:hb:<window>:<block>")
// that are no longer among the last waitingroom.BeatWindows at now.
func expireWindows(ctx context.Context, admin *redis.Client, now time.Time, idle time.Duration) error {
	win := waitingroom.BeatWindow(idle).Microseconds()
	cur := now.UnixMicro() / win
	iter := admin.Scan(ctx, 0, "*:hb:*", 1000).Iterator()
	for iter.Next(ctx) {
		parts := strings.Split(iter.Val(), ":")
		var idx int64
		if _, err := fmt.Sscan(parts[len(parts)-2], &idx); err != nil {
			continue
		}
		if idx <= cur-waitingroom.BeatWindows {
			if err := admin.Del(ctx, iter.Val()).Err(); err != nil {
				return err
			}
		}
	}
	return iter.Err()
}

// roomBytes adds up MEMORY USAGE over every key on the server.
func roomBytes(ctx context.Context, admin *redis.Client) (int64, error) {
	var total int64
	iter := admin.Scan(ctx, 0, "*", 1000).Iterator()
	for iter.Next(ctx) {
		b, err := admin.MemoryUsage(ctx, iter.Val(), 0).Result()
		if err != nil {
			return 0, err
		}
		total += b
	}
	return total, iter.Err()
}

// countedStore times the controller steps and counts the commands they run,
// while measuring.
type countedStore struct {
	waitingroom.Store
	admin *redis.Client

	mu       sync.Mutex
	on       bool
	times    []time.Duration
	calls    int64
	sent     int64
	measured int
}

func (c *countedStore) measure(on bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.on = on
}

func (c *countedStore) Advance(ctx context.Context, room string, now time.Time, lim waitingroom.Limits) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	if !c.on {
		return c.Store.Advance(ctx, room, now, lim)
	}
	before, err := redisserver.CommandCalls(ctx, c.admin)
	if err != nil {
		return err
	}
	start := time.Now()
	err = c.Store.Advance(ctx, room, now, lim)
	took := time.Since(start)
	if err != nil {
		return err
	}
	after, err := redisserver.CommandCalls(ctx, c.admin)
	if err != nil {
		return err
	}
	for name, v := range after {
		if name == "info" {
			continue
		}
		d := v - before[name]
		c.calls += d
		if isSent(name) {
			c.sent += d
		}
	}
	c.times = append(c.times, took)
	c.measured++
	return nil
}

// figures are the median step time in µs and the commands run and sent per
// step.
func (c *countedStore) figures() (us, calls, sent float64) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.measured == 0 {
		return 0, 0, 0
	}
	slices.Sort(c.times)
	us = float64(c.times[len(c.times)/2].Nanoseconds()) / 1e3
	return us, float64(c.calls) / float64(c.measured), float64(c.sent) / float64(c.measured)
}

// ScaleSizes parses "1e4,1e6,1e7".
func ScaleSizes(s string) ([]uint64, error) {
	var out []uint64
	for f := range strings.SplitSeq(s, ",") {
		v, err := parseCount(strings.TrimSpace(f))
		if err != nil {
			return nil, err
		}
		out = append(out, v)
	}
	return out, nil
}

func parseCount(s string) (uint64, error) {
	var f float64
	if _, err := fmt.Sscanf(s, "%g", &f); err != nil || f < 2 || f > 1e9 || f != math.Trunc(f) {
		return 0, fmt.Errorf("bad number of places %q (2 to 1e9, e.g. 1e7)", s)
	}
	return uint64(f), nil
}
