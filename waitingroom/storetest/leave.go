package storetest

import (
	"fmt"
	"testing"

	"github.com/foyer-dev/foyer/waitingroom"
)

// Leaving the line: a place given up is passed over without a slot, a
// pending admission's slot and a session's slot free at once, and the ticket
// is spent.

var leaveTests = []suiteTest{
	{"LeaveWaitingPassedWithoutASlot", testLeaveWaiting},
	{"LeaveAtTheFrontFreesTheSlot", testLeaveAtFront},
	{"LeaveInSessionEndsIt", testLeaveInSession},
	{"LeftPlaceNeverLiveAgain", testLeftPlaceNeverLive},
	{"LeaveAsReturnerGivesUpTheFront", testLeaveReturner},
}

func (f *fixture) leave(v string, place uint64, sec float64, lim waitingroom.Limits) {
	f.t.Helper()
	if err := f.s.Leave(f.ctx, f.room, v, place, at(sec), lim); err != nil {
		f.t.Fatalf("Leave(%s, %d): %v", v, place, err)
	}
}

// testLeaveWaiting: young places (joined too recently to be judged) whose
// holders left are skipped as ghosts; the rest go in, in order.
func testLeaveWaiting(t *testing.T, h Harness) {
	f := newFixture(t, h)
	f.fill(6, at(0))
	f.leave(visitor(1), 1, 1, limits())
	f.leave(visitor(2), 2, 1, limits())
	f.leave(visitor(2), 2, 1, limits()) // twice: nothing more
	lim := limits()
	lim.Rate = 240 // four a second
	f.advance(at(2), lim)
	s := f.snap(at(2))
	if s.Serving != 6 || s.Admitted != 4 || s.Skipped != 2 || s.Pending != 4 {
		t.Fatalf("serving %d admitted %d skipped %d pending %d; want 6, 4, 2, 4", s.Serving, s.Admitted, s.Skipped, s.Pending)
	}
	for _, p := range []uint64{0, 3, 4, 5} {
		f.expectClaim(fmt.Sprintf("place %d", p), visitor(int(p)), p, at(3), limits(), waitingroom.Claimed)
	}
	f.expectClaim("the left place's ticket (it rejoins at the back)", visitor(1), 1, at(3), limits(), waitingroom.Finished)
	if s := f.snap(at(3)); s.Active != 4 || s.Pending != 0 {
		t.Fatalf("active %d pending %d; want 4, 0", s.Active, s.Pending)
	}
}

// testLeaveAtFront: an admitted, unclaimed place gives its slot back at
// once: the next step lets the next fan in without waiting out the grace.
func testLeaveAtFront(t *testing.T, h Harness) {
	f, lim := admittedLine(t, h, 3, 2)
	if s := f.snap(at(1)); s.Serving != 2 || s.Pending != 2 {
		t.Fatalf("serving %d pending %d; want 2, 2", s.Serving, s.Pending)
	}
	f.leave(visitor(0), 0, 1.5, lim)
	f.leave(visitor(0), 0, 1.6, lim)
	if s := f.snap(at(1.6)); s.Pending != 1 {
		t.Fatalf("pending %d after the leave, want 1", s.Pending)
	}
	f.advance(at(2), lim)
	s := f.snap(at(2))
	if s.Serving != 3 || s.Pending != 2 || s.Abandoned != 0 {
		t.Fatalf("serving %d pending %d abandoned %d; want 3, 2, 0", s.Serving, s.Pending, s.Abandoned)
	}
	f.expectClaim("the left fan's ticket", visitor(0), 0, at(3), lim, waitingroom.Finished)
	for _, p := range []uint64{1, 2} {
		f.expectClaim(fmt.Sprintf("place %d", p), visitor(int(p)), p, at(3), lim, waitingroom.Claimed)
	}
	// The grace ends: nothing was abandoned, and the cap held throughout.
	f.advance(at(40), lim)
	if s := f.snap(at(40)); s.Abandoned != 0 || s.Active != 2 || s.Pending != 0 {
		t.Fatalf("abandoned %d active %d pending %d; want 0, 2, 0", s.Abandoned, s.Active, s.Pending)
	}
}

// testLeaveInSession: leaving in session ends it as a revoke does.
func testLeaveInSession(t *testing.T, h Harness) {
	f := newFixture(t, h)
	res := f.walkIn(visitor(0), at(0), limits())
	f.leave(visitor(0), res.Key, 1, limits())
	if s := f.snap(at(1)); s.Active != 0 {
		t.Fatalf("active %d after leaving, want 0", s.Active)
	}
	f.expectClaim("claim after leaving", visitor(0), res.Key, at(2), limits(), waitingroom.Finished)
}

// testLeftPlaceNeverLiveAgain: a judged place whose holder left no longer
// counts for positions, even when a copy of its ticket keeps beating.
func testLeftPlaceNeverLive(t *testing.T, h Harness) {
	f := newFixture(t, h)
	live := f.liveLine(0, 5, 160)
	closed := liveLimits()
	closed.Open = false
	f.leave(visitor(2), live[2], 160.5, closed)
	f.beat(waitingroom.Beats{Places: live}, at(161), closed)
	f.advance(at(161), closed)
	s := f.snap(at(161))
	if len(s.Live.Counts) != 1 || s.Live.Counts[0] != 4 {
		t.Fatalf("live counts %v, want [4]", s.Live.Counts)
	}
	if p := live[2]; s.Live.Head[p/8]&(0x80>>(p%8)) != 0 {
		t.Fatalf("the left place %d is still live", p)
	}
	f.advance(at(162), liveLimits())
	if s := f.snap(at(162)); s.Serving != 5 || s.Admitted != 4 || s.Skipped != 1 {
		t.Fatalf("serving %d admitted %d skipped %d; want 5, 4, 1", s.Serving, s.Admitted, s.Skipped)
	}
}

// testLeaveReturner: a fan back at the front, waiting for a slot, who leaves
// gives up the slot and budget kept for them.
func testLeaveReturner(t *testing.T, h Harness) {
	f, lim := admittedLine(t, h, 2, 1)
	f.advance(at(40), lim) // visitor 0's grace ends unclaimed
	f.advance(at(41), lim) // visitor 1 takes the slot
	f.expectClaim("place 1", visitor(1), 1, at(42), lim, waitingroom.Claimed)
	f.expectClaim("returner", visitor(0), 0, at(43), lim, waitingroom.Full)
	if s := f.snap(at(43)); s.Returning != 1 {
		t.Fatalf("returning %d, want 1", s.Returning)
	}
	f.leave(visitor(0), 0, 44, lim)
	if s := f.snap(at(44)); s.Returning != 0 {
		t.Fatalf("returning %d after leaving, want 0", s.Returning)
	}
	f.expectClaim("returner after leaving", visitor(0), 0, at(45), lim, waitingroom.Finished)
}
