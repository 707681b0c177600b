package storetest

import (
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/foyer-dev/foyer/waitingroom"
)

// Liveness: heartbeats, ghost places skipped without a slot, the live counts
// nodes compute positions from, and sessions that idle out.

func liveLimits() waitingroom.Limits {
	lim := limits()
	lim.WaitingIdle = 2 * time.Minute // windows of 30 s
	return lim
}

// liveLine joins ghosts ghost places and then live live ones while the room is
// closed, and keeps the live ones beating every 10 s with a controller step
// every second, until until (seconds). It returns the live places.
func (f *fixture) liveLine(ghosts, live int, until float64) []uint64 {
	f.t.Helper()
	closed := liveLimits()
	closed.Open = false
	var places []uint64
	for i := range ghosts + live {
		res := f.join(visitor(i), t0, closed)
		if i >= ghosts {
			places = append(places, res.Key)
		}
	}
	f.keepBeating(places, until, closed)
	return places
}

// keepBeating keeps places beating every 10 s, with a controller step every
// second, from t0 until until (seconds).
func (f *fixture) keepBeating(places []uint64, until float64, lim waitingroom.Limits) {
	f.t.Helper()
	for sec := 0.0; sec <= until; sec++ {
		if int(sec)%10 == 0 {
			f.beat(waitingroom.Beats{Places: places}, at(sec), lim)
		}
		f.advance(at(sec), lim)
	}
}

func (f *fixture) beat(b waitingroom.Beats, now time.Time, lim waitingroom.Limits) {
	f.t.Helper()
	if err := f.s.Beat(f.ctx, f.room, b, now, lim); err != nil {
		f.t.Fatalf("Beat: %v", err)
	}
}

// testGhostsSkipped: places unseen for the idle timeout are passed over
// without a slot; the live ones behind them are admitted at once.
func testGhostsSkipped(t *testing.T, h Harness) {
	f := newFixture(t, h)
	live := f.liveLine(100, 5, 160)
	s := f.snap(at(160))
	if s.Live.Young != 105 || s.Live.From != 0 {
		t.Fatalf("live counts from %d, young from %d; want 0 and 105 (every place joined a timeout ago)", s.Live.From, s.Live.Young)
	}
	if len(s.Live.Counts) != 1 || s.Live.Counts[0] != 5 {
		t.Fatalf("live counts %v, want [5]", s.Live.Counts)
	}
	for p := range uint64(105) {
		bit := s.Live.Head[p/8]&(0x80>>(p%8)) != 0
		if bit != (p >= live[0]) {
			t.Fatalf("head bit of place %d is %v", p, bit)
		}
	}
	f.advance(at(161), liveLimits())
	s = f.snap(at(161))
	if s.Serving != 105 || s.Admitted != 5 || s.Skipped != 100 || s.Pending != 5 {
		t.Fatalf("after one open step: serving %d admitted %d skipped %d pending %d; want 105, 5, 100, 5",
			s.Serving, s.Admitted, s.Skipped, s.Pending)
	}
	for i, p := range live {
		f.expectClaim(fmt.Sprintf("live place %d", p), visitor(100+i), p, at(162), liveLimits(), waitingroom.Claimed)
	}
	// A skipped ghost who comes back is an admission that lapsed: in at the
	// front, a slot being free.
	f.expectClaim("returning ghost (a lapsed admission)", visitor(0), 0, at(163), liveLimits(), waitingroom.Claimed)
	if s := f.snap(at(163)); s.Abandoned != 0 {
		t.Fatalf("abandoned %d: no slot may go to a ghost", s.Abandoned)
	}
}

// testGhostsAmongLive: the budget counts live places only, and admission
// stops right after the last live place admitted.
func testGhostsAmongLive(t *testing.T, h Harness) {
	f := newFixture(t, h)
	closed := liveLimits()
	closed.Open = false
	var live []uint64
	for i := range 60 {
		res := f.join(visitor(i), t0, closed)
		if i%3 == 2 {
			live = append(live, res.Key) // places 2, 5, 8, ...
		}
	}
	f.keepBeating(live, 160, closed)
	lim := liveLimits()
	lim.Rate = 240 // four a second
	f.advance(at(161), lim)
	s := f.snap(at(161))
	if s.Serving != 12 || s.Admitted != 4 || s.Skipped != 8 {
		t.Fatalf("serving %d admitted %d skipped %d; want 12, 4, 8", s.Serving, s.Admitted, s.Skipped)
	}
	if n := len(s.Batches); n != 1 || s.Batches[0].Count != 4 || s.Batches[0].End() != 12 {
		t.Fatalf("batches %+v, want one of 4 places over [0, 12)", s.Batches)
	}
	// The counts begin at serving's block: the places admitted were seen
	// while they waited, and count still; nodes count from serving.
	if s.Live.From != 0 || s.Live.Young != 60 || len(s.Live.Counts) != 1 || s.Live.Counts[0] != 20 {
		t.Fatalf("live from %d young %d counts %v; want 0, 60, [20]", s.Live.From, s.Live.Young, s.Live.Counts)
	}
}

// testYoungNeverSkipped: places that joined within the timeout are never
// judged, beats or not, and nor is any place while the store's history of
// beats is shorter than a timeout.
func testYoungNeverSkipped(t *testing.T, h Harness) {
	f := newFixture(t, h)
	f.fill(50, t0)
	lim := liveLimits()
	f.advanceEach(0, 200, lim)
	s := f.snap(at(200))
	if s.Skipped != 0 {
		t.Fatalf("skipped %d places that were admitted while young", s.Skipped)
	}
	if s.Serving != 50 {
		t.Fatalf("serving %d, want 50", s.Serving)
	}
}

// testGapJudgesNobody: a window in which no controller step ran (every node
// was away from the store) may have lost beats: nobody is judged until a whole
// timeout of windows has steps again.
func testGapJudgesNobody(t *testing.T, h Harness) {
	f := newFixture(t, h)
	f.liveLine(20, 0, 100)
	// No step from 100 s to 200 s; the next steps open the room.
	f.advanceEach(200, 260, liveLimits())
	if s := f.snap(at(260)); s.Skipped != 0 || s.Admitted != 20 {
		t.Fatalf("after a gap: skipped %d admitted %d; want 0 and 20", s.Skipped, s.Admitted)
	}
}

// testWipedStoreJudgesNobody: a store that lost its data lost its beats too:
// every place counts as live until a whole timeout of beats is in.
func testWipedStoreJudgesNobody(t *testing.T, h Harness) {
	needsWipe(t, h)
	f := newFixture(t, h)
	f.liveLine(30, 2, 160)
	before := f.snap(at(160))
	h.Wipe(t, f.s, f.room)
	f.init(waitingroom.Recall{Counters: before.Counters, Whole: true})
	lim := liveLimits()
	f.advanceEach(161, 200, lim)
	s := f.snap(at(200))
	if s.Skipped != 0 || s.Live.Young != 0 {
		t.Fatalf("after the loss: skipped %d, young from %d; want nobody judged", s.Skipped, s.Live.Young)
	}
}

// testBeatIgnoresAdmitted: beats for places below serving or beyond the keys
// handed out write nothing, and a beat for an unknown room says so.
func testBeatIgnoresAdmitted(t *testing.T, h Harness) {
	f := newFixture(t, h)
	f.fill(3, t0)
	f.beat(waitingroom.Beats{Places: []uint64{0, 1, 2, 3, 1 << 40}, Sessions: []string{"nobody"}}, at(1), liveLimits())
	err := f.s.Beat(f.ctx, roomName(t), waitingroom.Beats{Places: []uint64{1}}, at(1), liveLimits())
	if !errors.Is(err, waitingroom.ErrNoRoom) {
		t.Fatalf("Beat on an unknown room: %v, want ErrNoRoom", err)
	}
}

// testSessionIdleOut: a session whose visitor sends no request for the idle
// timeout ends and frees its slot; its passes are void (a revocation naming
// the visitor); a claim from the visitor is an admission that lapsed, not a
// finished one; a session in use stays.
func testSessionIdleOut(t *testing.T, h Harness) {
	f := newFixture(t, h)
	lim := liveLimits()
	lim.SessionIdle = time.Minute
	lim.Cap = 2
	a := f.walkIn("a", t0, lim) // the first visitor
	b := f.join("b", t0, lim)
	f.advance(at(1), lim)
	f.expectClaim("b", "b", b.Key, at(2), lim, waitingroom.Claimed)
	for sec := 2.0; sec <= 70; sec++ {
		if int(sec)%20 == 0 {
			f.beat(waitingroom.Beats{Sessions: []string{"b"}}, at(sec), lim)
		}
		f.advance(at(sec), lim)
	}
	s := f.snap(at(70))
	if s.Active != 1 || s.IdledOut != 1 {
		t.Fatalf("active %d idled out %d; want b alone live and a idled out", s.Active, s.IdledOut)
	}
	var idle *waitingroom.Revocation
	for i, rv := range s.Revocations {
		if rv.Visitor == "a" {
			idle = &s.Revocations[i]
		}
	}
	if idle == nil || idle.PassID != "" || idle.IdledAt.Before(at(60)) || idle.IdledAt.After(at(61)) || !idle.ExpiresAt.Equal(a.Expires) {
		t.Fatalf("revocations %+v: want a's idle-out at 60 s, until its session's end %v", s.Revocations, a.Expires)
	}
	// a comes back and a slot is free: a resumes the session it had, to the
	// same end (so the same pass id), not a new full one.
	c := f.claim("a", a.Key, at(71), lim)
	if c.Status != waitingroom.Claimed || !c.Expires.Equal(a.Expires) {
		t.Fatalf("a after idling out: %v until %v, want its session resumed until %v", c.Status, c.Expires, a.Expires)
	}
	// Claiming again while it is live is that same session.
	if again := f.claim("a", a.Key, at(72), lim); again.Status != waitingroom.Claimed || !again.Expires.Equal(a.Expires) {
		t.Fatalf("a claiming again: %v until %v, want the same session", again.Status, again.Expires)
	}
	// Released for good, b is finished.
	if err := f.s.Release(f.ctx, f.room, "b", "", time.Time{}, at(72), lim); err != nil {
		t.Fatal(err)
	}
	f.expectClaim("b after release", "b", b.Key, at(73), lim, waitingroom.Finished)
}

// testIdledOutSessionEndsWhenItWould: a session that idled out gives its
// holder back only the time it had left, once per idle-out: the ticket's
// sessions together never outlast one session length. Past the session's end
// the visitor has finished; a second idle-out may be resumed too, to the same
// end.
func testIdledOutSessionEndsWhenItWould(t *testing.T, h Harness) {
	f := newFixture(t, h)
	lim := liveLimits()
	lim.SessionIdle = time.Minute
	lim.Session = 3 * time.Minute
	lim.ReturnWindow = 10 * time.Minute
	lim.Cap = 2
	a := f.walkIn("a", t0, lim)
	f.advanceEach(1, 65, lim)
	if s := f.snap(at(65)); s.Active != 0 || s.IdledOut != 1 {
		t.Fatalf("active %d idled out %d; want a idled out", s.Active, s.IdledOut)
	}
	if c := f.claim("a", a.Key, at(66), lim); c.Status != waitingroom.Claimed || !c.Expires.Equal(a.Expires) {
		t.Fatalf("first return: %v until %v, want resumed until %v", c.Status, c.Expires, a.Expires)
	}
	// Quiet again: a second idle-out, resumed to the same end once more.
	f.advanceEach(67, 130, lim)
	if s := f.snap(at(130)); s.Active != 0 || s.IdledOut != 2 {
		t.Fatalf("active %d idled out %d; want a idled out twice", s.Active, s.IdledOut)
	}
	if c := f.claim("a", a.Key, at(131), lim); c.Status != waitingroom.Claimed || !c.Expires.Equal(a.Expires) {
		t.Fatalf("second return: %v until %v, want resumed until %v", c.Status, c.Expires, a.Expires)
	}
	// Quiet until the session would have ended: coming back then, a has
	// finished, and no new session is opened.
	f.advanceEach(132, 200, lim)
	f.expectClaim("return after the session's end", "a", a.Key, at(201), lim, waitingroom.Finished)
	if s := f.snap(at(201)); s.Active != 0 {
		t.Fatalf("active %d after a finished; want 0", s.Active)
	}
}

// testSessionIdleOff: without an idle timeout a quiet session lasts its
// whole duration.
func testSessionIdleOff(t *testing.T, h Harness) {
	f := newFixture(t, h)
	lim := liveLimits()
	f.join("a", t0, lim)
	for sec := 1.0; sec <= 300; sec += 10 {
		f.advance(at(sec), lim)
	}
	if s := f.snap(at(300)); s.Active != 1 || s.IdledOut != 0 {
		t.Fatalf("active %d idled out %d; want the session live", s.Active, s.IdledOut)
	}
}

// testGhostRunLongerThanAStep: a step walks at most LiveStepBlocks blocks of
// ghosts, so that its cost does not grow with the line; the next step goes on
// from there and admits the live places behind them.
func testGhostRunLongerThanAStep(t *testing.T, h Harness) {
	f := newFixture(t, h)
	closed := liveLimits()
	closed.Open = false
	const run = waitingroom.LiveStepBlocks * waitingroom.LiveBlock
	const n = run + 1000
	batch := make([]string, 10000)
	for i := range batch {
		batch[i] = visitor(i)
	}
	for joined := 0; joined < n; joined += len(batch) {
		if _, err := f.s.JoinMany(f.ctx, f.room, joiners(batch[:min(len(batch), n-joined)]...), t0, closed); err != nil {
			t.Fatal(err)
		}
	}
	var live []uint64
	for p := uint64(n - 10); p < n; p++ {
		live = append(live, p)
	}
	f.keepBeating(live, 160, closed)
	lim := liveLimits()
	lim.Rate = 240 // four a second
	f.advance(at(161), lim)
	if s := f.snap(at(161)); s.Serving != run || s.Admitted != 0 || s.Skipped != run {
		t.Fatalf("after one step: serving %d admitted %d skipped %d; want %d, 0, %d (one step's walk of ghosts)", s.Serving, s.Admitted, s.Skipped, run, run)
	}
	f.advance(at(162), lim)
	if s := f.snap(at(162)); s.Serving != n-6 || s.Admitted != 4 || s.Skipped != n-10 {
		t.Fatalf("after two steps: serving %d admitted %d skipped %d; want %d, 4, %d", s.Serving, s.Admitted, s.Skipped, n-6, n-10)
	}
}
