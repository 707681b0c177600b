package waitingroom_test

import (
	"errors"
	"testing"
	"time"

	"github.com/foyer-dev/foyer/waitingroom"
	"github.com/foyer-dev/foyer/waitingroom/memstore"
)

// A node never falls back to its configuration for a setting it knows was
// overridden: not when the store forgets the room, not when another node
// re-creates it knowing nothing.
func TestRoomKeepsOverridesTheStoreForgot(t *testing.T) {
	e := newEnv(t)
	mem := e.store.(*memstore.Store)
	s := waitingroom.Settings{TotalActiveUsers: 5, NewUsersPerMinute: 60}
	a := e.node("concert", s)
	paused, lowered := true, 2
	if _, err := a.Patch(e.ctx, waitingroom.OverridesOf(waitingroom.Settings{Paused: paused, TotalActiveUsers: lowered}, "paused", "total_active_users")); err != nil {
		t.Fatal(err)
	}
	e.step(1, a)
	mem.Drop("concert")
	// Another node, which knows nothing of the room, re-creates it first.
	b := e.node("concert", s)
	if b.Settings().Paused {
		t.Fatal("the premise: the node that re-created the room knows no overrides")
	}
	e.step(1, a, b)
	for i, r := range []*waitingroom.Room{a, b} {
		if st := r.Settings(); !st.Paused || st.TotalActiveUsers != lowered {
			t.Fatalf("node %d after the loss: paused %v cap %d, want the overrides", i, st.Paused, st.TotalActiveUsers)
		}
	}
	if _, v, _ := e.store.Overrides(e.ctx, "concert"); v != 1 {
		t.Fatalf("overrides version %d in the store, want 1 back", v)
	}
	// A patch after the loss lays over the restored overrides.
	resume := false
	got, err := b.Patch(e.ctx, waitingroom.OverridesOf(waitingroom.Settings{Paused: resume}, "paused"))
	if err != nil || got.Paused || got.TotalActiveUsers != lowered {
		t.Fatalf("resume after the loss: %+v %v, want resumed with the lowered cap", got, err)
	}
}

// A node that starts with a memo applies its overrides before it ever reads
// the store, and gives the memo back as they change.
func TestRoomStartsFromItsMemo(t *testing.T) {
	e := newEnv(t)
	var kept []waitingroom.Memo
	r, err := waitingroom.NewRoom(waitingroom.Config{
		ID: "concert", Settings: waitingroom.Settings{TotalActiveUsers: 5}, Store: e.store, Key: e.key, Now: e.clock.Now,
		Memo:     &waitingroom.Memo{Overrides: []byte(`{"sold_out":true}`), Version: 4, At: e.clock.Now()},
		Resumed:  true,
		Remember: func(m waitingroom.Memo) { kept = append(kept, m) },
	})
	if err != nil {
		t.Fatal(err)
	}
	if !r.Settings().SoldOut {
		t.Fatal("overrides of the memo not in force before the start")
	}
	if err := r.Start(e.ctx); err != nil {
		t.Fatal(err)
	}
	if data, v, _ := e.store.Overrides(e.ctx, "concert"); v != 4 || string(data) != `{"sold_out":true}` {
		t.Fatalf("store after the start: %q v%d, want the memo's", data, v)
	}
	open := false
	if _, err := r.Patch(e.ctx, waitingroom.OverridesOf(waitingroom.Settings{SoldOut: open}, "sold_out")); err != nil {
		t.Fatal(err)
	}
	if n := len(kept); n == 0 || kept[n-1].Version != 5 {
		t.Fatalf("memos given back: %+v, want the last of version 5", kept)
	}
}

// A room never run before admits its first visitor at once; one that ran
// before and finds no record of itself holds newcomers while the line
// re-announces itself, and then places them behind it.
func TestRoomSettlesOnlyWhenItRanBefore(t *testing.T) {
	e := newEnv(t)
	s := waitingroom.Settings{TotalActiveUsers: 2, NewUsersPerMinute: 60, AdmissionGrace: 5 * time.Second}
	if v := e.join(e.node("fresh", s)); v.Pass == "" {
		t.Fatalf("first visitor of a brand-new room: %s, want admitted at once", v.Status.State)
	}

	old := e.node("resumed", s)
	in := e.join(old)
	waiting := []waitingroom.Visit{e.join(old), e.join(old), e.join(old)}
	e.step(3, old)
	e.store.(*memstore.Store).Drop("resumed")
	r, err := waitingroom.NewRoom(waitingroom.Config{ID: "resumed", Settings: s, Store: e.store, Key: e.key, Now: e.clock.Now, Resumed: true})
	if err != nil {
		t.Fatal(err)
	}
	if err := r.Start(e.ctx); err != nil {
		t.Fatal(err)
	}
	if _, err := r.Join(e.ctx); !errors.Is(err, waitingroom.ErrSettling) || !errors.Is(err, waitingroom.ErrStoreUnavailable) {
		t.Fatalf("newcomer while settling: %v, want ErrSettling", err)
	}
	e.pass(r, in.Pass) // the fan inside browses on
	for _, w := range waiting {
		e.poll(r, w.Ticket)
	}
	e.step(1, r)
	snap := r.Snapshot()
	if snap.Seq <= waiting[2].Ticket.Key || snap.Serving != in.Ticket.Key+1 || snap.Active != 1 {
		t.Fatalf("after the line re-announced itself: %+v; want keys above %d, serving %d, the session inside held", snap.Counters, waiting[2].Ticket.Key, in.Ticket.Key+1)
	}
	for r.Snapshot().SettleUntil.After(e.clock.Now()) {
		e.step(1, r)
	}
	if v := e.join(r); v.Ticket.Key <= waiting[2].Ticket.Key {
		t.Fatalf("newcomer after settling got key %d, ahead of %d", v.Ticket.Key, waiting[2].Ticket.Key)
	}
}

// Two nodes saw different versions of the overrides when the store lost
// them; whichever re-seeds first, the newer version wins on both.
func TestRoomNewerOverridesWinAfterLoss(t *testing.T) {
	e := newEnv(t)
	mem := e.store.(*memstore.Store)
	s := waitingroom.Settings{TotalActiveUsers: 5, NewUsersPerMinute: 60}
	a, b := e.node("concert", s), e.node("concert", s)
	paused := true
	if _, err := a.Patch(e.ctx, waitingroom.OverridesOf(waitingroom.Settings{Paused: paused}, "paused")); err != nil {
		t.Fatal(err)
	}
	e.step(1, a, b) // both know version 1
	sold := true
	if _, err := a.Patch(e.ctx, waitingroom.OverridesOf(waitingroom.Settings{SoldOut: sold}, "sold_out")); err != nil {
		t.Fatal(err)
	}
	// b has not refreshed since: it knows version 1 only.
	mem.Drop("concert")
	e.clock.Advance(time.Second)
	if err := b.Tick(e.ctx); err != nil { // b re-seeds first, with version 1
		t.Fatal(err)
	}
	if _, v, _ := e.store.Overrides(e.ctx, "concert"); v != 1 {
		t.Fatalf("after b re-seeded: version %d, want b's 1", v)
	}
	e.step(1, a, b)
	if _, v, _ := e.store.Overrides(e.ctx, "concert"); v != 2 {
		t.Fatalf("after a refreshed: version %d, want a's 2", v)
	}
	for i, r := range []*waitingroom.Room{a, b} {
		if st := r.Settings(); !st.Paused || !st.SoldOut || r.Info().Version != 2 {
			t.Fatalf("node %d: paused %v sold out %v version %d, want version 2 on both", i, st.Paused, st.SoldOut, r.Info().Version)
		}
	}
}

// admitted fills a room of cap n with n sessions (their passes) and leaves
// waiting fans behind them (their tickets).
func admittedAndWaiting(e *roomEnv, r *waitingroom.Room, n, waiting int) (passes []string, tickets []waitingroom.Ticket) {
	e.t.Helper()
	for range n + waiting {
		tickets = append(tickets, e.join(r).Ticket)
	}
	for range 2 * n {
		e.step(1, r)
		for i := len(passes); i < n; i++ {
			v := e.poll(r, tickets[i])
			if v.Pass == "" {
				break
			}
			passes = append(passes, v.Pass)
		}
	}
	if len(passes) != n {
		e.t.Fatalf("%d of %d sessions opened", len(passes), n)
	}
	return passes, tickets[n:]
}

// admitPage is a page request carrying a pass, as the gateway makes it.
func admitPage(e *roomEnv, r *waitingroom.Room, pass string) waitingroom.Decision {
	e.t.Helper()
	d, err := r.Admit(e.ctx, waitingroom.Arrival{Kind: waitingroom.RequestPage, Pass: pass})
	if err != nil {
		e.t.Fatalf("admit: %v", err)
	}
	return d
}

// After an empty restart of the store with every session revoked, the line
// moves at once: revoking a session the store lost gives up the slot held for
// it (the reproduction: cap 5, session_duration 1m, all five revoked seconds
// after the restart; the next fan got in at 156 s).
func TestReseedFreesHeldSlotsOfRevokedSessions(t *testing.T) {
	e := newEnv(t)
	mem := e.store.(*memstore.Store)
	r := e.node("concert", waitingroom.Settings{TotalActiveUsers: 5, NewUsersPerMinute: 60, SessionDuration: time.Minute})
	passes, waiting := admittedAndWaiting(e, r, 5, 3)
	mem.Drop("concert")
	e.step(1, r)
	if s := r.Snapshot(); s.Active != 5 || s.LostAt.IsZero() {
		t.Fatalf("after the re-seed: %d active, lost at %v; want the 5 sessions held", s.Active, s.LostAt)
	}
	e.step(8, r)
	for _, p := range passes {
		if err := r.Revoke(e.ctx, e.pass(r, p)); err != nil {
			t.Fatal(err)
		}
	}
	e.step(2, r)
	v := e.poll(r, waiting[0])
	if v.Pass == "" {
		t.Fatalf("the first waiting fan two seconds after every session was revoked: %+v, want in", v.Status)
	}
	if s := r.Snapshot(); s.Active > 5 {
		t.Fatalf("%d active, cap 5", s.Active)
	}
}

// Sessions still in use after a loss take over their held slots on their
// first request, and keep their pass's id and end; the slots held for the
// others free when the hold ends, long before a session_duration; a holder
// coming back after that waits at the front for a free slot, never above the
// cap, and goes on with the same session when one frees.
func TestReseedHoldsSlotsOnlyUntilTheSessionsAreFound(t *testing.T) {
	e := newEnv(t)
	mem := e.store.(*memstore.Store)
	s := waitingroom.Settings{TotalActiveUsers: 3, NewUsersPerMinute: 60, SessionDuration: 10 * time.Minute}
	r := e.node("concert", s)
	passes, waiting := admittedAndWaiting(e, r, 3, 2)
	mem.Drop("concert")
	e.step(1, r)
	lost := r.Snapshot().LostAt

	// The first shopper is busy: their next request reclaims their session.
	d := admitPage(e, r, passes[0])
	if !d.In() || !d.NewPass || d.Transition.From != waitingroom.TicketReclaiming {
		t.Fatalf("a pass from before the loss: in %v, new pass %v, %v", d.In(), d.NewPass, d.Transition)
	}
	old := e.pass(r, passes[0])
	if d.Admission.ID != old.ID || !d.Admission.ExpiresAt.Equal(old.ExpiresAt) || d.Admission.OrderKey != old.OrderKey || d.Admission.IssuedAt.Before(lost) {
		t.Fatalf("reclaimed pass %+v, want the id and end of %+v, issued after the loss", d.Admission, old)
	}
	if again := admitPage(e, r, d.Pass); !again.In() || again.NewPass {
		t.Fatal("the pass signed again goes in with no further reclaim")
	}
	if again := admitPage(e, r, passes[0]); !again.In() || again.NewPass {
		t.Fatal("the old pass, reclaimed on this node, goes in with no further reclaim")
	}
	if st := r.Snapshot(); st.Active != 3 {
		t.Fatalf("%d active after one reclaim, want the 3 still held", st.Active)
	}

	// The other two are not seen: their slots free when the hold ends (a
	// minute), and the waiting fans get in then.
	e.step(50, r)
	if v := e.poll(r, waiting[0]); v.Pass != "" {
		t.Fatal("a waiting fan got in while the slots were held")
	}
	e.step(12, r)
	in := 0
	for _, tk := range waiting {
		if v := e.poll(r, tk); v.Pass != "" {
			in++
		}
	}
	e.step(2, r)
	for _, tk := range waiting {
		if v := e.poll(r, tk); v.Pass != "" {
			in++
		}
	}
	if in == 0 {
		t.Fatalf("no waiting fan in 64 s after the loss, with the hold over")
	}
	// A holder unseen since the loss comes back to a full room: held at the
	// front, never above the cap; in with the same session once a slot frees.
	e.step(3, r)
	back := admitPage(e, r, passes[1])
	if st := r.Snapshot(); st.Active > 3 {
		t.Fatalf("%d active, cap 3", st.Active)
	}
	if back.In() || !back.Status.Returned {
		t.Fatalf("a session unseen through the hold, back to a full room: %+v, want held at the front", back.Status)
	}
	if err := r.Revoke(e.ctx, old); err != nil {
		t.Fatal(err)
	}
	e.step(1, r)
	back = admitPage(e, r, passes[1])
	if !back.In() || back.Admission.ID != e.pass(r, passes[1]).ID {
		t.Fatalf("back after a slot freed: in %v %+v, want the same session", back.In(), back.Admission)
	}
}

// TestLaneCommitmentSurvivesLoss: the store loses the room after the nodes
// committed a phase's lane weights: the node that re-seeds it puts the
// commitment back with the time it was first made, so a node that starts
// afresh afterwards publishes that time, not one after the loss.
func TestLaneCommitmentSurvivesLoss(t *testing.T) {
	e := newEnv(t)
	lanes, err := waitingroom.ParseLanes("presale=3 general=1")
	if err != nil {
		t.Fatal(err)
	}
	phase := waitingroom.ScheduledPhase{Name: "presale", Start: e.clock.Now().Add(time.Minute), End: e.clock.Now().Add(2 * time.Minute)}
	s := waitingroom.Settings{TotalActiveUsers: 10, NewUsersPerMinute: 60, Lanes: lanes, Phases: waitingroom.NewPhases(phase)}
	a := e.node("lane-commit", s)
	e.step(1, a)
	committed := func(r *waitingroom.Room) time.Time {
		t.Helper()
		lp := r.DrawInfo().LanePhases
		if len(lp) != 1 || lp[0].CommittedAt == nil {
			t.Fatalf("the phase's lane commitment: %+v", lp)
		}
		return *lp[0].CommittedAt
	}
	first := committed(a)
	e.store.(*memstore.Store).Drop("lane-commit")
	e.step(10, a) // a re-seeds the room
	fresh := e.node("lane-commit", s)
	e.step(1, a, fresh)
	if got := committed(fresh); !got.Equal(first) {
		t.Fatalf("a fresh node after the loss publishes the commitment at %s; want the time it was first made, %s", got, first)
	}
}
