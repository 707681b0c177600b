package storetest

import (
	"testing"
	"time"

	"github.com/foyer-dev/foyer/waitingroom"
)

// One session per visitor. A ticket may be copied to many clients; each copy
// that claims must be handed the one session of its visitor, with the same
// end, from whichever node, so that every pass of it carries the same id
// (waitingroom.SessionPassID of room, visitor and end) and one revocation
// refuses them all.

// testOneSessionPerVisitor: copies of one ticket claiming at once through two
// handles all get the same session; it takes one slot and one claim of its
// admission.
func testOneSessionPerVisitor(t *testing.T, h Harness) {
	f := newFixture(t, h)
	a, b := f.pair(h)
	f.fill(5, t0)
	lim := limits()
	f.advance(at(1), lim) // admits places 0-4
	const copies = 16
	res := make([]waitingroom.ClaimResult, copies)
	together(copies, a, b, func(i int, s waitingroom.Store) {
		// Each copy asks a little later: the end must still be the first's.
		r, err := s.Claim(f.ctx, f.room, visitor(2), 2, at(2).Add(time.Duration(i)*time.Millisecond), lim)
		if err != nil {
			t.Error(err)
		}
		res[i] = r
	})
	var end time.Time
	for i, r := range res {
		if r.Status != waitingroom.Claimed {
			t.Fatalf("copy %d: %v, want claimed", i, r.Status)
		}
		if end.IsZero() {
			end = r.Expires
		}
		if !r.Expires.Equal(end) {
			t.Fatalf("copy %d was given a session until %v, another until %v: one visitor, one session", i, r.Expires, end)
		}
	}
	s := f.snap(at(3))
	if s.Active != 1 || s.Claimed != 1 || s.Pending != 4 {
		t.Fatalf("after %d claims of one ticket: active %d claimed %d pending %d, want 1, 1 and 4", copies, s.Active, s.Claimed, s.Pending)
	}
	// Later claims, through either handle, still name the same end.
	for i, s := range []waitingroom.Store{a, b} {
		r, err := s.Claim(f.ctx, f.room, visitor(2), 2, at(200), lim)
		if err != nil || r.Status != waitingroom.Claimed || !r.Expires.Equal(end) {
			t.Fatalf("claim through handle %d later: %+v %v, want the session until %v", i, r, err, end)
		}
	}
}

// testReleaseEndsTheSession: once the session is released, a claim with a
// copy of its ticket, through either handle, is refused as finished, and the
// revocation of its pass is recorded once for every node to read.
func testReleaseEndsTheSession(t *testing.T, h Harness) {
	f := newFixture(t, h)
	a, b := f.pair(h)
	f.fill(3, t0)
	lim := limits()
	f.advance(at(1), lim)
	ses := f.claim(visitor(0), 0, at(2), lim)
	id := waitingroom.SessionPassID(f.room, visitor(0), ses.Expires)
	if err := a.Release(f.ctx, f.room, visitor(0), id, ses.Expires, at(3), lim); err != nil {
		t.Fatal(err)
	}
	for i, s := range []waitingroom.Store{a, b} {
		if r, err := s.Claim(f.ctx, f.room, visitor(0), 0, at(4), lim); err != nil || r.Status != waitingroom.Finished {
			t.Fatalf("claim with a copy of the ticket through handle %d after the release: %+v %v, want finished", i, r, err)
		}
	}
	snap, err := b.Snapshot(f.ctx, f.room, at(4), 0)
	if err != nil {
		t.Fatal(err)
	}
	if snap.Active != 0 || len(snap.Revocations) != 1 || snap.Revocations[0].PassID != id {
		t.Fatalf("after the release: active %d revocations %+v, want 0 and the session's pass %s", snap.Active, snap.Revocations, id)
	}
}

// testSessionEndSurvivesLoss: after the store lost its data, a session
// announced back from its pass (whose end is kept to the second) is the one a
// copy of the ticket claims, and its pass id is the one the first pass had.
func testSessionEndSurvivesLoss(t *testing.T, h Harness) {
	needsWipe(t, h)
	f, lim := lineOf(t, h, 3)
	f.advance(at(1), lim)
	ses := f.claim(visitor(1), 1, at(2.25), lim) // ends at a fraction of a second
	id := waitingroom.SessionPassID(f.room, visitor(1), ses.Expires)
	h.Wipe(t, f.s, f.room)
	passEnd := ses.Expires.Truncate(time.Second) // a JWT's "exp"
	f.init(waitingroom.Recall{
		Whole:     true,
		Counters:  waitingroom.Counters{Seq: 3, Serving: 3, Admitted: 3, Claimed: 1},
		Forgotten: 3,
		Sessions:  []waitingroom.HeldSession{{Visitor: visitor(1), Until: passEnd, Forget: passEnd.Add(lim.Retention)}},
	})
	r := f.claim(visitor(1), 1, at(5), lim)
	if r.Status != waitingroom.Claimed || r.Expires.Unix() != ses.Expires.Unix() {
		t.Fatalf("claim after the loss: %+v, want the announced session until %v", r, passEnd)
	}
	if got := waitingroom.SessionPassID(f.room, visitor(1), r.Expires); got != id {
		t.Fatalf("pass id after the loss %s, before %s", got, id)
	}
	if s := f.snap(at(5)); s.Active != 1 {
		t.Fatalf("%d sessions after the copy claimed, want the one announced", s.Active)
	}
}

// Bounded returns. A visitor whose admission lapsed unclaimed may come back
// at the front within Limits.ReturnWindow after their grace ended, and only
// while the room admits (Limits.Open); after it their turn has passed.

// lapsedRoom is a room of cap 2 in which place 0 was admitted at 1s and
// lapsed at 31s, its grace over, while place 1 holds a session; places 2-9
// wait.
func lapsedRoom(t *testing.T, h Harness, lim waitingroom.Limits) *fixture {
	f := newFixture(t, h)
	f.fill(10, t0)
	lim.Rate = 60 // one a second
	f.advance(at(1), lim)
	f.advance(at(2), lim)
	f.claim(visitor(1), 1, at(2), lim)
	lim.Open = false // nobody else is admitted meanwhile
	f.advance(at(31), lim)
	if s := f.snap(at(31)); s.Abandoned != 1 || s.Serving != 2 || s.Active != 1 {
		t.Fatalf("setup: abandoned %d serving %d active %d, want 1, 2 and 1", s.Abandoned, s.Serving, s.Active)
	}
	return f
}

// testReturnWithinWindow: back within the window with a slot free, even at
// the window's last instant, the visitor goes to the front. The room spent
// its budget (it admitted nobody meanwhile, and banks none while it does
// not), so they wait there for the next step, which keeps its budget for
// them before the line's; then they go in, though the window is over by then.
func testReturnWithinWindow(t *testing.T, h Harness) {
	lim := limits()
	lim.Cap = 2
	f := lapsedRoom(t, h, lim)
	last := at(31).Add(lim.ReturnWindow - time.Millisecond)
	if r := f.claim(visitor(0), 0, last, lim); r.Status != waitingroom.Full {
		t.Fatalf("back just within the return window, no budget banked: %v, want full", r.Status)
	}
	next := at(31).Add(lim.ReturnWindow + time.Second)
	f.advance(next, lim)
	if s := f.snap(next); s.Serving != 2 || s.Returning != 1 {
		t.Fatalf("the step after: serving %d returning %d, want 2 and 1 (the budget and the slot are the returner's)", s.Serving, s.Returning)
	}
	if r := f.claim(visitor(0), 0, next.Add(time.Second), lim); r.Status != waitingroom.Claimed {
		t.Fatalf("returner after the next step: %v, want claimed", r.Status)
	}
}

// testReturnAfterWindow: back at the window's end or later, the turn has
// passed, whether a slot is free or not, and nothing is held for the visitor.
func testReturnAfterWindow(t *testing.T, h Harness) {
	lim := limits()
	lim.Cap = 2
	f := lapsedRoom(t, h, lim)
	end := at(31).Add(lim.ReturnWindow)
	for _, when := range []time.Time{end, end.Add(3 * time.Hour)} {
		if r := f.claim(visitor(0), 0, when, lim); r.Status != waitingroom.Passed {
			t.Fatalf("back %v after the grace: %v, want passed", when.Sub(at(31)), r.Status)
		}
		if s := f.snap(when); s.Returning != 0 || s.Claimed != 1 {
			t.Fatalf("after a passed turn: returning %d claimed %d, want 0 and 1", s.Returning, s.Claimed)
		}
	}
	// The window is the one in force: a shorter one applies at once.
	g := lapsedRoom(t, h, lim)
	short := lim
	short.ReturnWindow = 10 * time.Second
	if r := g.claim(visitor(0), 0, at(45), short); r.Status != waitingroom.Passed {
		t.Fatalf("14 s after the grace with a 10 s window: %v, want passed", r.Status)
	}
	// And the controller forgets lapsed admissions once the window is over.
	k := lapsedRoom(t, h, lim)
	k.advance(end, lim)
	if r := k.claim(visitor(0), 0, end.Add(-time.Second), lim); r.Status != waitingroom.Passed {
		t.Fatalf("back after the controller dropped the lapse: %v, want passed", r.Status)
	}
}

// testReturnHeldWhileClosed: back within the window while the room admits
// nobody, the visitor is held, not let in, though a slot is free; asking again
// keeps their right to the front past the window, and once the room admits
// they take the slot kept for them, ahead of the line.
func testReturnHeldWhileClosed(t *testing.T, h Harness) {
	lim := limits()
	lim.Cap = 2
	f := lapsedRoom(t, h, lim)
	closed := lim
	closed.Open = false
	for sec := 40.0; sec <= 31+lim.ReturnWindow.Seconds()+60; sec += 30 {
		if r := f.claim(visitor(0), 0, at(sec), closed); r.Status != waitingroom.Held {
			t.Fatalf("back at %vs while the room admits nobody: %v, want held", sec, r.Status)
		}
		f.advance(at(sec+0.5), closed)
	}
	when := at(31 + lim.ReturnWindow.Seconds() + 70)
	if s := f.snap(when); s.Returning != 1 || s.Active != 1 {
		t.Fatalf("while held: returning %d active %d, want 1 and 1", s.Returning, s.Active)
	}
	f.advance(when, lim) // the room admits again: the free slot is kept back
	if s := f.snap(when); s.Serving != 2 {
		t.Fatalf("serving %d, want 2: the free slot is the returner's", s.Serving)
	}
	if r := f.claim(visitor(0), 0, when.Add(time.Second), lim); r.Status != waitingroom.Claimed {
		t.Fatalf("held returner once the room admits: %v, want claimed", r.Status)
	}
	// One who stops asking loses the right with the window.
	g := lapsedRoom(t, h, lim)
	g.claim(visitor(0), 0, at(40), closed)
	late := at(40).Add(waitingroom.ReturnerWindow).Add(lim.ReturnWindow)
	g.advance(late, lim)
	if r := g.claim(visitor(0), 0, late, lim); r.Status != waitingroom.Passed {
		t.Fatalf("held returner who stopped asking, back after the window: %v, want passed", r.Status)
	}
}
