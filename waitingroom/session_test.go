package waitingroom_test

import (
	"testing"
	"time"

	"github.com/foyer-dev/foyer/waitingroom"
	"github.com/foyer-dev/foyer/waitingroom/memstore"
)

// TestCopiedTicketSharesTheSession: a fan's ticket, copied before they are in,
// claims through another node: the copy gets the fan's session, with its pass
// id and end. After the store lost its data and the room was re-created from
// what returning fans showed it (the fan's pass among them), a copy that
// claims then still gets that pass id, so a revocation of either refuses both.
func TestCopiedTicketSharesTheSession(t *testing.T) {
	e := newEnv(t)
	s := waitingroom.Settings{TotalActiveUsers: 1, NewUsersPerMinute: 60}
	a, b := e.node("shared", s), e.node("shared", s)
	first := e.join(a)
	fan := e.join(a)
	if first.Pass == "" || fan.Pass != "" {
		t.Fatal("want the first fan in and the second waiting")
	}
	if err := a.Revoke(e.ctx, e.pass(a, first.Pass)); err != nil {
		t.Fatal(err)
	}
	e.step(1, a, b)
	in := e.poll(a, fan.Ticket)
	copied := e.poll(b, fan.Ticket)
	if in.Pass == "" || copied.Pass == "" {
		t.Fatal("the fan or the copy was not let in")
	}
	p, c := e.pass(a, in.Pass), e.pass(b, copied.Pass)
	if p.ID != c.ID || !p.ExpiresAt.Equal(c.ExpiresAt) || p.Subject != c.Subject {
		t.Fatalf("copy's pass %+v, fan's %+v: want one session", c, p)
	}
	if want := waitingroom.SessionPassID("shared", p.Subject, p.ExpiresAt); p.ID != want {
		t.Fatalf("pass id %s, want SessionPassID %s", p.ID, want)
	}

	// The store loses everything, and so does the node: a node that ran the
	// room re-creates it settling, and sees the fan's pass meanwhile.
	e.store.(*memstore.Store).Drop("shared")
	r, err := waitingroom.NewRoom(waitingroom.Config{ID: "shared", Settings: s, Store: e.store, Key: e.key, Now: e.clock.Now, Resumed: true})
	if err != nil {
		t.Fatal(err)
	}
	if err := r.Start(e.ctx); err != nil {
		t.Fatal(err)
	}
	e.pass(r, in.Pass)
	for r.Snapshot().SettleUntil.After(e.clock.Now()) {
		e.step(1, r)
	}
	again := e.poll(r, fan.Ticket)
	if again.Pass == "" {
		t.Fatalf("a copy of the ticket after the re-seed: %s, want the fan's session", again.Status.State)
	}
	if q := e.pass(r, again.Pass); q.ID != p.ID || q.ExpiresAt.Unix() != p.ExpiresAt.Unix() {
		t.Fatalf("after the re-seed the copy got pass %s until %v; the session's is %s until %v", q.ID, q.ExpiresAt, p.ID, p.ExpiresAt)
	}
	if err := r.Revoke(e.ctx, e.pass(r, again.Pass)); err != nil {
		t.Fatal(err)
	}
	for _, tok := range []string{in.Pass, copied.Pass, again.Pass} {
		if _, err := r.CheckPass(tok); err == nil {
			t.Fatal("a pass of the revoked session is still honoured")
		}
	}
	if v := e.poll(r, fan.Ticket); v.Pass != "" || !v.Rejoined {
		t.Fatalf("a copy claiming after the revoke: %+v, want a new place", v.Status)
	}
}

// TestLapsedFanInAHeldRoom: with queue_all on, a fan whose admission lapsed
// is held, not let in, by a poll; a live connection (Peek) does not tell them
// "admitted" either, which would send their page to claim again and again,
// while a fan still within their grace is told so. Once the room admits, the
// lapsed fan goes in ahead of the line, with the first step's budget; one
// back after the return window gets a new place at the back.
func TestLapsedFanInAHeldRoom(t *testing.T) {
	e := newEnv(t)
	r := e.node("held", waitingroom.Settings{TotalActiveUsers: 5, NewUsersPerMinute: 60, QueueAll: true})
	hold := func(on bool) {
		t.Helper()
		if _, err := r.Patch(e.ctx, waitingroom.OverridesOf(waitingroom.Settings{QueueAll: on}, "queue_all")); err != nil {
			t.Fatal(err)
		}
	}
	lapsed, late, fresh, behind := e.join(r), e.join(r), e.join(r), e.join(r)
	hold(false)
	e.step(1, r) // lapsed's and late's turn; neither is looking
	hold(true)
	e.step(31, r)
	hold(false)
	e.step(1, r) // fresh's turn, within their grace
	hold(true)
	if st, _ := r.Peek(lapsed.Ticket); st.State != waitingroom.StatePaused {
		t.Fatalf("live status of the lapsed fan with queue_all on: %s, want paused", st.State)
	}
	if st, _ := r.Peek(fresh.Ticket); st.State != waitingroom.StateAdmitted {
		t.Fatalf("live status of a fan within their grace: %s, want admitted", st.State)
	}
	v := e.poll(r, lapsed.Ticket)
	if v.Pass != "" || v.Status.State != waitingroom.StatePaused || !v.Status.Returned {
		t.Fatalf("lapsed fan's poll with queue_all on: %+v, want paused and returned, no pass", v.Status)
	}
	hold(false)
	// The room banked no budget while it held everyone: the lapsed fan
	// waits at the front for the next step, whose budget is theirs first.
	if v := e.poll(r, lapsed.Ticket); v.Pass != "" || v.Status.State != waitingroom.StateQueued || !v.Status.Returned {
		t.Fatalf("lapsed fan the moment the room admits: %+v, want queued at the front, returned", v.Status)
	}
	e.step(1, r)
	if v := e.poll(r, lapsed.Ticket); v.Pass == "" {
		t.Fatalf("lapsed fan once the room admits: %+v, want in", v.Status)
	}
	// late is back after the window: a new place, behind everyone (nobody
	// waits by then, so it is let in at once, as any newcomer would be).
	e.step(int((waitingroom.DefaultAdmissionGrace+waitingroom.DefaultReturnWindow)/time.Second)+2, r)
	v = e.poll(r, late.Ticket)
	if !v.Rejoined || !v.Status.TurnPassed || v.Ticket.Key <= behind.Ticket.Key {
		t.Fatalf("fan back after the window: %+v key %d, want a new place behind key %d, told the turn passed", v.Status, v.Ticket.Key, behind.Ticket.Key)
	}
}

// TestBankedAdmissionsCostTheLineNothingLater: 50 tickets taken early (as a
// bot would, never turning up when let in) lapse, each holding a slot for one
// grace only. Their holders come back after the return window, while real
// fans wait: each is given a new place behind every fan, no fan's position
// rises, and every fan is let in before any of them.
func TestBankedAdmissionsCostTheLineNothingLater(t *testing.T) {
	e := newEnv(t)
	s := waitingroom.Settings{TotalActiveUsers: 5, NewUsersPerMinute: 600, AdmissionGrace: 5 * time.Second, QueueAll: true}
	r := e.node("banked", s)
	var bots, fans []waitingroom.Ticket
	for range 50 {
		bots = append(bots, e.join(r).Ticket)
	}
	for range 20 {
		fans = append(fans, e.join(r).Ticket)
	}
	if _, err := r.Patch(e.ctx, waitingroom.OverridesOf(waitingroom.Settings{QueueAll: false}, "queue_all")); err != nil {
		t.Fatal(err)
	}
	// The line moves past the bots' places as their graces run out; fans
	// who are let in stay (their sessions last ten minutes).
	inside := map[int]waitingroom.Pass{}
	for sec := 0; sec < 80; sec++ {
		e.step(1, r)
		for i, f := range fans {
			if _, in := inside[i]; in {
				continue
			}
			v := e.poll(r, f)
			fans[i] = v.Ticket
			if v.Pass != "" {
				inside[i] = e.pass(r, v.Pass)
			}
		}
	}
	if len(inside) != 5 || r.Snapshot().Abandoned < 50 {
		t.Fatalf("%d fans inside, %d abandoned; want the cap's 5 and every bot's place", len(inside), r.Snapshot().Abandoned)
	}
	e.step(int(waitingroom.DefaultReturnWindow/time.Second), r) // the last bot's window is over
	before := map[int]uint64{}
	for i, f := range fans {
		if _, in := inside[i]; !in {
			st, _ := r.Peek(f)
			before[i] = *st.Position
		}
	}
	// The bots cash their tickets in.
	for i, b := range bots {
		v := e.poll(r, b)
		if v.Pass != "" || !v.Status.TurnPassed || v.Status.Returned {
			t.Fatalf("bot %d back after the window: %+v, want a new place, told the turn passed", i, v.Status)
		}
		bots[i] = v.Ticket
	}
	for i, f := range fans {
		if _, in := inside[i]; !in {
			if st, _ := r.Peek(f); *st.Position > before[i] {
				t.Fatalf("fan %d's position rose from %d to %d when the bots came back", i, before[i], *st.Position)
			}
		}
	}
	// Fans check out one by one; every fan is let in before any bot.
	done := map[int]bool{}
	for len(inside) < len(fans) {
		for i, p := range inside {
			if !done[i] {
				if err := r.Revoke(e.ctx, p); err != nil {
					t.Fatal(err)
				}
				done[i] = true
				break
			}
		}
		e.step(1, r)
		for i, b := range bots {
			v := e.poll(r, b)
			bots[i] = v.Ticket
			if v.Pass != "" {
				t.Fatalf("bot %d let in while %d fans still wait", i, len(fans)-len(inside))
			}
		}
		for i, f := range fans {
			if _, in := inside[i]; in {
				continue
			}
			v := e.poll(r, f)
			fans[i] = v.Ticket
			if v.Pass != "" {
				inside[i] = e.pass(r, v.Pass)
			}
		}
	}
}
