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

var requeueTests = []suiteTest{
	{"RequeueGoesFirstOnceAndIsCounted", testRequeueFirst},
	{"RequeuedGoInTheOrderRequeued", testRequeueOrder},
	{"RequeueNeverAboveTheCap", testRequeueCap},
	{"RequeuedWhoStopsAskingLosesTheFront", testRequeueStopsAsking},
	{"RequeuedLetInByTheStepInOrder", testRequeueLetInByTheStep},
	{"RequeuedLetInAndNotBackLapses", testRequeueLetInLapses},
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

// withSessions is a fixture with requeueLimits whose places 0 and 1 hold
// sessions (see sessions).
func withSessions(t *testing.T, h Harness) (*fixture, waitingroom.Limits) {
	t.Helper()
	f := newFixture(t, h)
	lim := requeueLimits()
	f.sessions(lim)
	return f, lim
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
	f, lim := withSessions(t, h)
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
	f, lim := withSessions(t, h)
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
	f, lim := withSessions(t, h)
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
	f, lim := withSessions(t, h)
	// The room admits nobody: the requeued wait at the front.
	paused := lim
	paused.Open = false
	f.requeue(visitor(0), at(2), paused)
	f.requeue(visitor(1), at(2), paused)
	// Visitor 1 keeps asking; visitor 0, ahead of them, never does.
	for sec := 3.0; sec < 2+waitingroom.ReturnerWindow.Seconds(); sec += 10 {
		f.expectClaim(fmt.Sprintf("at %.0fs (behind visitor 0)", sec), visitor(1), 1, at(sec), paused, waitingroom.Requeued)
		f.advance(at(sec+0.5), paused)
	}
	f.advance(at(2+waitingroom.ReturnerWindow.Seconds()+1), paused)
	// Open again, the controller lets visitor 1 in; visitor 0 stopped
	// asking and the store forgot their place at the front with the
	// returners.
	f.advance(at(50), lim)
	if s := f.snap(at(50)); s.Pending != 2 || s.Returning != 0 || s.Returned != 1 || s.Serving != 3 {
		t.Fatalf("pending %d returning %d returned %d serving %d after the step; want 2, 0, 1, 3: visitor 1 let in again, and visitor 0's slot gone to the line", s.Pending, s.Returning, s.Returned, s.Serving)
	}
	f.expectClaim("visitor 1, let in by the step", visitor(1), 1, at(50.5), lim, waitingroom.Claimed)
	// Their session is over, and they rejoin at the back.
	f.expectClaim("visitor 0, back after the returner window", visitor(0), 0, at(51), lim, waitingroom.Finished)
}

// testRequeueLetInByTheStep: the controller's step lets the requeued in
// again itself, before the line, in the order they were requeued, within
// the rate and the cap, whether or not they asked since; their next claim
// opens the new session. A second step in the same second (another node's)
// does nothing more.
func testRequeueLetInByTheStep(t *testing.T, h Harness) {
	f, lim := withSessions(t, h)
	f.requeue(visitor(1), at(2), lim)
	f.requeue(visitor(0), at(2.5), lim)
	// One visitor's worth of budget a second from now on.
	slow := lim
	slow.Rate = 60
	f.advance(at(3), slow)
	f.advance(at(3.5), slow)
	s := f.snap(at(3.5))
	if s.Serving != 2 || s.Pending != 1 || s.Returning != 1 || s.Returned != 1 {
		t.Fatalf("serving %d pending %d returning %d returned %d after the step; want 2, 1, 1, 1: the first requeued let in, the line not", s.Serving, s.Pending, s.Returning, s.Returned)
	}
	f.expectClaim("the second requeued, with the step's budget spent", visitor(0), 0, at(3.6), slow, waitingroom.Requeued)
	c := f.claim(visitor(1), 1, at(3.7), slow)
	if want := at(3.7).Add(lim.Session); c.Status != waitingroom.Claimed || !c.Expires.Equal(want) {
		t.Fatalf("the first requeued, let in by the step: %v ending %v; want a new session to %v", c.Status, c.Expires, want)
	}
	f.advance(at(4), slow)
	if s := f.snap(at(4)); s.Serving != 2 || s.Pending != 1 || s.Active != 1 || s.Returned != 2 {
		t.Fatalf("serving %d pending %d active %d returned %d; want 2, 1, 1, 2: the second requeued let in at the next step", s.Serving, s.Pending, s.Active, s.Returned)
	}
	f.expectClaim("the second requeued, let in by the step", visitor(0), 0, at(4.5), slow, waitingroom.Claimed)
	if s := f.snap(at(4.5)); s.Active != 2 || s.Pending != 0 || s.Claimed != 4 || s.Abandoned != 0 {
		t.Fatalf("active %d pending %d claimed %d lapsed %d; want 2, 0, 4, 0", s.Active, s.Pending, s.Claimed, s.Abandoned)
	}
}

// testRequeueLetInLapses: a requeued fan let in again by the step who does
// not come for the session within the grace loses it, as a line's admission
// lapses: the slot goes to the line, the admission counts as lapsed (so the
// fairness report's counts still add up), and the place at the front is
// over. One who leaves gives the slot back at once.
func testRequeueLetInLapses(t *testing.T, h Harness) {
	f := newFixture(t, h)
	lim := requeueLimits()
	lim.Cap = 3
	f.fill(5, t0)
	f.advance(at(1), lim)
	for i := range 3 {
		f.expectClaim(fmt.Sprintf("claim %d", i), visitor(i), uint64(i), at(1.5), lim, waitingroom.Claimed)
	}
	f.requeue(visitor(0), at(2), lim)
	f.requeue(visitor(1), at(2), lim)
	f.advance(at(3), lim)
	if s := f.snap(at(3)); s.Serving != 3 || s.Pending != 2 || s.Returned != 2 {
		t.Fatalf("serving %d pending %d returned %d; want 3, 2, 2", s.Serving, s.Pending, s.Returned)
	}
	// Visitor 1 leaves: their slot goes back at once, to the line.
	f.leave(visitor(1), 1, 4, lim)
	f.advance(at(5), lim)
	if s := f.snap(at(5)); s.Serving != 4 || s.Pending != 2 || s.Abandoned != 1 {
		t.Fatalf("after visitor 1 left: serving %d pending %d lapsed %d; want 4, 2, 1", s.Serving, s.Pending, s.Abandoned)
	}
	// Visitor 0 never comes: the admission lapses with the grace.
	f.advance(at(3).Add(lim.Grace), lim)
	s := f.snap(at(3).Add(lim.Grace))
	if s.Abandoned != 2 || s.Serving != 5 {
		t.Fatalf("after the grace: lapsed %d serving %d; want 2 (visitor 1 and visitor 0), 5: visitor 0's slot gone to place 4", s.Abandoned, s.Serving)
	}
	f.expectClaim("visitor 0, after the grace", visitor(0), 0, at(3).Add(lim.Grace+time.Second), lim, waitingroom.Finished)
	// admitted = claimed − returned + lapsed + unclaimed (docs/PROTOCOL.md, "Counts").
	if uint64(int64(s.Claimed)-int64(s.Returned)+int64(s.Abandoned)+int64(s.Pending)) != s.Admitted {
		t.Fatalf("admitted %d, claimed %d, returned %d, lapsed %d, unclaimed %d: the counts do not add up", s.Admitted, s.Claimed, s.Returned, s.Abandoned, s.Pending)
	}
}

func testRequeueNoSession(t *testing.T, h Harness) {
	f, lim := withSessions(t, h)
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
	first := f.walkIn(visitor(0), at(1), lim)
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
	first := f.walkIn(visitor(0), at(1), lim)
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
