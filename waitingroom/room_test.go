package waitingroom_test

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"math/rand/v2"
	"sync"
	"testing"
	"time"

	"github.com/foyer-dev/foyer/internal/clock"
	"github.com/foyer-dev/foyer/waitingroom"
	"github.com/foyer-dev/foyer/waitingroom/memstore"
	"github.com/foyer-dev/foyer/waitingroom/storetest"
)

func newClock() *clock.Manual { return clock.NewManual(time.Date(2026, 6, 1, 10, 0, 0, 0, time.UTC)) }

type roomEnv struct {
	t     *testing.T
	ctx   context.Context
	clock *clock.Manual
	store waitingroom.Store
	key   *waitingroom.SigningKey
}

func newEnv(t *testing.T) *roomEnv {
	return &roomEnv{t: t, ctx: context.Background(), clock: newClock(), store: memstore.New(), key: mustKey(t)}
}

// node starts a gateway node's handle on the room.
func (e *roomEnv) node(id string, s waitingroom.Settings) *waitingroom.Room {
	e.t.Helper()
	r, err := waitingroom.NewRoom(waitingroom.Config{ID: id, Settings: s, Store: e.store, Key: e.key, Now: e.clock.Now})
	if err != nil {
		e.t.Fatal(err)
	}
	if err := r.Start(e.ctx); err != nil {
		e.t.Fatal(err)
	}
	return r
}

// step lets n seconds pass, ticking every node once per half second.
func (e *roomEnv) step(n int, nodes ...*waitingroom.Room) {
	e.t.Helper()
	for range 2 * n {
		e.clock.Advance(500 * time.Millisecond)
		for _, r := range nodes {
			if err := r.Tick(e.ctx); err != nil {
				e.t.Fatalf("tick: %v", err)
			}
		}
	}
}

func (e *roomEnv) join(r *waitingroom.Room) waitingroom.Visit {
	e.t.Helper()
	v, err := r.Join(e.ctx)
	if err != nil {
		e.t.Fatalf("join: %v", err)
	}
	return v
}

func (e *roomEnv) poll(r *waitingroom.Room, tk waitingroom.Ticket) waitingroom.Visit {
	e.t.Helper()
	v, err := r.Poll(e.ctx, tk)
	if err != nil {
		e.t.Fatalf("poll: %v", err)
	}
	return v
}

func (e *roomEnv) pass(r *waitingroom.Room, tok string) waitingroom.Pass {
	e.t.Helper()
	p, err := r.CheckPass(tok)
	if err != nil {
		e.t.Fatalf("pass refused: %v", err)
	}
	return p
}

func TestCapOneFirstInSecondWaitsUntilRevoked(t *testing.T) {
	e := newEnv(t)
	r := e.node("concert", waitingroom.Settings{TotalActiveUsers: 1, NewUsersPerMinute: 60})
	first := e.join(r)
	if first.Pass == "" || first.Status.State != waitingroom.StateAdmitted || !first.Ticket.Claimed {
		t.Fatalf("first visitor: %+v, want admitted with a pass", first.Status)
	}
	second := e.join(r)
	// The node's view may be half a second old, so "next" may show as one ahead.
	if second.Pass != "" || second.Status.State != waitingroom.StateQueued || *second.Status.Position > 1 {
		t.Fatalf("second visitor: %+v, want queued, next in line", second.Status)
	}
	e.step(1, r)
	if v := e.poll(r, second.Ticket); *v.Status.Position != 0 {
		t.Fatalf("second visitor after a refresh: position %d, want 0", *v.Status.Position)
	}
	e.step(5, r)
	if v := e.poll(r, second.Ticket); v.Status.State != waitingroom.StateQueued {
		t.Fatalf("second visitor while the first holds the only slot: %s", v.Status.State)
	}
	if err := r.Revoke(e.ctx, e.pass(r, first.Pass)); err != nil {
		t.Fatal(err)
	}
	if _, err := r.CheckPass(first.Pass); !errors.Is(err, waitingroom.ErrInvalidPass) {
		t.Fatalf("revoked pass: %v, want refused", err)
	}
	e.step(1, r)
	v := e.poll(r, second.Ticket)
	if v.Status.State != waitingroom.StateAdmitted || v.Pass == "" {
		t.Fatalf("second visitor after the first was revoked: %+v", v.Status)
	}
	if p := e.pass(r, v.Pass); p.Subject != second.Ticket.Visitor.String() || p.Room != "concert" {
		t.Fatalf("pass %+v is not for the second visitor", p)
	}
	// The first visitor's ticket is spent: coming back puts them at the back.
	again := e.poll(r, first.Ticket)
	if !again.Rejoined || again.Ticket.Key <= second.Ticket.Key {
		t.Fatalf("first visitor after revocation: rejoined %v key %d, want a new key after %d", again.Rejoined, again.Ticket.Key, second.Ticket.Key)
	}
}

func TestControllerAdmitsAtTheRate(t *testing.T) {
	e := newEnv(t)
	r := e.node("concert", waitingroom.Settings{TotalActiveUsers: 1000, NewUsersPerMinute: 120, QueueAll: true})
	var tickets []waitingroom.Ticket
	for range 100 {
		tickets = append(tickets, e.join(r).Ticket)
	}
	if _, err := r.Patch(e.ctx, waitingroom.OverridesOf(waitingroom.Settings{QueueAll: false}, "queue_all")); err != nil {
		t.Fatal(err)
	}
	// The clock runs from :00.5 to :10.0, so the controller steps in eleven
	// distinct seconds, each admitting two.
	e.step(10, r)
	const want = 22
	admitted := 0
	for i, tk := range tickets {
		v := e.poll(r, tk)
		if v.Status.State == waitingroom.StateAdmitted {
			admitted++
		}
		// Admission is in join order.
		if (i < want) != (v.Status.State == waitingroom.StateAdmitted) {
			t.Fatalf("visitor %d: %s, want the first %d admitted and no others", i, v.Status.State, want)
		}
	}
	if admitted != want {
		t.Fatalf("11 steps at 120/min admitted %d, want %d", admitted, want)
	}
}

func TestAbandonedSlotReleasedAndReturnerLetInFirst(t *testing.T) {
	e := newEnv(t)
	r := e.node("concert", waitingroom.Settings{TotalActiveUsers: 1, NewUsersPerMinute: 600, QueueAll: true})
	a, b, c := e.join(r).Ticket, e.join(r).Ticket, e.join(r).Ticket
	if _, err := r.Patch(e.ctx, waitingroom.OverridesOf(waitingroom.Settings{QueueAll: false}, "queue_all")); err != nil {
		t.Fatal(err)
	}
	e.step(1, r) // A's turn; A is not looking
	e.step(int(waitingroom.DefaultAdmissionGrace/time.Second), r)
	vb := e.poll(r, b)
	if vb.Status.State != waitingroom.StateAdmitted {
		t.Fatalf("B after A's grace ran out: %s, want admitted", vb.Status.State)
	}
	if s := r.Snapshot(); s.Abandoned != 1 {
		t.Fatalf("abandoned %d, want 1", s.Abandoned)
	}
	// A comes back: the slot is B's, so A waits at the front, ahead of C.
	va := e.poll(r, a)
	if va.Status.State != waitingroom.StateQueued || *va.Status.Position != 0 {
		t.Fatalf("A back while full: %+v, want queued at the front", va.Status)
	}
	if err := r.Revoke(e.ctx, e.pass(r, vb.Pass)); err != nil {
		t.Fatal(err)
	}
	e.step(1, r)
	if v := e.poll(r, c); v.Status.State == waitingroom.StateAdmitted {
		t.Fatal("C was let in ahead of the returning A")
	}
	if v := e.poll(r, a); v.Status.State != waitingroom.StateAdmitted || v.Pass == "" {
		t.Fatalf("A after a slot freed: %+v, want admitted", v.Status)
	}
}

func TestPositionNeverRises(t *testing.T) {
	e := newEnv(t)
	r := e.node("concert", waitingroom.Settings{TotalActiveUsers: 40, NewUsersPerMinute: 1200, QueueAll: true})
	rng := rand.New(rand.NewPCG(1, 2))
	const fans = 800
	type fan struct {
		tk       waitingroom.Ticket
		last     uint64
		gaveUp   bool
		leaveAt  int // second at which an admitted fan's shopping is done
		pass     string
		finished bool
	}
	crowd := make([]*fan, fans)
	for i := range crowd {
		crowd[i] = &fan{tk: e.join(r).Ticket, last: ^uint64(0)}
	}
	if _, err := r.Patch(e.ctx, waitingroom.OverridesOf(waitingroom.Settings{QueueAll: false}, "queue_all")); err != nil {
		t.Fatal(err)
	}
	moved := 0
	for sec := range 600 {
		// The show-up rate swings: in some stretches most fans ahead give up, in
		// others all stay. Estimates move with it; no position may go up.
		quitRate := 0.02 * float64((sec/30)%2)
		e.step(1, r)
		for i, f := range crowd {
			switch {
			case f.finished || f.gaveUp:
				continue
			case f.pass != "":
				if sec >= f.leaveAt {
					if err := r.Revoke(e.ctx, e.pass(r, f.pass)); err != nil {
						t.Fatal(err)
					}
					f.finished = true
				}
				continue
			case rng.Float64() < quitRate:
				f.gaveUp = true
				continue
			}
			v := e.poll(r, f.tk)
			f.tk = v.Ticket
			if v.Pass != "" {
				f.pass, f.leaveAt = v.Pass, sec+5+rng.IntN(20)
				continue
			}
			if v.Status.State != waitingroom.StateQueued {
				continue
			}
			pos := *v.Status.Position
			if pos > f.last {
				t.Fatalf("second %d, fan %d: position rose from %d to %d", sec, i, f.last, pos)
			}
			if pos < f.last && f.last != ^uint64(0) {
				moved++
			}
			f.last = pos
		}
	}
	for i, f := range crowd {
		if !f.gaveUp && f.pass == "" {
			t.Fatalf("fan %d neither gave up nor got in within 600 s", i)
		}
	}
	if r.Snapshot().Abandoned == 0 || moved == 0 {
		t.Fatal("the test exercised no abandonment or no movement")
	}
}

func TestPrequeueFairDraw(t *testing.T) {
	e := newEnv(t)
	now := e.clock.Now()
	s := waitingroom.Settings{
		TotalActiveUsers: 1000, NewUsersPerMinute: 6000,
		PrequeueStart:       now.Add(time.Minute),
		EventStart:          now.Add(time.Hour),
		ShuffleAtEventStart: true,
	}
	r := e.node("concert", s)
	info := r.DrawInfo()
	if info.Commitment == "" || info.Seed != "" || info.Closed {
		t.Fatalf("draw before the pre-queue: %+v, want a commitment and no seed", info)
	}
	early := e.join(r)
	if early.Status.State != waitingroom.StateClosed || early.Ticket.Room != "" || early.Status.OpensAt == nil {
		t.Fatalf("visitor before the pre-queue opened: %+v, want closed, no ticket, opens_at", early.Status)
	}
	e.clock.Advance(time.Minute)
	const n = 50
	var regs []waitingroom.Ticket
	for i := range n {
		v := e.join(r)
		if v.Status.State != waitingroom.StatePrequeue || v.Status.Position != nil || *v.Status.DrawIndex != uint64(i) {
			t.Fatalf("registrant %d: %+v, want prequeue, no position yet, draw index %d", i, v.Status, i)
		}
		regs = append(regs, v.Ticket)
	}
	e.clock.Advance(time.Hour - time.Minute - time.Second)
	e.step(2, r) // the sale starts: the draw is made
	info = r.DrawInfo()
	if !info.Closed || info.Seed == "" || *info.DrawSize != n || *info.Size != n {
		t.Fatalf("draw after the start: %+v, want closed, seed revealed, draw_size (and its old name size) %d", info, n)
	}
	seed, _ := hex.DecodeString(info.Seed)
	if sum := sha256.Sum256(seed); hex.EncodeToString(sum[:]) != info.Commitment {
		t.Fatal("revealed seed does not match the commitment")
	}
	// Anyone can recompute every place from the seed, the size and their index.
	d := waitingroom.NewDraw(seed, n)
	late := e.join(r)
	if late.Ticket.Key != n {
		t.Fatalf("first visitor after the start got key %d, want %d (behind the draw)", late.Ticket.Key, n)
	}
	e.step(1, r) // 100 a second: everyone drawn is in
	for i, tk := range regs {
		v := e.poll(r, tk)
		if v.Ticket.Place != d.Place(uint64(i)) {
			t.Fatalf("registrant %d placed at %d, the published draw says %d", i, v.Ticket.Place, d.Place(uint64(i)))
		}
	}
}

func TestDrawOrderIsAdmissionOrder(t *testing.T) {
	e := newEnv(t)
	now := e.clock.Now()
	r := e.node("concert", waitingroom.Settings{
		TotalActiveUsers: 1000, NewUsersPerMinute: 60, // one a second
		EventStart: now.Add(time.Minute), ShuffleAtEventStart: true,
	})
	var regs []waitingroom.Ticket
	for range 20 {
		regs = append(regs, e.join(r).Ticket)
	}
	e.clock.Advance(time.Minute - 500*time.Millisecond)
	e.step(1, r)
	seed, _ := hex.DecodeString(r.DrawInfo().Seed)
	d := waitingroom.NewDraw(seed, 20)
	for sec := range 10 {
		e.step(1, r)
		for i, tk := range regs {
			if tk.Claimed {
				continue // in, with a pass: they no longer poll
			}
			v := e.poll(r, tk)
			regs[i] = v.Ticket
			// The start's own step admitted place 0; each second since, one more.
			want := d.Place(uint64(i)) <= uint64(sec)+1
			if (v.Status.State == waitingroom.StateAdmitted || v.Ticket.Claimed) != want {
				t.Fatalf("second %d: registrant %d (place %d) admitted=%v", sec, i, d.Place(uint64(i)), !want)
			}
		}
	}
}

func TestSoldOutAndClosed(t *testing.T) {
	e := newEnv(t)
	now := e.clock.Now()
	r := e.node("concert", waitingroom.Settings{TotalActiveUsers: 1, EventEnd: now.Add(time.Hour)})
	in := e.join(r)
	waiting := e.join(r)
	if _, err := r.Patch(e.ctx, waitingroom.OverridesOf(waitingroom.Settings{SoldOut: true}, "sold_out")); err != nil {
		t.Fatal(err)
	}
	if v := e.poll(r, waiting.Ticket); v.Status.State != waitingroom.StateSoldOut {
		t.Fatalf("waiting visitor after sell-out: %s", v.Status.State)
	}
	if v := e.join(r); v.Status.State != waitingroom.StateSoldOut || v.Ticket.Room != "" {
		t.Fatalf("new visitor after sell-out: %+v", v.Status)
	}
	// Shoppers inside keep their session to finish checking out.
	e.pass(r, in.Pass)
	if _, err := r.Patch(e.ctx, waitingroom.OverridesOf(waitingroom.Settings{SoldOut: false}, "sold_out")); err != nil {
		t.Fatal(err)
	}
	e.clock.Advance(time.Hour)
	if v := e.join(r); v.Status.State != waitingroom.StateClosed {
		t.Fatalf("visitor after event_end: %s, want closed", v.Status.State)
	}
}

func TestPatchIsSeenByOtherNodes(t *testing.T) {
	e := newEnv(t)
	a := e.node("concert", waitingroom.Settings{})
	b := e.node("concert", waitingroom.Settings{})
	if _, err := a.Patch(e.ctx, waitingroom.OverridesOf(waitingroom.Settings{NewUsersPerMinute: 42, Paused: true}, "new_users_per_minute", "paused")); err != nil {
		t.Fatal(err)
	}
	e.step(1, b)
	if s := b.Settings(); s.NewUsersPerMinute != 42 || !s.Paused {
		t.Fatalf("node B after node A's patch: rate %d paused %v", s.NewUsersPerMinute, s.Paused)
	}
	if _, err := a.Patch(e.ctx, waitingroom.OverridesOf(waitingroom.Settings{TotalActiveUsers: -1}, "total_active_users")); err == nil {
		t.Fatal("a patch making the cap negative was accepted")
	}
	var se *waitingroom.SettingError
	if _, err := a.Patch(e.ctx, waitingroom.OverridesOf(waitingroom.Settings{TotalActiveUsers: 0}, "total_active_users")); !errors.As(err, &se) || se.Setting != "total_active_users" {
		t.Fatalf("invalid patch: %v, want a waitingroom.SettingError naming total_active_users", err)
	}
	e.step(1, b)
	if s := b.Settings(); s.TotalActiveUsers != waitingroom.DefaultTotalActiveUsers {
		t.Fatalf("a refused patch changed the cap to %d", s.TotalActiveUsers)
	}
}

func TestRevocationReachesOtherNodes(t *testing.T) {
	e := newEnv(t)
	a := e.node("concert", waitingroom.Settings{})
	b := e.node("concert", waitingroom.Settings{})
	v := e.join(a)
	p := e.pass(b, v.Pass)
	if err := a.Revoke(e.ctx, p); err != nil {
		t.Fatal(err)
	}
	e.step(1, b)
	if _, err := b.CheckPass(v.Pass); !errors.Is(err, waitingroom.ErrInvalidPass) {
		t.Fatalf("node B honours a pass node A revoked: %v", err)
	}
}

func TestTwoNodesNeverExceedTheCap(t *testing.T) {
	e := newEnv(t)
	const limit = 25
	s := waitingroom.Settings{TotalActiveUsers: limit, NewUsersPerMinute: 6000}
	nodes := []*waitingroom.Room{e.node("concert", s), e.node("concert", s)}
	var (
		mu     sync.Mutex
		passes = map[string]bool{}
		wg     sync.WaitGroup
	)
	for w := range 40 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			r := nodes[w%2]
			for range 10 {
				v, err := r.Join(e.ctx)
				if err != nil {
					t.Error(err)
					return
				}
				for range 20 {
					e.clock.Advance(10 * time.Millisecond)
					if v.Pass != "" {
						mu.Lock()
						passes[v.Ticket.Visitor.String()] = true
						mu.Unlock()
						break
					}
					_ = r.Tick(e.ctx)
					if v, err = r.Poll(e.ctx, v.Ticket); err != nil {
						t.Error(err)
						return
					}
				}
			}
		}()
	}
	wg.Wait()
	// Sessions last ten minutes and the clock moved at most 80 s: every pass is
	// live, so there can be no more of them than the cap.
	if len(passes) != limit {
		t.Fatalf("%d visitors hold a session, want exactly the cap of %d", len(passes), limit)
	}
}

func TestStoreFailure(t *testing.T) {
	e := newEnv(t)
	fs := storetest.NewFlaky(e.store)
	e.store = fs
	r := e.node("concert", waitingroom.Settings{TotalActiveUsers: 1})
	in := e.join(r)
	waiting := e.join(r)
	fs.SetDown(true)
	e.clock.Advance(3 * time.Second)
	_ = r.Tick(e.ctx)
	if _, err := r.Join(e.ctx); !errors.Is(err, waitingroom.ErrStoreUnavailable) {
		t.Fatalf("join with the store down: %v, want waitingroom.ErrStoreUnavailable", err)
	}
	v := e.poll(r, waiting.Ticket)
	if !v.Status.Reconnecting || v.Status.State != waitingroom.StateQueued || v.Ticket.Key != waiting.Ticket.Key {
		t.Fatalf("waiting visitor with the store down: %+v, want queued, same place, reconnecting", v.Status)
	}
	e.pass(r, in.Pass) // admitted visitors keep flowing
	fs.SetDown(false)
	e.step(1, r)
	if v := e.poll(r, waiting.Ticket); v.Status.Reconnecting {
		t.Fatal("still reconnecting after the store came back")
	}
}

func TestReseedAfterStoreLoss(t *testing.T) {
	e := newEnv(t)
	mem := e.store.(*memstore.Store)
	r := e.node("concert", waitingroom.Settings{TotalActiveUsers: 5, NewUsersPerMinute: 60})
	var last waitingroom.Ticket
	for range 30 {
		last = e.join(r).Ticket
	}
	e.step(3, r)
	before := r.Snapshot()
	mem.Drop("concert")
	v := e.join(r)
	if v.Ticket.Key <= last.Key {
		t.Fatalf("after the store lost its data a newcomer got key %d, ahead of an earlier ticket's %d", v.Ticket.Key, last.Key)
	}
	e.step(1, r)
	after := r.Snapshot()
	if after.Serving < before.Serving || after.Serving > before.Serving+1 {
		t.Fatalf("serving went from %d to %d across the loss, want no jump", before.Serving, after.Serving)
	}
	if after.Active+after.Pending < before.Active+before.Pending {
		t.Fatalf("slots held before the loss were forgotten: %d+%d after, %d+%d before", after.Active, after.Pending, before.Active, before.Pending)
	}
	if r.Stats().Reseeds.Load() == 0 {
		t.Fatal("no reseed counted")
	}
}

func mustKey(t testing.TB) *waitingroom.SigningKey {
	t.Helper()
	k, err := waitingroom.GenerateSigningKey()
	if err != nil {
		t.Fatal(err)
	}
	return k
}

func TestRevocationAfterStoreLossReachesEveryNode(t *testing.T) {
	e := newEnv(t)
	mem := e.store.(*memstore.Store)
	a := e.node("concert", waitingroom.Settings{TotalActiveUsers: 100})
	b := e.node("concert", waitingroom.Settings{TotalActiveUsers: 100})
	var passes []string
	for range 6 {
		e.step(1, a, b)
		passes = append(passes, e.join(a).Pass)
	}
	// Three revocations move every node's cursor to 3.
	for _, p := range passes[:3] {
		if err := a.Revoke(e.ctx, e.pass(a, p)); err != nil {
			t.Fatal(err)
		}
	}
	e.step(1, a, b)
	// The store loses the room; node A notices first and re-creates it, then
	// revokes another pass: cursor 1 of the new incarnation.
	mem.Drop("concert")
	e.step(1, a)
	if err := a.Revoke(e.ctx, e.pass(a, passes[4])); err != nil {
		t.Fatal(err)
	}
	e.step(1, b)
	if _, err := b.CheckPass(passes[4]); !errors.Is(err, waitingroom.ErrInvalidPass) {
		t.Fatalf("node B honours a pass revoked after the store was re-created: %v", err)
	}
	e.pass(b, passes[5])
}

func TestEveryNodeRaisesKeysAfterStoreLoss(t *testing.T) {
	e := newEnv(t)
	mem := e.store.(*memstore.Store)
	s := waitingroom.Settings{QueueAll: true}
	a := e.node("concert", s)
	b := e.node("concert", s)
	// Node B hands out keys that node A never sees before the store loses them.
	var last waitingroom.Ticket
	for range 300 {
		last = e.join(b).Ticket
	}
	mem.Drop("concert")
	e.step(1, a)    // A re-creates the room from what it saw: next to nothing
	e.step(1, a, b) // B sees a new incarnation and raises the keys above its own
	if v := e.join(a); v.Ticket.Key <= last.Key {
		t.Fatalf("a newcomer through node A got key %d, ahead of node B's ticket %d from before the loss", v.Ticket.Key, last.Key)
	}
}

func TestRandomRoomAdmitsInDrawnOrder(t *testing.T) {
	e := newEnv(t)
	r := e.node("concert", waitingroom.Settings{QueueingMethod: waitingroom.Random, TotalActiveUsers: 1000, NewUsersPerMinute: 60, QueueAll: true})
	const n = 30
	var fans []waitingroom.Ticket
	for range n {
		fans = append(fans, e.join(r).Ticket)
	}
	if _, err := r.Patch(e.ctx, waitingroom.OverridesOf(waitingroom.Settings{QueueAll: false}, "queue_all")); err != nil {
		t.Fatal(err)
	}
	e.step(1, r) // the first draw, of everyone waiting; steps in two seconds admit two
	seed, _, err := e.store.DrawSeed(e.ctx, "concert", []byte("ignored: a seed is stored"), e.clock.Now())
	if err != nil {
		t.Fatal(err)
	}
	info := r.DrawInfo()
	if !info.Enabled || info.Commitment != waitingroom.DrawCommitment(seed) || len(info.Epochs) != 1 || info.Epochs[0] != (waitingroom.DrawEpoch{Epoch: 1, Start: 0, Count: n, Number: 1, Size: n}) || info.Seed != "" {
		t.Fatalf("draw info %+v: want the commitment, epoch 1 over keys 0-%d, and no seed while the room is open", info, n-1)
	}
	d := waitingroom.NewDraw(waitingroom.EpochSeed(seed, 1), n)
	late := e.join(r) // after the draw: waits for the next one
	// No ETA yet: the line has moved for a second only (see TestETA*).
	if !late.Status.AwaitingDraw || late.Status.Position != nil || late.Status.ETASeconds != nil {
		t.Fatalf("a newcomer after the draw: %+v, want awaiting the next draw, no position, no estimate yet", late.Status)
	}
	last := make([]uint64, n)
	for sec := 0; sec < n; sec++ {
		for i, tk := range fans {
			if tk.Claimed {
				continue
			}
			v := e.poll(r, tk)
			fans[i] = v.Ticket
			place := d.Place(uint64(i))
			if v.Ticket.Place != place {
				t.Fatalf("fan %d placed at %d, the draw says %d", i, v.Ticket.Place, place)
			}
			if admitted := v.Pass != ""; admitted != (place <= uint64(sec)+1) {
				t.Fatalf("second %d: fan %d (place %d) admitted %v", sec, i, place, admitted)
			}
			if v.Pass == "" {
				if p := *v.Status.Position; sec > 0 && p > last[i] {
					t.Fatalf("fan %d's position rose from %d to %d", i, last[i], p)
				} else {
					last[i] = p
				}
			}
		}
		e.step(1, r)
	}
	// The first group is in; the next draw places the newcomer.
	v := e.poll(r, late.Ticket)
	if v.Status.AwaitingDraw || v.Pass == "" {
		t.Fatalf("the newcomer once the first group was in: %+v, want drawn and admitted", v.Status)
	}
	if es := r.DrawInfo().Epochs; len(es) != 2 || es[1] != (waitingroom.DrawEpoch{Epoch: 2, Start: n, Count: 1, Number: 2, Size: 1}) {
		t.Fatalf("epochs %+v, want a second draw of the one newcomer", es)
	}
}

func TestRandomRoomDrawsThePrequeueAtTheStart(t *testing.T) {
	e := newEnv(t)
	start := e.clock.Now().Add(time.Minute)
	end := start.Add(time.Hour)
	r := e.node("concert", waitingroom.Settings{QueueingMethod: waitingroom.Random, TotalActiveUsers: 1000, NewUsersPerMinute: 6000, EventStart: start, EventEnd: end})
	var regs []waitingroom.Ticket
	for range 20 {
		v := e.join(r)
		if v.Status.State != waitingroom.StatePrequeue {
			t.Fatalf("before the start: %s, want prequeue", v.Status.State)
		}
		regs = append(regs, v.Ticket)
	}
	e.clock.Advance(time.Minute)
	e.step(1, r)
	seed, _, _ := e.store.DrawSeed(e.ctx, "concert", []byte("x"), e.clock.Now())
	d := waitingroom.NewDraw(waitingroom.EpochSeed(seed, 1), 20)
	for i, tk := range regs {
		v := e.poll(r, tk)
		if v.Ticket.Place != d.Place(uint64(i)) || v.Pass == "" {
			t.Fatalf("registrant %d: place %d admitted %v, want place %d and in", i, v.Ticket.Place, v.Pass != "", d.Place(uint64(i)))
		}
	}
	// Once the room has closed, the seed is revealed for anyone to check.
	e.clock.Advance(time.Hour)
	e.step(1, r)
	if info := r.DrawInfo(); info.Seed == "" || info.Commitment != waitingroom.DrawCommitment(seed) {
		t.Fatalf("draw info after the end: %+v, want the seed revealed", info)
	}
}

func TestSwitchingToRandomDrawsThoseWaiting(t *testing.T) {
	e := newEnv(t)
	r := e.node("concert", waitingroom.Settings{TotalActiveUsers: 1000, NewUsersPerMinute: 60, QueueAll: true})
	var fans []waitingroom.Ticket
	for range 10 {
		v := e.join(r)
		fans = append(fans, e.poll(r, v.Ticket).Ticket) // shown a first-come place
	}
	if _, err := r.Patch(e.ctx, waitingroom.OverridesOf(waitingroom.Settings{QueueingMethod: waitingroom.Random, QueueAll: false}, "queueing_method", "queue_all")); err != nil {
		t.Fatal(err)
	}
	e.step(1, r)
	seed, _, _ := e.store.DrawSeed(e.ctx, "concert", []byte("x"), e.clock.Now())
	d := waitingroom.NewDraw(waitingroom.EpochSeed(seed, 1), 10)
	for i, tk := range fans {
		if v := e.poll(r, tk); v.Ticket.Place != d.Place(uint64(i)) {
			t.Fatalf("fan %d kept place %d after the switch to random, the draw says %d", i, v.Ticket.Place, d.Place(uint64(i)))
		}
	}
}

func TestSoldOutDeclaredByACrowdOfAnswers(t *testing.T) {
	e := newEnv(t)
	a := e.node("concert", waitingroom.Settings{})
	b := e.node("concert", waitingroom.Settings{})
	var wg sync.WaitGroup
	errs := make(chan error, 200)
	for i := range 200 {
		r := a
		if i%2 == 1 {
			r = b
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			if err := r.DeclareSoldOut(e.ctx); err != nil {
				errs <- err
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatalf("declaring sold out: %v", err)
	}
	e.step(1, a, b)
	if !a.Settings().SoldOut || !b.Settings().SoldOut {
		t.Fatal("the room is not sold out on both nodes")
	}
	if v := b.Snapshot().Version; v > 2 {
		t.Fatalf("overrides version %d after 200 declarations: each should not write anew", v)
	}
	// Declaring again, or patching to the same, writes nothing.
	if err := a.DeclareSoldOut(e.ctx); err != nil {
		t.Fatal(err)
	}
	if _, err := a.Patch(e.ctx, waitingroom.OverridesOf(waitingroom.Settings{SoldOut: true}, "sold_out")); err != nil {
		t.Fatal(err)
	}
	e.step(1, a)
	if v := a.Snapshot().Version; v > 2 {
		t.Fatalf("overrides version %d: a patch that changes nothing wrote", v)
	}
}

// TestRoomDoneWhenRunReturns: Done stays open while the room runs and closes
// once Run has returned, so that live connections, which wait on Changed,
// learn that no view will follow (docs/ARCHITECTURE.md, "Config reloads").
func TestRoomDoneWhenRunReturns(t *testing.T) {
	e := newEnv(t)
	r := e.node("done", waitingroom.Settings{})
	ctx, cancel := context.WithCancel(context.Background())
	returned := make(chan struct{})
	go func() {
		defer close(returned)
		r.Run(ctx)
	}()
	select {
	case <-r.Done():
		t.Fatal("Done closed while the room runs")
	default:
	}
	cancel()
	select {
	case <-r.Done():
	case <-time.After(10 * time.Second):
		t.Fatal("Done still open 10 s after Run's context ended")
	}
	<-returned
}
