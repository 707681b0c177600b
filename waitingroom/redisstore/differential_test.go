package redisstore_test

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"reflect"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/foyer-dev/foyer/internal/redistest"
	"github.com/foyer-dev/foyer/waitingroom"
	"github.com/foyer-dev/foyer/waitingroom/memstore"
	"github.com/foyer-dev/foyer/waitingroom/redisstore"
)

// TestMatchesMemoryStore drives the memory store, the reference, and the Redis
// store through the same random history (joins, claims, releases, controller
// steps, clock jumps and small clock skews, limit changes, re-seeding after a
// loss, joins weighed by join_limit and seeds) and requires every answer and
// every snapshot to be the same. The conformance suite checks the semantics
// one case at a time; this checks that the Lua arithmetic (rate credit,
// catch-up, batches, expiries, the GCRA of join_limit) follows the reference
// step for step, where a case-by-case suite would not look.
func TestMatchesMemoryStore(t *testing.T) {
	var skipped, idled, limited, spent atomic.Uint64
	c := redistest.Shared(t)
	prefix := redistest.Prefix(t, c)
	red, err := redisstore.New(c, redisstore.WithPrefix(prefix), redisstore.WithTTL(time.Hour))
	if err != nil {
		t.Fatal(err)
	}
	for seed := range 12 {
		t.Run(fmt.Sprint(seed), func(t *testing.T) {
			t.Parallel()
			d := &differ{
				t:    t,
				ctx:  context.Background(),
				mem:  memstore.New(),
				red:  red,
				room: fmt.Sprintf("diff-%d-%d", seed, time.Now().UnixNano()),
				rng:  rand.New(rand.NewPCG(uint64(seed), 42)),
				arng: rand.New(rand.NewPCG(uint64(seed), 7)),
				wrng: rand.New(rand.NewPCG(uint64(seed), 11)),
				lrng: rand.New(rand.NewPCG(uint64(seed), 13)),
				now:  time.Date(2026, 6, 1, 10, 0, 0, 0, time.UTC),
			}
			if seed%2 == 0 {
				d.waitingIdle = 40 * time.Second
			}
			if seed%3 == 1 {
				// Priority lanes, joined from a stream of their own.
				d.nrng = rand.New(rand.NewPCG(uint64(seed), 17))
				d.lanes, _ = waitingroom.ParseLanes("presale=3 members=2 general=1")
			}
			d.lim = d.randomLimits()
			d.init(waitingroom.Recall{})
			for range 700 {
				d.step()
			}
			s, err := d.red.Snapshot(d.ctx, d.room, d.now, 0)
			if err != nil {
				t.Fatal(err)
			}
			t.Logf("skipped %d idled %d", s.Skipped, s.IdledOut)
			skipped.Add(s.Skipped)
			idled.Add(s.IdledOut)
			limited.Add(d.refused[waitingroom.RefusedJoinLimit])
			spent.Add(d.refused[waitingroom.RefusedSeedSpent])
		})
	}
	t.Cleanup(func() {
		if skipped.Load() == 0 || idled.Load() == 0 {
			t.Errorf("the histories skipped %d ghosts and idled %d sessions out: liveness went untested", skipped.Load(), idled.Load())
		}
		if limited.Load() == 0 || spent.Load() == 0 {
			t.Errorf("the histories refused %d joins over join_limit and %d spent seeds: weighing went untested", limited.Load(), spent.Load())
		}
	})
}

type differ struct {
	t        *testing.T
	ctx      context.Context
	mem, red waitingroom.Store
	room     string
	rng      *rand.Rand
	now      time.Time
	lim      waitingroom.Limits
	// waitingIdle is the room's waiting idle timeout: none for odd seeds.
	waitingIdle time.Duration
	fans        []diffFan
	history     []string
	accounts    map[string]uint64 // each account's last place
	arng        *rand.Rand        // the account joins' own random stream
	// wrng is the weighed joins' own random stream (join_limit and seeds),
	// and joinLimit the limit they are weighed by.
	wrng *rand.Rand
	// lrng is the leaves' own random stream.
	lrng      *rand.Rand
	joinLimit waitingroom.JoinLimit
	// refused counts the weighed joins refused, by refusal.
	refused [3]uint64
	// nrng is the lane joins' own random stream, and lanes the lanes of
	// the history's limits: none (and no lane joins) for most seeds.
	nrng  *rand.Rand
	lanes waitingroom.Lanes
	// skipped and idled are the most ghosts skipped and sessions idled out
	// that any snapshot of the history showed: a re-seed after a loss starts
	// the counters again, so the last snapshot alone may show none.
	skipped, idled uint64
}

type diffFan struct {
	visitor string
	key     uint64
	expires time.Time
}

func (d *differ) logf(format string, args ...any) {
	d.history = append(d.history, fmt.Sprintf("%s ", d.now.Format("15:04:05.000"))+fmt.Sprintf(format, args...))
}

func (d *differ) fail(format string, args ...any) {
	d.t.Helper()
	last := d.history[max(0, len(d.history)-25):]
	d.t.Fatalf("%s\nlimits %+v\nlast operations:\n  %s", fmt.Sprintf(format, args...), d.lim, strings.Join(last, "\n  "))
}

func (d *differ) randomLimits() waitingroom.Limits {
	pick := func(xs ...int) int { return xs[d.rng.IntN(len(xs))] }
	return waitingroom.Limits{
		Rate:      pick(0, 6, 7, 45, 100, 600, 6000),
		Cap:       pick(1, 2, 3, 5, 8, 20),
		Session:   time.Duration(pick(5, 20, 90, 600)) * time.Second,
		Grace:     time.Duration(pick(3, 10, 30)) * time.Second,
		Retention: time.Duration(pick(10, 60, 3600)) * time.Second,
		// 0: a fan whose admission lapsed never comes back at the front.
		ReturnWindow: time.Duration(pick(0, 4, 15, 120)) * time.Second,
		Open:         d.rng.IntN(5) > 0,
		CloseDraw:    d.rng.IntN(3) == 0,
		Reshuffle:    d.rng.IntN(3) == 0,
		// Short timeouts, so that places and sessions go idle in a history.
		// The waiting one is the room's (as its heartbeat windows are), so it
		// stays.
		WaitingIdle: d.waitingIdle,
		SessionIdle: time.Duration(pick(0, 0, 8, 30)) * time.Second,
		Lanes:       d.lanes,
	}
}

// tick moves the clock: mostly within a second or two, sometimes across a
// stall or a grace window, now and then a little backwards, as a node whose
// clock lags another's would.
func (d *differ) tick() {
	var step time.Duration
	switch r := d.rng.Float64(); {
	case r < 0.55:
		step = time.Duration(d.rng.IntN(700)) * time.Millisecond
	case r < 0.85:
		step = time.Duration(1000+d.rng.IntN(600)) * time.Millisecond
	case r < 0.94:
		step = time.Duration(2+d.rng.IntN(7)) * time.Second
	case r < 0.98:
		step = time.Duration(20+d.rng.IntN(40)) * time.Second
	default:
		step = -time.Duration(d.rng.IntN(900)) * time.Millisecond
	}
	d.now = d.now.Add(step)
}

func (d *differ) step() {
	d.t.Helper()
	d.tick()
	if d.rng.IntN(25) == 0 {
		d.lim = d.randomLimits()
		d.logf("limits %+v", d.lim)
	}
	if d.waitingIdle > 0 && d.rng.IntN(2) == 0 {
		// Steps in (nearly) every heartbeat window, as nodes make them, so
		// that the history of beats is whole and places are judged.
		d.logf("advance")
		d.same("advance", d.mem.Advance(d.ctx, d.room, d.now, d.lim), d.red.Advance(d.ctx, d.room, d.now, d.lim))
	}
	switch r := d.rng.IntN(100); {
	case r < 33:
		d.join()
	case r < 58:
		d.claim()
	case r < 82:
		d.logf("advance")
		d.same("advance", d.mem.Advance(d.ctx, d.room, d.now, d.lim), d.red.Advance(d.ctx, d.room, d.now, d.lim))
	case r < 87:
		d.release()
	case r < 88:
		d.raise()
	case r < 90:
		d.lose()
	case r < 92:
		d.drawSeed()
	case r < 93:
		d.saveOverrides()
	default:
		d.beat()
	}
	// Account joins draw from a stream of their own, so that the rest of
	// the history is what it would be without them.
	if d.arng.IntN(12) == 0 {
		d.joinAccount()
	}
	if d.wrng.IntN(4) == 0 {
		d.joinWeighed()
	}
	if d.lrng.IntN(10) == 0 {
		d.leave()
	}
	if d.nrng != nil && d.nrng.IntN(3) == 0 {
		d.joinLanes()
	}
	d.compareSnapshots(int64(d.rng.IntN(4)))
}

func (d *differ) same(op string, a, b error) {
	d.t.Helper()
	if (a == nil) != (b == nil) || (a != nil && !errors.Is(b, a)) {
		d.fail("%s: memory store %v, Redis store %v", op, a, b)
	}
}

func (d *differ) init(seed waitingroom.Recall) {
	d.t.Helper()
	// Both backends must name the incarnation they are given, so the
	// snapshots compare equal.
	seed.Incarnation = fmt.Sprintf("inc-%d", d.rng.Int64())
	d.same("init", d.mem.Init(d.ctx, d.room, seed), d.red.Init(d.ctx, d.room, seed))
}

func (d *differ) join() {
	d.t.Helper()
	v := fmt.Sprintf("v%d", len(d.fans))
	if len(d.fans) > 0 && d.rng.IntN(20) == 0 {
		v = d.fans[d.rng.IntN(len(d.fans))].visitor // a fan who joins again
	}
	d.logf("join %s", v)
	a, errA := d.mem.Join(d.ctx, d.room, v, d.now, d.lim)
	b, errB := d.red.Join(d.ctx, d.room, v, d.now, d.lim)
	d.same("join", errA, errB)
	if a.Key != b.Key || a.Admitted != b.Admitted || !a.Expires.Equal(b.Expires) {
		d.fail("join %s: memory store %+v, Redis store %+v", v, a, b)
	}
	d.fans = append(d.fans, diffFan{visitor: v, key: a.Key, expires: a.Expires})
}

// joinAccount joins one of a few accounts, sometimes with the key of the
// account's last place as spent, as a rejoin after its session would.
func (d *differ) joinAccount() {
	d.t.Helper()
	name := fmt.Sprintf("acct-%d", d.arng.IntN(6))
	var vid waitingroom.VisitorID
	for i := range vid {
		vid[i] = byte(d.arng.IntN(256))
	}
	req := waitingroom.AccountJoin{Account: waitingroom.NewAccountKey(d.room, name), Joiner: waitingroom.Joiner{Visitor: vid.String()}}
	if d.wrng.IntN(2) == 0 {
		req.Joiner = d.weighedJoiner(vid.String())
	}
	if d.accounts == nil {
		d.accounts = make(map[string]uint64)
	}
	if k, ok := d.accounts[name]; ok && d.arng.IntN(3) == 0 {
		req.Spent, req.HasSpent = k, true
	}
	d.logf("join account %s as %+v (spent %v %d)", name, req.Joiner, req.HasSpent, req.Spent)
	lim := d.weighedLimits()
	a, errA := d.mem.JoinAccount(d.ctx, d.room, req, d.now, lim)
	b, errB := d.red.JoinAccount(d.ctx, d.room, req, d.now, lim)
	d.same("join account", errA, errB)
	if a.Key != b.Key || a.Admitted != b.Admitted || !a.Expires.Equal(b.Expires) || a.Existing != b.Existing ||
		a.Visitor != b.Visitor || !a.Joined.Equal(b.Joined) || a.Refused != b.Refused || a.RetryAfter != b.RetryAfter {
		d.fail("join account %s: memory store %+v, Redis store %+v", name, a, b)
	}
	if errA != nil || a.Refused != waitingroom.NotRefused {
		return
	}
	d.accounts[name] = a.Key
	if !a.Existing {
		d.fans = append(d.fans, diffFan{visitor: a.Visitor.String(), key: a.Key, expires: a.Expires})
	}
}

// weighedLimits are the history's limits with the weighed joins' join_limit.
func (d *differ) weighedLimits() waitingroom.Limits {
	lim := d.lim
	lim.JoinLimit = d.joinLimit
	return lim
}

// weighedJoiner is visitor joining from one of a few networks, sometimes
// with one of a few seeds (remembered for a few seconds to a few minutes, so
// that some are forgotten within the history), sometimes with neither.
func (d *differ) weighedJoiner(visitor string) waitingroom.Joiner {
	j := waitingroom.Joiner{Visitor: visitor}
	if d.wrng.IntN(5) > 0 {
		j.Client = fmt.Sprintf("192.0.2.%d", d.wrng.IntN(3))
	}
	if d.wrng.IntN(3) == 0 {
		j.Seed = fmt.Sprintf("seed-%d", d.wrng.IntN(8))
		j.SeedUntil = d.now.Add(time.Duration(1+d.wrng.IntN(300)) * time.Second)
	}
	return j
}

// joinWeighed joins a batch of one to four weighed joiners (see
// weighedJoiner) under a join_limit that changes now and then, and requires
// both stores to refuse the same ones, for as long, and to place the others
// alike.
func (d *differ) joinWeighed() {
	d.t.Helper()
	if d.joinLimit.IsZero() || d.wrng.IntN(30) == 0 {
		pick := func(xs ...int) int { return xs[d.wrng.IntN(len(xs))] }
		d.joinLimit = waitingroom.JoinLimit{N: pick(1, 2, 3, 7), Per: time.Duration(pick(1, 10, 60, 700)) * time.Second, Burst: pick(0, 0, 1, 4)}
		d.logf("join_limit %s", d.joinLimit)
	}
	batch := make([]waitingroom.Joiner, 1+d.wrng.IntN(4))
	for i := range batch {
		batch[i] = d.weighedJoiner(fmt.Sprintf("w%d-%d", len(d.fans), i))
	}
	d.logf("join weighed %+v", batch)
	lim := d.weighedLimits()
	a, errA := d.mem.JoinMany(d.ctx, d.room, batch, d.now, lim)
	b, errB := d.red.JoinMany(d.ctx, d.room, batch, d.now, lim)
	d.same("join weighed", errA, errB)
	if errA != nil {
		return
	}
	for i := range batch {
		x, y := a[i], b[i]
		if x.Key != y.Key || x.Admitted != y.Admitted || !x.Expires.Equal(y.Expires) || x.Refused != y.Refused || x.RetryAfter != y.RetryAfter {
			d.fail("join weighed %+v: memory store %+v, Redis store %+v", batch[i], x, y)
		}
		d.refused[x.Refused]++
		if x.Refused == waitingroom.NotRefused {
			d.fans = append(d.fans, diffFan{visitor: batch[i].Visitor, key: x.Key, expires: x.Expires})
		}
	}
}

func (d *differ) claim() {
	d.t.Helper()
	if len(d.fans) == 0 {
		return
	}
	// Mostly fans near the front, whose claims can succeed.
	s, err := d.mem.Snapshot(d.ctx, d.room, d.now, 0)
	if err != nil {
		d.fail("snapshot: %v", err)
	}
	n := len(d.fans)
	if d.rng.IntN(4) > 0 {
		n = min(n, int(s.Serving)+3)
	}
	f := &d.fans[d.rng.IntN(n)]
	d.logf("claim %s place %d", f.visitor, f.key)
	a, errA := d.mem.Claim(d.ctx, d.room, f.visitor, f.key, d.now, d.lim)
	b, errB := d.red.Claim(d.ctx, d.room, f.visitor, f.key, d.now, d.lim)
	d.same("claim", errA, errB)
	if a.Status != b.Status || !a.Expires.Equal(b.Expires) {
		d.fail("claim %s place %d: memory store %+v, Redis store %+v", f.visitor, f.key, a, b)
	}
	if a.Status == waitingroom.Claimed {
		f.expires = a.Expires
	}
}

func (d *differ) release() {
	d.t.Helper()
	if len(d.fans) == 0 {
		return
	}
	f := d.fans[d.rng.IntN(len(d.fans))]
	pass := fmt.Sprintf("pass:%s", f.visitor) // a colon, as a JWT ID may hold
	d.logf("release %s until %s", f.visitor, f.expires.Format("15:04:05.000"))
	d.same("release",
		d.mem.Release(d.ctx, d.room, f.visitor, pass, f.expires, d.now, d.lim),
		d.red.Release(d.ctx, d.room, f.visitor, pass, f.expires, d.now, d.lim))
}

// leave has a fan leave the line: waiting, at the front, in session or
// after.
func (d *differ) leave() {
	d.t.Helper()
	if len(d.fans) == 0 {
		return
	}
	f := d.fans[d.lrng.IntN(len(d.fans))]
	d.logf("leave %s place %d", f.visitor, f.key)
	d.same("leave",
		d.mem.Leave(d.ctx, d.room, f.visitor, f.key, d.now, d.lim),
		d.red.Leave(d.ctx, d.room, f.visitor, f.key, d.now, d.lim))
}

// raise re-initialises the existing room with floors partly above its counters.
func (d *differ) raise() {
	d.t.Helper()
	s, err := d.mem.Snapshot(d.ctx, d.room, d.now, 0)
	if err != nil {
		d.fail("snapshot: %v", err)
	}
	c := s.Counters
	c.Seq += uint64(d.rng.IntN(3))
	c.Abandoned += uint64(d.rng.IntN(2))
	if c.Serving > 0 {
		c.Serving -= uint64(d.rng.IntN(2))
	}
	d.logf("init over the room with %+v", c)
	d.init(waitingroom.Recall{Counters: c, Held: 3, HeldUntil: d.now.Add(time.Minute)})
}

// lose makes both stores lose the room and re-seeds them from the last state,
// as a gateway node does.
func (d *differ) lose() {
	d.t.Helper()
	s, err := d.mem.Snapshot(d.ctx, d.room, d.now, 0)
	if err != nil {
		d.fail("snapshot: %v", err)
	}
	ovr, ver, err := d.mem.Overrides(d.ctx, d.room)
	if err != nil {
		d.fail("overrides: %v", err)
	}
	d.logf("store lost the room; re-seeding from %+v", s.Counters)
	d.mem.(*memstore.Store).Drop(d.room)
	if err := d.red.(*redisstore.Store).Drop(d.ctx, d.room); err != nil {
		d.fail("drop: %v", err)
	}
	_, errA := d.mem.Join(d.ctx, d.room, "lost", d.now, d.lim)
	_, errB := d.red.Join(d.ctx, d.room, "lost", d.now, d.lim)
	d.same("join after the loss", errA, errB)
	forgotten := s.Serving
	if len(s.Batches) > 0 {
		if lane, _ := waitingroom.LaneOfPlace(s.Batches[0].Start); lane == 0 {
			forgotten = s.Batches[0].Start
		}
	}
	whole := waitingroom.Recall{
		Whole:            true,
		Counters:         s.Counters,
		Held:             s.Active + s.Pending,
		HeldUntil:        d.now.Add(d.lim.Session),
		DrawClosed:       s.DrawClosed,
		DrawSize:         s.DrawSize,
		Batches:          s.Batches,
		Epochs:           s.Epochs,
		Overrides:        ovr,
		OverridesVersion: ver,
		Forgotten:        forgotten,
		Lanes:            s.Lanes,
		LaneCredit:       s.LaneCredit,
		LaneSpec:         s.LaneSpec,
	}
	if d.rng.IntN(2) == 0 {
		d.init(whole)
		return
	}
	// The nodes that knew were lost too: a node that ran the room re-creates
	// it blank and settling, fans re-announce the line, and sometimes a node
	// that knew turns up late with its whole view.
	d.logf("re-created blank, settling")
	d.init(waitingroom.Recall{SettleUntil: d.now.Add(time.Duration(1+d.rng.IntN(3)) * time.Second)})
	_, errA = d.mem.Join(d.ctx, d.room, "early", d.now, d.lim)
	_, errB = d.red.Join(d.ctx, d.room, "early", d.now, d.lim)
	d.same("join while settling", errA, errB)
	ann := waitingroom.Recall{
		Counters:  waitingroom.Counters{Seq: s.Seq, Serving: forgotten, Admitted: forgotten},
		Forgotten: forgotten,
	}
	for _, f := range d.fans {
		if f.expires.After(d.now) && d.rng.IntN(2) == 0 {
			ann.Sessions = append(ann.Sessions, waitingroom.HeldSession{Visitor: f.visitor, Until: f.expires, Forget: f.expires.Add(d.lim.Retention)})
		}
	}
	d.init(ann)
	if d.rng.IntN(2) == 0 {
		d.init(whole)
	}
}

// beat marks some fans' places as seen, and some of their sessions as used.
func (d *differ) beat() {
	d.t.Helper()
	var b waitingroom.Beats
	for range d.rng.IntN(8) {
		if len(d.fans) == 0 {
			break
		}
		f := d.fans[d.rng.IntN(len(d.fans))]
		b.Places = append(b.Places, f.key)
		if d.rng.IntN(2) == 0 {
			b.Sessions = append(b.Sessions, f.visitor)
		}
	}
	d.logf("beat places %v sessions %v", b.Places, b.Sessions)
	d.same("beat", d.mem.Beat(d.ctx, d.room, b, d.now, d.lim), d.red.Beat(d.ctx, d.room, b, d.now, d.lim))
}

func (d *differ) drawSeed() {
	d.t.Helper()
	cand := []byte(fmt.Sprintf("seed-%d", d.rng.Int()))
	d.logf("draw seed %s", cand)
	a, atA, errA := d.mem.DrawSeed(d.ctx, d.room, cand, d.now)
	b, atB, errB := d.red.DrawSeed(d.ctx, d.room, cand, d.now)
	d.same("draw seed", errA, errB)
	if string(a) != string(b) || !atA.Equal(atB) {
		d.fail("draw seed: memory store %q at %v, Redis store %q at %v", a, atA, b, atB)
	}
}

func (d *differ) saveOverrides() {
	d.t.Helper()
	_, v, err := d.mem.Overrides(d.ctx, d.room)
	if err != nil {
		d.fail("overrides: %v", err)
	}
	expect := v - int64(d.rng.IntN(2)) // now and then a stale version
	data := []byte(fmt.Sprintf(`{"rate":%d}`, d.rng.IntN(1000)))
	d.logf("save overrides %s expecting v%d", data, expect)
	a, errA := d.mem.SaveOverrides(d.ctx, d.room, data, expect)
	b, errB := d.red.SaveOverrides(d.ctx, d.room, data, expect)
	d.same("save overrides", errA, errB)
	if a != b {
		d.fail("save overrides: memory store v%d, Redis store v%d", a, b)
	}
	dataA, va, errA := d.mem.Overrides(d.ctx, d.room)
	dataB, vb, errB := d.red.Overrides(d.ctx, d.room)
	d.same("overrides", errA, errB)
	if string(dataA) != string(dataB) || va != vb {
		d.fail("overrides: memory store %q v%d, Redis store %q v%d", dataA, va, dataB, vb)
	}
}

func (d *differ) compareSnapshots(cursor int64) {
	d.t.Helper()
	a, errA := d.mem.Snapshot(d.ctx, d.room, d.now, cursor)
	b, errB := d.red.Snapshot(d.ctx, d.room, d.now, cursor)
	d.same("snapshot", errA, errB)
	revs := func(rs []waitingroom.Revocation) string {
		var sb strings.Builder
		for _, r := range rs {
			fmt.Fprintf(&sb, "%d/%s/%d/%s/%d ", r.Cursor, r.PassID, r.ExpiresAt.UnixMicro(), r.Visitor, r.IdledAt.UnixMicro())
		}
		return sb.String()
	}
	ra, rb := revs(a.Revocations), revs(b.Revocations)
	a.Revocations, b.Revocations = nil, nil
	d.skipped, d.idled = max(d.skipped, b.Skipped), max(d.idled, b.IdledOut)
	if !reflect.DeepEqual(a, b) || ra != rb {
		d.fail("snapshot after cursor %d:\n  memory store %+v %s\n  Redis store  %+v %s", cursor, a, ra, b, rb)
	}
	ha, errA := d.mem.History(d.ctx, d.room, 0, waitingroom.MaxHistoryPage)
	hb, errB := d.red.History(d.ctx, d.room, 0, waitingroom.MaxHistoryPage)
	d.same("history", errA, errB)
	entries := func(h []waitingroom.HistoryEntry) string {
		var sb strings.Builder
		for _, e := range h {
			fmt.Fprintf(&sb, "%s/%d/%d/%d/%d ", e.Kind, e.Start, e.Count, e.Number, e.At.UnixMicro())
		}
		return sb.String()
	}
	if ea, eb := entries(ha), entries(hb); ea != eb {
		d.fail("history:\n  memory store %s\n  Redis store  %s", ea, eb)
	}
}

// joinLanes joins a batch of one to four joiners to random lanes (a lane the
// room lacks is the general lane) and requires both stores to place them
// alike; the fans then claim, leave and beat as the others do.
func (d *differ) joinLanes() {
	d.t.Helper()
	names := []string{"", "general", "presale", "members", "nosuchlane"}
	batch := make([]waitingroom.Joiner, 1+d.nrng.IntN(4))
	for i := range batch {
		batch[i] = waitingroom.Joiner{Visitor: fmt.Sprintf("n%d-%d", len(d.fans), i), Lane: names[d.nrng.IntN(len(names))]}
	}
	d.logf("join lanes %+v", batch)
	a, errA := d.mem.JoinMany(d.ctx, d.room, batch, d.now, d.lim)
	b, errB := d.red.JoinMany(d.ctx, d.room, batch, d.now, d.lim)
	d.same("join lanes", errA, errB)
	if errA != nil {
		return
	}
	for i := range batch {
		x, y := a[i], b[i]
		if x.Key != y.Key || x.Admitted != y.Admitted || !x.Expires.Equal(y.Expires) || x.Refused != y.Refused {
			d.fail("join lanes %+v: memory store %+v, Redis store %+v", batch[i], x, y)
		}
		d.fans = append(d.fans, diffFan{visitor: batch[i].Visitor, key: x.Key, expires: x.Expires})
	}
}
