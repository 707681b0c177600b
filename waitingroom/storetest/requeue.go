package storetest

import (
	"fmt"
	"testing"
	"time"

	"github.com/foyer-dev/foyer/waitingroom"
)

// Requeues (docs/PROTOCOL.md, "Requeue"): a session the site failed ends,
// its slot freed, and its visitor waits first at the front with their place,
// after those requeued before them, at most Limits.Requeues times.

var requeueTests = []struct {
	name string
	fn   func(*testing.T, Harness)
}{
	{"RequeueGoesFirstOnceAndIsCounted", testRequeueFirst},
	{"RequeuedGoInTheOrderRequeued", testRequeueOrder},
	{"RequeueNeverAboveTheCap", testRequeueCap},
	{"RequeuedWhoStopsAskingLosesTheFront", testRequeueStopsAsking},
	{"RequeueWithoutASession", testRequeueNoSession},
	{"RequeuedSessionsNeverShareAnEnd", testRequeueNewEnd},
	{"AnEarlierSessionsPassEndsNothing", testEarlierPassEndsNothing},
}

// requeueLimits: two slots, ten visitors a second, one requeue per visitor.
func requeueLimits() waitingroom.Limits {
	lim := limits()
	lim.Cap = 2
	lim.Requeues = 1
	return lim
}

func (f *fixture) requeue(v string, now time.Time, lim waitingroom.Limits) waitingroom.RequeueResult {
	f.t.Helper()
	// The pass of the visitor's last session: its end names the session.
	ends := f.ends[v]
	if ends.IsZero() {
		ends = now.Add(time.Minute)
	}
	res, err := f.s.Requeue(f.ctx, f.room, v, "pass-"+v+"-"+ends.Format(time.RFC3339Nano), ends.Truncate(time.Second), now, lim)
	if err != nil {
		f.t.Fatalf("Requeue(%s): %v", v, err)
	}
	return res
}

// sessions lets places 0 and 1 in and claims them, with places 2 and 3
// waiting behind: at 1.5 s both slots are taken.
func (f *fixture) sessions(lim waitingroom.Limits) {
	f.t.Helper()
	f.fill(4, t0)
	f.advance(at(1), lim)
	for i := range 2 {
		f.expectClaim(fmt.Sprintf("claim %d", i), visitor(i), uint64(i), at(1.5), lim, waitingroom.Claimed)
	}
}

func testRequeueFirst(t *testing.T, h Harness) {
	f := newFixture(t, h)
	lim := requeueLimits()
	f.sessions(lim)
	res := f.requeue(visitor(0), at(2), lim)
	if res.Status != waitingroom.RequeueDone || res.Count != 1 {
		t.Fatalf("requeue: %v, count %d; want requeued, 1", res.Status, res.Count)
	}
	s := f.snap(at(2))
	if s.Active != 1 || s.Returning != 1 || s.Requeued != 1 {
		t.Fatalf("active %d returning %d requeued %d; want 1, 1, 1", s.Active, s.Returning, s.Requeued)
	}
	if len(s.Revocations) != 1 || s.Revocations[0].PassID == "" {
		t.Fatalf("revocations %+v; want the requeued session's pass", s.Revocations)
	}
	// The slot the session freed is kept for the requeued visitor: the line
	// behind gets none.
	f.advance(at(3), lim)
	if s := f.snap(at(3)); s.Serving != 2 {
		t.Fatalf("serving %d after the requeue; want 2: the freed slot is the requeued visitor's", s.Serving)
	}
	c := f.claim(visitor(0), 0, at(4), lim)
	if want := at(4).Add(lim.Session); c.Status != waitingroom.Claimed || !c.Expires.Equal(want) {
		t.Fatalf("the requeued visitor's claim: %v ending %v; want a new session to %v", c.Status, c.Expires, want)
	}
	if s := f.snap(at(4)); s.Active != 2 || s.Returning != 0 || s.Returned != 1 {
		t.Fatalf("active %d returning %d returned %d; want 2, 0, 1", s.Active, s.Returning, s.Returned)
	}
	// One requeue per visitor: the next leaves the session running.
	if res := f.requeue(visitor(0), at(5), lim); res.Status != waitingroom.RequeueSpent || res.Count != 1 {
		t.Fatalf("second requeue: %v, count %d; want spent, 1", res.Status, res.Count)
	}
	if c := f.claim(visitor(0), 0, at(6), lim); c.Status != waitingroom.Claimed || !c.Expires.Equal(at(4).Add(lim.Session)) {
		t.Fatalf("after a spent requeue: %v ending %v; want the same session", c.Status, c.Expires)
	}
	if s := f.snap(at(6)); s.Requeued != 1 || s.Active != 2 {
		t.Fatalf("requeued %d active %d; want 1, 2", s.Requeued, s.Active)
	}
}

func testRequeueOrder(t *testing.T, h Harness) {
	f := newFixture(t, h)
	lim := requeueLimits()
	f.sessions(lim)
	f.requeue(visitor(1), at(2), lim)
	f.requeue(visitor(0), at(2.5), lim)
	f.expectClaim("the second requeued, asking first (it waits behind the first)", visitor(0), 0, at(3), lim, waitingroom.Requeued)
	f.expectClaim("the first requeued", visitor(1), 1, at(3.1), lim, waitingroom.Claimed)
	f.expectClaim("the second requeued, once the first is in", visitor(0), 0, at(3.2), lim, waitingroom.Claimed)
	if s := f.snap(at(3.2)); s.Active != 2 || s.Returning != 0 {
		t.Fatalf("active %d returning %d; want 2, 0", s.Active, s.Returning)
	}
}

func testRequeueCap(t *testing.T, h Harness) {
	f := newFixture(t, h)
	lim := requeueLimits()
	f.sessions(lim)
	f.requeue(visitor(0), at(2), lim)
	f.advance(at(3), lim)
	if s := f.snap(at(3)); s.Serving != 2 {
		t.Fatalf("serving %d; want 2: the freed slot is the requeued visitor's", s.Serving)
	}
	f.claim(visitor(0), 0, at(3.5), lim)
	f.advance(at(4), lim)
	if s := f.snap(at(4)); s.Active+s.Pending > lim.Cap {
		t.Fatalf("active %d pending %d; cap %d", s.Active, s.Pending, lim.Cap)
	}
	// With the slot taken, a requeued visitor waits: never above the cap.
	lim.Requeues = 2
	f.requeue(visitor(0), at(5), lim)
	f.expectClaim("the other live session", visitor(1), 1, at(5.1), lim, waitingroom.Claimed)
	f.expectClaim("requeued with its slot free", visitor(0), 0, at(5.3), lim, waitingroom.Claimed)
	if s := f.snap(at(5.3)); s.Active > lim.Cap {
		t.Fatalf("active %d; cap %d", s.Active, lim.Cap)
	}
}

func testRequeueStopsAsking(t *testing.T, h Harness) {
	f := newFixture(t, h)
	lim := requeueLimits()
	f.sessions(lim)
	f.requeue(visitor(0), at(2), lim)
	f.requeue(visitor(1), at(2), lim)
	// Visitor 1 keeps asking; visitor 0, ahead of them, never does.
	for sec := 3.0; sec < 2+waitingroom.ReturnerWindow.Seconds(); sec += 10 {
		f.expectClaim(fmt.Sprintf("at %.0fs (behind visitor 0)", sec), visitor(1), 1, at(sec), lim, waitingroom.Requeued)
		f.advance(at(sec+0.5), lim)
	}
	f.advance(at(2+waitingroom.ReturnerWindow.Seconds()+1), lim)
	f.expectClaim("once visitor 0 stopped asking", visitor(1), 1, at(50), lim, waitingroom.Claimed)
	// The store forgot visitor 0's place at the front with the returners:
	// their session is over, and they rejoin at the back.
	f.expectClaim("visitor 0, back after the returner window", visitor(0), 0, at(51), lim, waitingroom.Finished)
}

func testRequeueNoSession(t *testing.T, h Harness) {
	f := newFixture(t, h)
	lim := requeueLimits()
	f.sessions(lim)
	if res := f.requeue(visitor(2), at(2), lim); res.Status != waitingroom.RequeueNoSession {
		t.Fatalf("requeue of a waiting visitor: %v; want no_session", res.Status)
	}
	lim.Requeues = 0
	if res := f.requeue(visitor(1), at(2), lim); res.Status != waitingroom.RequeueSpent {
		t.Fatalf("requeue with none allowed: %v; want spent", res.Status)
	}
	if s := f.snap(at(2)); s.Requeued != 0 || s.Active != 2 {
		t.Fatalf("requeued %d active %d; want 0, 2", s.Requeued, s.Active)
	}
}

// testRequeueNewEnd: requeued and let in again within the second the failed
// session began, twice, the new sessions end each a second later: a pass id
// (SessionPassID) is never that of a failed session, which is refused.
func testRequeueNewEnd(t *testing.T, h Harness) {
	f := newFixture(t, h)
	lim := requeueLimits()
	lim.Requeues = 2
	first := f.join(visitor(0), at(1), lim)
	if !first.Admitted {
		t.Fatal("the first visitor was not let in on the spot")
	}
	ends := first.Expires
	f.advance(at(1.1), lim) // the second's budget
	for i := range 2 {
		f.requeue(visitor(0), at(1.2+0.2*float64(i)), lim)
		c := f.claim(visitor(0), 0, at(1.3+0.2*float64(i)), lim)
		if c.Status != waitingroom.Claimed || c.Expires.Unix() <= ends.Unix() {
			t.Fatalf("let in again (%d): %v ending %v; want a session ending in a second after %v", i+1, c.Status, c.Expires, ends)
		}
		ends = c.Expires
	}
}

// testEarlierPassEndsNothing: a requeued fan let in again holds a new
// session. A request still carrying the failed session's pass (a copy, or
// one in flight before every node heard of its revocation) may bring the
// origin's revoke or another failure: it names the session that is over,
// and must end nothing of the new one.
func testEarlierPassEndsNothing(t *testing.T, h Harness) {
	f := newFixture(t, h)
	lim := requeueLimits()
	lim.Requeues = 2
	first := f.join(visitor(0), at(1), lim)
	if !first.Admitted {
		t.Fatal("the first visitor was not let in on the spot")
	}
	f.advance(at(1.1), lim)
	f.requeue(visitor(0), at(1.2), lim)
	again := f.claim(visitor(0), 0, at(1.3), lim)
	if again.Status != waitingroom.Claimed {
		t.Fatalf("requeued fan asking again: %v, want claimed", again.Status)
	}
	old := first.Expires.Truncate(time.Second)
	if res, err := f.s.Requeue(f.ctx, f.room, visitor(0), "old-pass", old, at(1.4), lim); err != nil || res.Status != waitingroom.RequeueNoSession {
		t.Fatalf("requeue with the failed session's pass: %+v, %v; want no session", res, err)
	}
	if err := f.s.Release(f.ctx, f.room, visitor(0), "old-pass", old, at(1.5), lim); err != nil {
		t.Fatal(err)
	}
	if c := f.claim(visitor(0), 0, at(1.6), lim); c.Status != waitingroom.Claimed || !c.Expires.Equal(again.Expires) {
		t.Fatalf("after the old pass's revoke the new session is %v ending %v; want it live, ending %v", c.Status, c.Expires, again.Expires)
	}
	if s := f.snap(at(1.6)); s.Active != 1 {
		t.Fatalf("%d active sessions, want the new one", s.Active)
	}
	// The old pass itself is still recorded as revoked.
	found := false
	for _, r := range f.snap(at(1.6)).Revocations {
		found = found || r.PassID == "old-pass"
	}
	if !found {
		t.Fatal("the old pass's revocation was not recorded")
	}
	// Its own pass ends it.
	if err := f.s.Release(f.ctx, f.room, visitor(0), "new-pass", again.Expires.Truncate(time.Second), at(1.7), lim); err != nil {
		t.Fatal(err)
	}
	if s := f.snap(at(1.7)); s.Active != 0 {
		t.Fatalf("%d active sessions after the new pass's revoke, want 0", s.Active)
	}
}
