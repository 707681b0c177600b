package waitingroom_test

import (
	"context"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/foyer-dev/foyer/internal/redistest"
	"github.com/foyer-dev/foyer/waitingroom"
	"github.com/foyer-dev/foyer/waitingroom/memstore"
	"github.com/foyer-dev/foyer/waitingroom/redisstore"
)

// Liveness through the room: what fans are told and what the controller
// spends, with both stores, and two nodes on one Redis.

// twoNodes is a room served by two nodes, on one store: a memory store both
// share, or one Redis each reaches with a client of its own.
type twoNodes struct {
	t      testing.TB
	ctx    context.Context
	clock  interface{ Now() time.Time }
	adv    func(time.Duration)
	a, b   *waitingroom.Room
	stores [2]waitingroom.Store
	key    *waitingroom.SigningKey
	s      waitingroom.Settings
	room   string
}

type backend struct {
	name string
	// stores returns the two nodes' handles on one backend.
	stores func(t *testing.T) [2]waitingroom.Store
}

var backends = []backend{
	{"memory", func(*testing.T) [2]waitingroom.Store {
		s := memstore.New()
		return [2]waitingroom.Store{s, s}
	}},
	{"redis", func(t *testing.T) [2]waitingroom.Store {
		shared := redistest.Shared(t)
		prefix := redistest.Prefix(t, shared)
		var out [2]waitingroom.Store
		for i := range out {
			c := redis.NewClient(&redis.Options{Addr: shared.Options().Addr})
			t.Cleanup(func() { c.Close() })
			s, err := redisstore.New(c, redisstore.WithPrefix(prefix))
			if err != nil {
				t.Fatal(err)
			}
			out[i] = s
		}
		return out
	}},
}

func newTwoNodes(t testing.TB, stores [2]waitingroom.Store, s waitingroom.Settings) *twoNodes {
	c := newClock()
	e := &twoNodes{t: t, ctx: context.Background(), clock: c, adv: c.Advance, stores: stores, key: mustKey(t), s: s, room: "live"}
	e.a, e.b = e.node(0), e.node(1)
	return e
}

func (e *twoNodes) node(i int) *waitingroom.Room {
	e.t.Helper()
	r, err := waitingroom.NewRoom(waitingroom.Config{ID: e.room, Settings: e.s, Store: e.stores[i], Key: e.key, Now: e.clock.Now})
	if err != nil {
		e.t.Fatal(err)
	}
	if err := r.Start(e.ctx); err != nil {
		e.t.Fatal(err)
	}
	return r
}

// fan is a waiting fan with a browser: a ticket, and when to look next.
type fan struct {
	t    waitingroom.Ticket
	next time.Time
	pass string
	last waitingroom.Status
}

// half lets half a second pass: every node ticks, and every fan whose time
// has come polls (through node a or b in turn), as the page does.
func (e *twoNodes) half(fans []*fan) {
	e.t.Helper()
	e.adv(500 * time.Millisecond)
	for _, r := range []*waitingroom.Room{e.a, e.b} {
		if err := r.Tick(e.ctx); err != nil {
			e.t.Fatalf("tick: %v", err)
		}
	}
	now := e.clock.Now()
	for i, f := range fans {
		if f.pass != "" || now.Before(f.next) {
			continue
		}
		r := e.a
		if (i+int(now.Unix()))%2 == 1 {
			r = e.b
		}
		v, err := r.Poll(e.ctx, f.t)
		if err != nil {
			e.t.Fatalf("poll: %v", err)
		}
		f.t, f.last, f.pass = v.Ticket, v.Status, v.Pass
		f.next = now.Add(time.Duration(v.Status.RefreshSeconds) * time.Second)
	}
}

func (e *twoNodes) run(d time.Duration, fans []*fan) {
	e.t.Helper()
	for range int(d / (500 * time.Millisecond)) {
		e.half(fans)
	}
}

// ghosts makes n places as a bot without cookies would: every request a new
// visitor, never seen again.
func (e *twoNodes) ghosts(n int) {
	e.t.Helper()
	for range n {
		if _, err := e.a.Join(e.ctx); err != nil {
			e.t.Fatal(err)
		}
	}
}

func (e *twoNodes) fans(n int) []*fan {
	e.t.Helper()
	var out []*fan
	for i := range n {
		r := e.b
		if i%2 == 0 {
			r = e.a
		}
		v, err := r.Join(e.ctx)
		if err != nil {
			e.t.Fatal(err)
		}
		out = append(out, &fan{t: v.Ticket, last: v.Status, pass: v.Pass,
			next: e.clock.Now().Add(time.Duration(v.Status.RefreshSeconds) * time.Second)})
	}
	return out
}

func (e *twoNodes) snap() waitingroom.Snapshot {
	e.t.Helper()
	s, err := e.stores[0].Snapshot(e.ctx, e.room, e.clock.Now(), 0)
	if err != nil {
		e.t.Fatal(err)
	}
	return s
}

func (e *twoNodes) patch(o waitingroom.Overrides) {
	e.t.Helper()
	if _, err := e.a.Patch(e.ctx, o); err != nil {
		e.t.Fatal(err)
	}
}

// TestGhostPlacesNotCountedNorServed: 1,000 places made by cookieless
// requests, then 20 fans who poll as the page says. Once a timeout has passed
// the fans are told only the live fans ahead of them (give or take one
// refresh), and when the line opens they are admitted without the controller
// spending one slot on the ghosts.
func TestGhostPlacesNotCountedNorServed(t *testing.T) {
	for _, be := range backends {
		t.Run(be.name, func(t *testing.T) {
			e := newTwoNodes(t, be.stores(t), waitingroom.Settings{
				NewUsersPerMinute: 60, TotalActiveUsers: 100, QueueAll: true,
			})
			e.ghosts(1000)
			fans := e.fans(20)
			e.run(20*time.Second, fans)
			if p := *fans[19].last.Position; p < 1000 {
				t.Fatalf("last fan before a timeout passed: position %d; ghosts that joined just now are not judged yet", p)
			}
			// The idle timeout (2m) and a heartbeat window later.
			e.run(160*time.Second, fans)
			for i, f := range fans {
				p := *f.last.Position
				if p > uint64(i)+1 || p+1 < uint64(i) {
					t.Fatalf("fan %d is told %d ahead; %d live fans are", i, p, i)
				}
			}
			if in := e.a.Info(); in.Places != 1020 || in.Waiting > 21 {
				t.Fatalf("line: %d places, %d waiting; want 1020 places and about 20 waiting", in.Places, in.Waiting)
			}
			e.patch(waitingroom.OverridesOf(waitingroom.Settings{}, "queue_all"))
			e.run(40*time.Second, fans)
			for i, f := range fans {
				if f.pass == "" {
					t.Fatalf("fan %d not admitted 40 s after the line opened: %+v", i, f.last)
				}
			}
			s := e.snap()
			if s.Skipped != 1000 || s.Abandoned != 0 || s.Admitted != 20 {
				t.Fatalf("skipped %d, abandoned %d, admitted %d: want every ghost skipped and no slot spent on one", s.Skipped, s.Abandoned, s.Admitted)
			}
		})
	}
}

// TestGhostsCostAtMostOneTimeout: in a room open from the start, the ghosts
// that joined in the first crowd cost a slot each only while they are too
// young to judge: the controller spends slots on ghosts for one idle timeout
// (and a heartbeat window) at most.
func TestGhostsCostAtMostOneTimeout(t *testing.T) {
	for _, be := range backends {
		t.Run(be.name, func(t *testing.T) {
			e := newTwoNodes(t, be.stores(t), waitingroom.Settings{NewUsersPerMinute: 60, TotalActiveUsers: 100})
			e.ghosts(1000)
			fans := e.fans(20)
			e.run(200*time.Second, fans)
			for i, f := range fans {
				if f.pass == "" {
					t.Fatalf("fan %d not admitted: %+v", i, f.last)
				}
			}
			s := e.snap()
			// One a second, for at most the timeout and a window.
			if most := uint64(2*60 + 30 + 2); s.Abandoned+uint64(s.Pending) > most || s.Skipped < 1000-most {
				t.Fatalf("abandoned %d, pending %d, skipped %d: ghosts cost more than one timeout of slots", s.Abandoned, s.Pending, s.Skipped)
			}
		})
	}
}

// TestWebSocketFanNeverSkipped: a fan whose page keeps a WebSocket open and
// never polls is seen through the pushes, and is never skipped.
func TestWebSocketFanNeverSkipped(t *testing.T) {
	for _, be := range backends {
		t.Run(be.name, func(t *testing.T) {
			e := newTwoNodes(t, be.stores(t), waitingroom.Settings{NewUsersPerMinute: 60, TotalActiveUsers: 100, QueueAll: true})
			e.ghosts(50)
			ws := e.fans(1)[0]
			for range 400 { // 200 s, a push looked at every refresh
				e.half(nil)
				st, tk := e.b.Peek(ws.t)
				ws.t, ws.last = tk, st
			}
			if p := *ws.last.Position; p != 0 {
				t.Fatalf("fan on a WebSocket told %d ahead, want 0: the 50 ghosts are not live", p)
			}
			e.patch(waitingroom.OverridesOf(waitingroom.Settings{}, "queue_all"))
			e.run(2*time.Second, nil)
			if st, _ := e.b.Peek(ws.t); st.State != waitingroom.StateAdmitted {
				t.Fatalf("fan on a WebSocket: %s, want admitted", st.State)
			}
			if s := e.snap(); s.Skipped != 50 || s.Admitted != 1 || s.Pending != 1 {
				t.Fatalf("skipped %d admitted %d pending %d; want the ghosts skipped and the fan admitted", s.Skipped, s.Admitted, s.Pending)
			}
		})
	}
}

// TestIdleSessionFreesSlot: an admitted fan who sends no request for
// session_idle_timeout loses the session and the slot goes to the next fan;
// their pass is refused from then on, on every node, and presenting it gets
// them back in line as a lapsed admission, at the front.
func TestIdleSessionFreesSlot(t *testing.T) {
	for _, be := range backends {
		t.Run(be.name, func(t *testing.T) {
			e := newTwoNodes(t, be.stores(t), waitingroom.Settings{
				NewUsersPerMinute: 60, TotalActiveUsers: 2, SessionIdleTimeout: time.Minute,
			})
			in := e.fans(2) // the first walks in, the second in the next step
			e.run(3*time.Second, in)
			for i, f := range in {
				if f.pass == "" {
					t.Fatalf("fan %d not admitted: %+v", i, f.last)
				}
			}
			next := e.fans(1)
			for sec := range 90 {
				// Fan 0 shops on node b all along; fan 1 stops after 5 s.
				if _, err := e.b.CheckPass(in[0].pass); err != nil {
					t.Fatalf("busy fan's pass refused at %d s: %v", sec, err)
				}
				if sec < 5 {
					if _, err := e.a.CheckPass(in[1].pass); err != nil {
						t.Fatal(err)
					}
				}
				e.run(time.Second, next)
			}
			if next[0].pass == "" {
				t.Fatalf("the slot of the idle fan did not go to the next: %+v", next[0].last)
			}
			if s := e.snap(); s.IdledOut != 1 || s.Active != 2 {
				t.Fatalf("idled out %d, active %d; want 1 and 2", s.IdledOut, s.Active)
			}
			for _, r := range []*waitingroom.Room{e.a, e.b} {
				if _, err := r.CheckPass(in[1].pass); err == nil {
					t.Fatal("the idled-out session's pass is still honoured")
				}
			}
			// Coming back: a lapsed admission; no slot is free yet.
			v, err := e.b.Poll(e.ctx, in[1].t)
			if err != nil || v.Pass != "" || v.Rejoined || v.Status.State != waitingroom.StateQueued || *v.Status.Position != 0 {
				t.Fatalf("idled-out fan back while the room is full: %+v rejoined %v (%v); want first in line", v.Status, v.Rejoined, err)
			}
			if err := e.a.Revoke(e.ctx, e.pass(e.a, in[0].pass)); err != nil {
				t.Fatal(err)
			}
			e.run(time.Second, nil)
			v, err = e.a.Poll(e.ctx, v.Ticket)
			if err != nil || v.Pass == "" {
				t.Fatalf("idled-out fan once a slot freed: %+v (%v); want a new pass", v.Status, err)
			}
			if _, err := e.b.CheckPass(v.Pass); err != nil {
				t.Fatalf("the pass given on coming back is refused: %v", err)
			}
		})
	}
}

func (e *twoNodes) pass(r *waitingroom.Room, tok string) waitingroom.Pass {
	e.t.Helper()
	p, err := r.CheckPass(tok)
	if err != nil {
		e.t.Fatal(err)
	}
	return p
}

// TestRestartsNeverSkipPollingFans: a node restart and a Redis restart lose at
// most one window of heartbeats, and never get a fan who kept polling
// skipped: with the store's history gone, nobody is judged until a whole
// timeout of beats is in again, but for the re-seed's margin of places nobody
// was given, which are passed over without a slot.
func TestRestartsNeverSkipPollingFans(t *testing.T) {
	srv := redistest.StartServer(t, nil)
	var stores [2]waitingroom.Store
	for i := range stores {
		c := redis.NewClient(&redis.Options{Addr: srv.Addr, MaxRetries: -1})
		t.Cleanup(func() { c.Close() })
		s, err := redisstore.New(c)
		if err != nil {
			t.Fatal(err)
		}
		stores[i] = s
	}
	e := newTwoNodes(t, stores, waitingroom.Settings{NewUsersPerMinute: 600, TotalActiveUsers: 1000, QueueAll: true})
	e.ghosts(100)
	fans := e.fans(10)
	e.run(100*time.Second, fans)

	// Node b restarts: what it gathered and had not sent is lost.
	e.b = e.node(1)
	e.run(60*time.Second, fans)

	// Redis restarts empty; the nodes re-seed it.
	srv.Stop(t)
	srv.Restart(t)
	for range 4 {
		e.adv(500 * time.Millisecond)
		_ = e.a.Tick(e.ctx)
		_ = e.b.Tick(e.ctx)
	}
	if !e.a.Healthy() || !e.b.Healthy() {
		t.Fatal("nodes did not come back after Redis restarted")
	}
	// Open just before a whole timeout of beats is in again: nobody may be
	// judged yet, and the ghosts get slots.
	e.run(100*time.Second, fans)
	if s := e.snap(); s.Live.Young != 0 {
		t.Fatalf("places judged %d s after the store lost its beats", 100)
	}
	e.patch(waitingroom.OverridesOf(waitingroom.Settings{}, "queue_all"))
	e.run(20*time.Second, fans)
	for i, f := range fans {
		if f.pass == "" {
			t.Fatalf("fan %d not admitted: %+v", i, f.last)
		}
	}
	// The only places passed over are the re-seed's margin, which nobody
	// holds: no fan who kept polling, and no ghost the short history could
	// not judge.
	s := e.snap()
	if margin := s.Margin[1] - s.Margin[0]; margin == 0 || s.Skipped != margin {
		t.Fatalf("skipped %d places while the store's history of beats was short, want the margin's %d (%v)", s.Skipped, margin, s.Margin)
	}
}

// TestRestartedNodeKeepsFansLive: after a node restart, the fans it served
// and keep polling it stay live: its lost marks are one window's at most, and
// the other windows hold them.
func TestRestartedNodeKeepsFansLive(t *testing.T) {
	for _, be := range backends {
		t.Run(be.name, func(t *testing.T) {
			e := newTwoNodes(t, be.stores(t), waitingroom.Settings{NewUsersPerMinute: 600, TotalActiveUsers: 100, QueueAll: true})
			e.ghosts(100)
			fans := e.fans(10)
			e.run(170*time.Second, fans)
			e.b = e.node(1)
			e.a = e.node(0)
			e.run(5*time.Second, fans)
			e.patch(waitingroom.OverridesOf(waitingroom.Settings{}, "queue_all"))
			e.run(20*time.Second, fans)
			for i, f := range fans {
				if f.pass == "" {
					t.Fatalf("fan %d not admitted: %+v", i, f.last)
				}
			}
			if s := e.snap(); s.Skipped != 100 || s.Abandoned != 0 {
				t.Fatalf("skipped %d abandoned %d; want the 100 ghosts skipped and no fan", s.Skipped, s.Abandoned)
			}
		})
	}
}

// TestHeartbeatsCostOneRoundTripPerNodePerSecond: 10,000 fans polling
// through two nodes cost each node at most one store round trip a second for
// their heartbeats, counted on a private redis-server with INFO
// commandstats against the same nodes ticking with nobody polling.
func TestHeartbeatsCostOneRoundTripPerNodePerSecond(t *testing.T) {
	srv := redistest.StartServer(t, nil)
	admin := redis.NewClient(&redis.Options{Addr: srv.Addr})
	t.Cleanup(func() { admin.Close() })
	// A flush writes each block's marks whole: one SETRANGE of its bits,
	// or one BITFIELD of a few scattered ones.
	calls := func() (scripts, writes int64) {
		c := redistest.CommandCalls(context.Background(), t, admin)
		return c["evalsha"] + c["eval"], c["setrange"] + c["bitfield"]
	}
	var stores [2]waitingroom.Store
	for i := range stores {
		c := redis.NewClient(&redis.Options{Addr: srv.Addr})
		t.Cleanup(func() { c.Close() })
		s, err := redisstore.New(c)
		if err != nil {
			t.Fatal(err)
		}
		stores[i] = s
	}
	e := newTwoNodes(t, stores, waitingroom.Settings{NewUsersPerMinute: 600, TotalActiveUsers: 100, QueueAll: true})
	fans := e.fans(10_000)
	e.run(5*time.Second, nil) // settle: the draw of script loads and first reads

	const seconds = 20
	before, _ := calls()
	e.run(seconds*time.Second, nil)
	idle, _ := calls()
	_, marksBefore := calls()
	beatsBefore := e.a.Stats().Beats.Load() + e.b.Stats().Beats.Load()
	for i, f := range fans {
		// Spread over the page's interval, as fans who came at different
		// moments are: some poll in every half second.
		f.next = e.clock.Now().Add(time.Duration(i%26) * 500 * time.Millisecond)
	}
	e.run(seconds*time.Second, fans)
	busy, marksAfter := calls()

	polls := e.a.Stats().Polls.Load() + e.b.Stats().Polls.Load()
	extra := (busy - idle) - (idle - before)
	beats := e.a.Stats().Beats.Load() + e.b.Stats().Beats.Load() - beatsBefore
	t.Logf("%d polls in %d s: %d script calls idle, %d with the fans polling; %d heartbeat flushes, %d block writes",
		polls, seconds, idle-before, busy-idle, beats, marksAfter-marksBefore)
	if polls < 10_000 {
		t.Fatalf("only %d polls: the fans did not poll", polls)
	}
	// The two periods may differ by a controller step per node, as their
	// seconds fall.
	if beats > 2*seconds || extra > int64(beats)+2 {
		t.Fatalf("heartbeats cost %d round trips (%d flushes) in %d s on 2 nodes; at most one a node a second", extra, beats, seconds)
	}
	if marksAfter-marksBefore < int64(beats) {
		t.Fatalf("%d block writes in %d heartbeat flushes of 10,000 fans polling for %d s: marks are not written", marksAfter-marksBefore, beats, seconds)
	}
}

// BenchmarkStoreRoundTripsUnderPollingFans: 100,000 fans polling through two
// nodes on a private redis-server for 20 s of room time; it reports the
// store round trips (scripts run, INFO commandstats) per node per second:
// all of them, and those the heartbeats added over the same nodes with nobody
// polling. A poll itself costs none.
func BenchmarkStoreRoundTripsUnderPollingFans(b *testing.B) {
	srv := redistest.StartServer(b, nil)
	admin := redis.NewClient(&redis.Options{Addr: srv.Addr})
	defer admin.Close()
	scripts := func() int64 {
		c := redistest.CommandCalls(context.Background(), b, admin)
		return c["evalsha"] + c["eval"]
	}
	var total, beats float64
	for iter := range b.N {
		var stores [2]waitingroom.Store
		for i := range stores {
			c := redis.NewClient(&redis.Options{Addr: srv.Addr})
			defer c.Close()
			s, err := redisstore.New(c, redisstore.WithPrefix(fmt.Sprintf("b%d", iter)))
			if err != nil {
				b.Fatal(err)
			}
			stores[i] = s
		}
		e := newBenchNodes(b, stores)
		fans := e.fans(100_000)
		e.run(5*time.Second, nil)
		const seconds = 20
		s0 := scripts()
		e.run(seconds*time.Second, nil)
		s1 := scripts()
		for i, f := range fans {
			f.next = e.clock.Now().Add(time.Duration(i%26) * 500 * time.Millisecond)
		}
		e.run(seconds*time.Second, fans)
		s2 := scripts()
		total += float64(s2-s1) / (2 * seconds)
		beats += float64((s2-s1)-(s1-s0)) / (2 * seconds)
	}
	b.ReportMetric(total/float64(b.N), "round-trips/node/s")
	b.ReportMetric(beats/float64(b.N), "heartbeat-round-trips/node/s")
	b.ReportMetric(0, "ns/op")
}

func newBenchNodes(b *testing.B, stores [2]waitingroom.Store) *twoNodes {
	return newTwoNodes(b, stores, waitingroom.Settings{NewUsersPerMinute: 600, TotalActiveUsers: 100, QueueAll: true})
}

// TestHeartbeatsUnderContention: polls, pushes and admitted requests mark
// from many goroutines while the node flushes; run with -race.
func TestHeartbeatsUnderContention(t *testing.T) {
	s := memstore.New()
	e := newTwoNodes(t, [2]waitingroom.Store{s, s}, waitingroom.Settings{NewUsersPerMinute: 60, TotalActiveUsers: 10, QueueAll: true})
	in := e.fans(1)[0] // walks in
	fans := e.fans(200)
	done, busy := make(chan struct{}), make(chan struct{})
	var once sync.Once
	var wg sync.WaitGroup
	for g := range 8 {
		wg.Go(func() {
			for i := 0; ; i++ {
				if i == 100 {
					once.Do(func() { close(busy) })
				}
				select {
				case <-done:
					return
				default:
				}
				f := fans[(g*31+i)%len(fans)]
				if i%2 == 0 {
					if _, err := e.a.Poll(e.ctx, f.t); err != nil {
						t.Error(err)
						return
					}
				} else {
					e.a.Peek(f.t)
				}
				if in.pass != "" {
					_, _ = e.a.CheckPass(in.pass)
				}
			}
		})
	}
	<-busy // ticks while the marks pour in
	for range 20 {
		e.adv(500 * time.Millisecond)
		if err := e.a.Tick(e.ctx); err != nil {
			t.Fatal(err)
		}
	}
	close(done)
	wg.Wait()
	if e.a.Stats().Beats.Load() == 0 {
		t.Fatal("no heartbeat was sent")
	}
}
