package storetest

import (
	"fmt"
	"testing"
	"time"

	"github.com/foyer-dev/foyer/waitingroom"
)

// Returners: fans who come back at the front (a lapsed admission, a skipped
// ghost, an idled-out session) are let in within the rate, ahead of the line,
// and never into a slot of a live fan admitted in the same step.

// testReturnersWithinTheRate: twenty skipped ghosts come back at once with
// slots to spare, at one a second. They are let in one a step: each step
// keeps its budget for them, the line behind them waits until they are all
// in, and a newcomer is not let in on the spot meanwhile.
func testReturnersWithinTheRate(t *testing.T, h Harness) {
	f := newFixture(t, h)
	live := f.liveLine(20, 2, 160)
	lim := liveLimits()
	lim.Rate = 60 // one a second
	f.advance(at(161), lim)
	if s := f.snap(at(161)); s.Serving != live[0]+1 || s.Skipped != 20 || s.Admitted != 1 {
		t.Fatalf("first open step: serving %d skipped %d admitted %d, want %d, 20, 1", s.Serving, s.Skipped, s.Admitted, live[0]+1)
	}
	f.expectClaim(fmt.Sprintf("live place %d", live[0]), visitor(20), live[0], at(161.2), lim, waitingroom.Claimed)
	in := make(map[int]bool)
	back := func(now time.Time) int {
		n := 0
		for i := range 20 {
			if in[i] {
				continue
			}
			switch c := f.claim(visitor(i), uint64(i), now, lim); c.Status {
			case waitingroom.Claimed:
				in[i] = true
				n++
			case waitingroom.Full:
			default:
				t.Fatalf("ghost %d back at %v: %v, want claimed or full", i, now.Sub(t0), c.Status)
			}
		}
		return n
	}
	// The budget of the step at 161 s went to the live place.
	if n := back(at(161.5)); n != 0 {
		t.Fatalf("%d ghosts let in with the budget spent, want 0", n)
	}
	if j := f.join("newcomer", at(161.6), lim); j.Admitted {
		t.Fatal("a newcomer was let in on the spot while returners wait at the front")
	}
	for sec := 162.0; len(in) < 20; sec++ {
		if sec > 200 {
			t.Fatalf("%d of 20 returners in after 40 steps", len(in))
		}
		f.advance(at(sec), lim)
		if s := f.snap(at(sec)); s.Serving != live[0]+1 {
			t.Fatalf("at %vs, %d returners in: serving %d, want %d: the line waits behind the returners", sec, len(in), s.Serving, live[0]+1)
		}
		if n := back(at(sec + 0.5)); n != 1 {
			t.Fatalf("step at %vs let %d returners in, want 1 (one a second)", sec, n)
		}
	}
	s := f.snap(at(182))
	if s.Returned != 20 || s.Returning != 0 || s.Active != 21 {
		t.Fatalf("returned %d returning %d active %d, want 20, 0, 21", s.Returned, s.Returning, s.Active)
	}
	f.advance(at(182), lim)
	if s := f.snap(at(182)); s.Serving != live[1]+1 {
		t.Fatalf("once the returners are in: serving %d, want %d", s.Serving, live[1]+1)
	}
}

// testGhostTakesNoLiveSlot: a step with one slot skips a ghost and admits the
// live place behind it. The ghost comes back within that admission's grace:
// it is a returner, told the room is full, and the live fan claims the slot.
// Once the slot frees, the ghost goes in at the front.
func testGhostTakesNoLiveSlot(t *testing.T, h Harness) {
	f := newFixture(t, h)
	live := f.liveLine(1, 1, 160)
	lim := liveLimits()
	lim.Cap = 1
	lim.Rate = 120
	f.advance(at(161), lim)
	s := f.snap(at(161))
	if len(s.Batches) != 1 || s.Batches[0].Count != 1 || s.Batches[0].End() != live[0]+1 {
		t.Fatalf("batches %+v, want one admitting place %d over [0, %d)", s.Batches, live[0], live[0]+1)
	}
	f.expectClaim("the skipped ghost back within the grace (the one slot is the live fan's)", visitor(0), 0, at(162), lim, waitingroom.Full)
	f.expectClaim("the live fan admitted past the ghost", visitor(1), live[0], at(163), lim, waitingroom.Claimed)
	if s := f.snap(at(163)); s.Active != 1 || s.Pending != 0 || s.Returning != 1 {
		t.Fatalf("active %d pending %d returning %d, want 1, 0, 1", s.Active, s.Pending, s.Returning)
	}
	if err := f.s.Release(f.ctx, f.room, visitor(1), "", time.Time{}, at(170), lim); err != nil {
		t.Fatal(err)
	}
	f.advance(at(171), lim)
	f.expectClaim("the ghost once the slot freed", visitor(0), 0, at(171.5), lim, waitingroom.Claimed)
	if s := f.snap(at(171.5)); s.Returned != 1 || s.Active != 1 {
		t.Fatalf("returned %d active %d, want 1 and 1", s.Returned, s.Active)
	}
}

// testIdledOutResumeWithinTheRate: sessions that idled out resume within the
// rate too, to the end they had.
func testIdledOutResumeWithinTheRate(t *testing.T, h Harness) {
	f := newFixture(t, h)
	lim := liveLimits()
	lim.SessionIdle = time.Minute
	lim.Rate = 60
	var ends []time.Time
	for i := range 3 {
		j := f.walkIn(visitor(i), at(float64(i)), lim)
		ends = append(ends, j.Expires)
		f.advance(at(float64(i)+0.5), lim)
	}
	f.advanceEach(3, 70, lim)
	if s := f.snap(at(70)); s.IdledOut != 3 || s.Active != 0 {
		t.Fatalf("idled out %d active %d, want 3 and 0", s.IdledOut, s.Active)
	}
	// All three come back at once, the step at 70 s having banked a
	// visitor's worth: one a step goes in, to the end their session had.
	in := make(map[int]bool)
	for sec := 70.5; len(in) < 3; sec++ {
		if sec > 75 {
			t.Fatalf("%d of 3 resumed after 5 steps", len(in))
		}
		n := 0
		for i := range 3 {
			if in[i] {
				continue
			}
			switch c := f.claim(visitor(i), uint64(i), at(sec), lim); c.Status {
			case waitingroom.Claimed:
				if !c.Expires.Equal(ends[i]) {
					t.Fatalf("visitor %d resumed until %v, want %v", i, c.Expires, ends[i])
				}
				in[i] = true
				n++
			case waitingroom.Full:
			default:
				t.Fatalf("visitor %d back at %vs: %v, want claimed or full", i, sec, c.Status)
			}
		}
		if n != 1 {
			t.Fatalf("at %vs %d sessions resumed, want 1 (one a second)", sec, n)
		}
		f.advance(at(sec+0.5), lim)
	}
}

// testGhostRunsAcrossBlocks: the runs of ghosts a step skips among the live
// places it admits are told apart place by place, over a line long enough
// that the runs cross the stores' blocks of heartbeats, one of which nobody
// beat in at all. Every ghost in them comes back as a returner (with both
// slots pending, told the room is full); each live place claims its slot.
func testGhostRunsAcrossBlocks(t *testing.T, h Harness) {
	f := newFixture(t, h)
	closed := liveLimits()
	closed.Open = false
	const n = 2*31*waitingroom.LiveBlock + 100 // past two of the Redis store's blocks of beats
	live := []uint64{100, n - 50}
	for k := 0; k < n; k += 2000 {
		var vs []waitingroom.Joiner
		for i := k; i < min(k+2000, n); i++ {
			vs = append(vs, waitingroom.Joiner{Visitor: visitor(i)})
		}
		if _, err := f.s.JoinMany(f.ctx, f.room, vs, t0, closed); err != nil {
			t.Fatalf("JoinMany: %v", err)
		}
	}
	f.keepBeating(live, 160, closed)
	lim := liveLimits()
	lim.Cap = 2
	lim.Rate = 120
	f.advance(at(161), lim)
	if s := f.snap(at(161)); s.Serving != live[1]+1 || s.Admitted != 2 || s.Skipped != live[1]-1 {
		t.Fatalf("serving %d admitted %d skipped %d; want %d, 2, %d", s.Serving, s.Admitted, s.Skipped, live[1]+1, live[1]-1)
	}
	beat := uint64(31 * waitingroom.LiveBlock)
	for _, g := range []uint64{0, 99, 101, beat - 1, beat, beat + 7, 2*beat - 1, 2 * beat, live[1] - 1} {
		f.expectClaim(fmt.Sprintf("ghost place %d back within the grace (both slots are the live fans')", g), visitor(int(g)), g, at(162), lim, waitingroom.Full)
	}
	for _, p := range live {
		f.expectClaim(fmt.Sprintf("live place %d", p), visitor(int(p)), p, at(163), lim, waitingroom.Claimed)
	}
}
