package storetest

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/foyer-dev/foyer/waitingroom"
)

// Harness tells the suite how to get at a backend.
type Harness struct {
	// New returns a store ready for use. Rooms are named uniquely per test, so a
	// backend may share one server between tests running in parallel.
	New func(t *testing.T) waitingroom.Store
	// Pair returns two independent handles on one backend (two clients of one
	// server), as two gateway nodes would hold. Nil: the suite uses New twice on
	// the same store.
	Pair func(t *testing.T) (waitingroom.Store, waitingroom.Store)
	// Wipe makes the backend lose everything it holds for room, as a restarted
	// server without persistence would.
	Wipe func(t *testing.T, s waitingroom.Store, room string)
}

// suiteTest is one test of the suite, run as a subtest under name. The
// tests of a concern kept in a file of its own are listed there, in a table
// of these, and added to the suite by Run.
type suiteTest struct {
	name string
	fn   func(*testing.T, Harness)
}

// Run runs the whole suite.
func Run(t *testing.T, h Harness) {
	tests := []suiteTest{
		{"UninitialisedRoom", testUninitialised},
		{"KeysInJoinOrder", testKeysInJoinOrder},
		{"FirstVisitorWalksIn", testFirstVisitorWalksIn},
		{"JoinManyIsJoinsInARow", testJoinMany},
		{"ClosedRoomAdmitsNobody", testClosedRoom},
		{"RateBudget", testRateBudget},
		{"SlowRateBanksOneVisitor", testSlowRate},
		{"OneStepPerSecond", testOneStepPerSecond},
		{"PaceRecorded", testPace},
		{"CapBoundsSessions", testCap},
		{"ClaimLifecycle", testClaimLifecycle},
		{"SessionExpiryFreesSlot", testSessionExpiry},
		{"RejoinWhileLiveKeepsOneSession", testRejoinWhileLive},
		{"PlaceNeverClaimedTwiceFromItsBatch", testClaimAfterForgotten},
		{"ReleaseRevokes", testRelease},
		{"OneSessionPerVisitor", testOneSessionPerVisitor},
		{"ReleaseEndsTheSession", testReleaseEndsTheSession},
		{"SessionEndSurvivesLoss", testSessionEndSurvivesLoss},
		{"AbandonedAdmissionsFreeSlots", testAbandonment},
		{"LateReturnerGoesToFront", testLateReturner},
		{"ReturnWithinWindow", testReturnWithinWindow},
		{"ReturnAfterWindowPassed", testReturnAfterWindow},
		{"ReturnHeldWhileClosed", testReturnHeldWhileClosed},
		{"ReturnersWithinTheRate", testReturnersWithinTheRate},
		{"GhostTakesNoLiveSlot", testGhostTakesNoLiveSlot},
		{"GhostRunsAcrossBlocks", testGhostRunsAcrossBlocks},
		{"IdledOutResumeWithinTheRate", testIdledOutResumeWithinTheRate},
		{"DrawClosesOnce", testDraw},
		{"DrawEmptyAfterAdmissionBegan", testDrawAfterAdmission},
		{"DrawSeedFirstWins", testDrawSeed},
		{"LaneCommitmentFirstWins", testCommitLanes},
		{"RandomDrawsEpochs", testRandomEpochs},
		{"HistoryOfAdmissionsAndDraws", testHistory},
		{"AuditTrailNumberedAndBounded", testAuditTrail},
		{"OverridesCompareAndSwap", testOverrides},
		{"InitNeverLowersCounters", testInitMax},
		{"WipedStoreReseeded", testWipe},
		{"OverridesReseeded", testOverridesReseeded},
		{"ForgottenPlacesFinished", testForgottenPlaces},
		{"SettlingRoomHoldsNewcomers", testSettling},
		{"BlankRoomTakesWholeSeed", testBlankTakesWholeSeed},
		{"SessionsAnnounced", testSessionsAnnounced},
		{"ReclaimTakesHeldSlots", testReclaimTakesHeldSlots},
		{"ReclaimAfterTheHold", testReclaimAfterTheHold},
		{"ReleaseGivesUpAHeldSlot", testReleaseGivesUpAHeldSlot},
		{"ReseedMarginJudgedByBeats", testReseedMarginJudgedByBeats},
		{"RaiseOnlySeedNeverCreates", testRaiseOnly},
		{"GhostsSkipped", testGhostsSkipped},
		{"GhostsAmongLive", testGhostsAmongLive},
		{"GhostRunLongerThanAStep", testGhostRunLongerThanAStep},
		{"YoungNeverSkipped", testYoungNeverSkipped},
		{"GapJudgesNobody", testGapJudgesNobody},
		{"WipedStoreJudgesNobody", testWipedStoreJudgesNobody},
		{"BeatIgnoresAdmitted", testBeatIgnoresAdmitted},
		{"SessionIdleOut", testSessionIdleOut},
		{"IdledOutSessionEndsWhenItWould", testIdledOutSessionEndsWhenItWould},
		{"SessionIdleOff", testSessionIdleOff},
		{"ConcurrentJoins", testConcurrentJoins},
		{"ConcurrentAdvance", testConcurrentAdvance},
		{"ConcurrentClaimsNeverExceedCap", testConcurrentClaims},
	}
	tests = append(tests, accountTests...)
	tests = append(tests, joinCheckTests...)
	tests = append(tests, leaveTests...)
	tests = append(tests, requeueTests...)
	tests = append(tests, codeTests...)
	tests = append(tests, supplyTests...)
	tests = append(tests, laneTests...)
	tests = append(tests, waitlistTests...)
	tests = append(tests, phaseQueueTests...)
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			tc.fn(t, h)
		})
	}
}

// t0 is an arbitrary whole second; the suite's clock starts there.
var t0 = time.Date(2026, 6, 1, 10, 0, 0, 0, time.UTC)

func at(sec float64) time.Time { return t0.Add(time.Duration(sec * float64(time.Second))) }

func limits() waitingroom.Limits {
	return waitingroom.Limits{
		Rate:      600, // ten a second
		Cap:       100,
		Session:   10 * time.Minute,
		Grace:     30 * time.Second,
		Retention: time.Hour,
		Open:      true,
		// Long enough for every late returner of the suite but those it
		// sends back after the window on purpose.
		ReturnWindow: 2 * time.Minute,
	}
}

func roomName(t *testing.T) string {
	var b [6]byte
	if _, err := rand.Read(b[:]); err != nil {
		t.Fatal(err)
	}
	return "t-" + hex.EncodeToString(b[:])
}

func visitor(i int) string { return fmt.Sprintf("v%06d", i) }

// joiners are visitors joined unweighed.
func joiners(visitors ...string) []waitingroom.Joiner {
	out := make([]waitingroom.Joiner, len(visitors))
	for i, v := range visitors {
		out[i].Visitor = v
	}
	return out
}

// fixture is one room in one store, initialised.
type fixture struct {
	t    *testing.T
	s    waitingroom.Store
	room string
	ctx  context.Context
	// ends are the ends of the sessions the fixture's joins and claims
	// opened, by visitor: a pass names its session by its end.
	ends map[string]time.Time
}

func newFixture(t *testing.T, h Harness) *fixture {
	t.Helper()
	f := &fixture{t: t, s: h.New(t), room: roomName(t), ctx: context.Background()}
	f.init(waitingroom.Recall{})
	return f
}

// pair returns two handles on the room's backend, as two gateway nodes
// hold: h.Pair's two clients of one server, or the fixture's store twice.
func (f *fixture) pair(h Harness) (waitingroom.Store, waitingroom.Store) {
	if h.Pair != nil {
		return h.Pair(f.t)
	}
	return f.s, f.s
}

// together makes n calls of fn at once, call i through a or b in turn, as
// clients of two nodes racing each other, and waits for them all.
func together(n int, a, b waitingroom.Store, fn func(i int, s waitingroom.Store)) {
	var wg sync.WaitGroup
	for i := range n {
		s := a
		if i%2 == 1 {
			s = b
		}
		wg.Go(func() { fn(i, s) })
	}
	wg.Wait()
}

// needsWipe skips a test of losing the store's data on a backend that
// cannot lose it.
func needsWipe(t *testing.T, h Harness) {
	if h.Wipe == nil {
		t.Skip("backend cannot lose its data")
	}
}

// lineOf makes a room of n visitors who joined at t0 while it was closed,
// with the suite's limits for the test to adjust.
func lineOf(t *testing.T, h Harness, n int) (*fixture, waitingroom.Limits) {
	t.Helper()
	f := newFixture(t, h)
	f.fill(n, t0)
	return f, limits()
}

// admittedLine is lineOf with slots for that many sessions, whose first
// places, as many, the controller's step at 1 s admitted.
func admittedLine(t *testing.T, h Harness, n, slots int) (*fixture, waitingroom.Limits) {
	t.Helper()
	f, lim := lineOf(t, h, n)
	lim.Cap = slots
	f.advance(at(1), lim)
	return f, lim
}

func (f *fixture) init(seed waitingroom.Recall) {
	f.t.Helper()
	if err := f.s.Init(f.ctx, f.room, seed); err != nil {
		f.t.Fatalf("Init: %v", err)
	}
}

func (f *fixture) join(v string, now time.Time, lim waitingroom.Limits) waitingroom.JoinResult {
	f.t.Helper()
	res, err := f.s.Join(f.ctx, f.room, v, now, lim)
	if err != nil {
		f.t.Fatalf("Join(%s): %v", v, err)
	}
	if res.Admitted {
		f.remember(v, res.Expires)
	}
	return res
}

// walkIn joins v, who must be let in on the spot: a room with a free slot
// and budget does not make its first visitors wait.
func (f *fixture) walkIn(v string, now time.Time, lim waitingroom.Limits) waitingroom.JoinResult {
	f.t.Helper()
	res := f.join(v, now, lim)
	if !res.Admitted {
		f.t.Fatalf("%s was not let in on the spot", v)
	}
	return res
}

func (f *fixture) claim(v string, place uint64, now time.Time, lim waitingroom.Limits) waitingroom.ClaimResult {
	f.t.Helper()
	res, err := f.s.Claim(f.ctx, f.room, v, place, now, lim)
	if err != nil {
		f.t.Fatalf("Claim(%s, %d): %v", v, place, err)
	}
	if res.Status == waitingroom.Claimed {
		f.remember(v, res.Expires)
	}
	return res
}

func (f *fixture) remember(v string, ends time.Time) {
	if f.ends == nil {
		f.ends = map[string]time.Time{}
	}
	f.ends[v] = ends
}

// expectClaim claims and fails the test unless the store answers want; what
// names the claim in the failure.
func (f *fixture) expectClaim(what, v string, place uint64, now time.Time, lim waitingroom.Limits, want waitingroom.ClaimStatus) {
	f.t.Helper()
	if c := f.claim(v, place, now, lim); c.Status != want {
		f.t.Fatalf("%s: %v, want %v", what, c.Status, want)
	}
}

func (f *fixture) advance(now time.Time, lim waitingroom.Limits) {
	f.t.Helper()
	if err := f.s.Advance(f.ctx, f.room, now, lim); err != nil {
		f.t.Fatalf("Advance: %v", err)
	}
}

// advanceEach steps the controller once a second, at every whole second
// from first to last.
func (f *fixture) advanceEach(first, last int, lim waitingroom.Limits) {
	f.t.Helper()
	for sec := first; sec <= last; sec++ {
		f.advance(at(float64(sec)), lim)
	}
}

func (f *fixture) snap(now time.Time) waitingroom.Snapshot {
	f.t.Helper()
	s, err := f.s.Snapshot(f.ctx, f.room, now, 0)
	if err != nil {
		f.t.Fatalf("Snapshot: %v", err)
	}
	return s
}

// fill joins n visitors while the room is closed, so none is admitted on the spot.
func (f *fixture) fill(n int, now time.Time) {
	f.t.Helper()
	closed := limits()
	closed.Open = false
	for i := range n {
		f.join(visitor(i), now, closed)
	}
}

func testUninitialised(t *testing.T, h Harness) {
	s := h.New(t)
	ctx := context.Background()
	room := roomName(t)
	if _, err := s.Join(ctx, room, "v", t0, limits()); !errors.Is(err, waitingroom.ErrNoRoom) {
		t.Errorf("Join on an unknown room: got %v, want ErrNoRoom", err)
	}
	if _, err := s.Snapshot(ctx, room, t0, 0); !errors.Is(err, waitingroom.ErrNoRoom) {
		t.Errorf("Snapshot of an unknown room: got %v, want ErrNoRoom", err)
	}
	if err := s.Advance(ctx, room, t0, limits()); !errors.Is(err, waitingroom.ErrNoRoom) {
		t.Errorf("Advance on an unknown room: got %v, want ErrNoRoom", err)
	}
	if _, err := s.Claim(ctx, room, "v", 0, t0, limits()); !errors.Is(err, waitingroom.ErrNoRoom) {
		t.Errorf("Claim on an unknown room: got %v, want ErrNoRoom", err)
	}
}

func testKeysInJoinOrder(t *testing.T, h Harness) {
	f := newFixture(t, h)
	closed := limits()
	closed.Open = false
	for i := range 20 {
		res := f.join(visitor(i), t0, closed)
		if res.Key != uint64(i) || res.Admitted {
			t.Fatalf("join %d: got key %d admitted %v, want key %d, not admitted", i, res.Key, res.Admitted, i)
		}
	}
	if s := f.snap(t0); s.Seq != 20 || s.Serving != 0 {
		t.Fatalf("after 20 joins: seq %d serving %d, want 20 and 0", s.Seq, s.Serving)
	}
}

func testFirstVisitorWalksIn(t *testing.T, h Harness) {
	f := newFixture(t, h)
	lim := limits()
	res := f.join("first", t0, lim)
	if !res.Admitted || res.Key != 0 {
		t.Fatalf("first visitor to an empty room: got %+v, want admitted with key 0", res)
	}
	if want := t0.Add(lim.Session); !res.Expires.Equal(want) {
		t.Errorf("session end %v, want %v", res.Expires, want)
	}
	s := f.snap(t0)
	if s.Active != 1 || s.Serving != 1 || s.Admitted != 1 || s.Claimed != 1 {
		t.Errorf("after a direct admission: %+v, want 1 active, serving 1, 1 admitted and claimed", s)
	}
	// The budget banked for a new room is one visitor: the next one waits for a step.
	if res := f.join("second", t0, lim); res.Admitted {
		t.Errorf("second visitor in the same instant was admitted on the spot; the rate budget is spent")
	}
	f.advance(at(1), lim)
	if s := f.snap(at(1)); s.Serving != 2 || s.Pending != 1 {
		t.Errorf("after one step: serving %d pending %d, want 2 and 1", s.Serving, s.Pending)
	}
}

func testJoinMany(t *testing.T, h Harness) {
	// Two rooms driven alike, one by single joins and one by batches, must
	// agree on every answer and on their state.
	one, many := newFixture(t, h), newFixture(t, h)
	lim := limits()
	lim.Cap = 6
	var want []waitingroom.JoinResult
	batches := [][]string{{"a"}, {"b", "c", "d"}, {"e", "f", "g", "h", "i", "j"}, {"k", "l"}}
	for sec, batch := range batches {
		now := at(float64(sec))
		one.advance(now, lim)
		many.advance(now, lim)
		for _, v := range batch {
			want = append(want, one.join(v, now, lim))
		}
		got, err := many.s.JoinMany(many.ctx, many.room, joiners(batch...), now, lim)
		if err != nil {
			t.Fatal(err)
		}
		if len(got) != len(batch) {
			t.Fatalf("JoinMany of %d answered %d results", len(batch), len(got))
		}
		for i, g := range got {
			w := want[len(want)-len(batch)+i]
			if g.Key != w.Key || g.Admitted != w.Admitted || !g.Expires.Equal(w.Expires) {
				t.Fatalf("batch %d, visitor %s: JoinMany %+v, Join %+v", sec, batch[i], g, w)
			}
		}
	}
	a, b := one.snap(at(4)), many.snap(at(4))
	a.Incarnation, b.Incarnation = "", ""
	if fmt.Sprint(a) != fmt.Sprint(b) {
		t.Fatalf("states differ:\n joins     %+v\n JoinMany  %+v", a, b)
	}
	admitted := 0
	for _, w := range want {
		if w.Admitted {
			admitted++
		}
	}
	if admitted < 2 || admitted == len(want) {
		t.Fatalf("%d of %d admitted on the spot: the case does not exercise a batch that is partly admitted", admitted, len(want))
	}
	if _, err := many.s.JoinMany(many.ctx, "t-no-such-room", joiners("x"), at(5), lim); !errors.Is(err, waitingroom.ErrNoRoom) {
		t.Fatalf("JoinMany on an unknown room: %v, want ErrNoRoom", err)
	}
}

func testClosedRoom(t *testing.T, h Harness) {
	f := newFixture(t, h)
	closed := limits()
	closed.Open = false
	if res := f.join("a", t0, closed); res.Admitted {
		t.Fatal("a closed room admitted a visitor on the spot")
	}
	for i := 1; i <= 5; i++ {
		f.advance(at(float64(i)), closed)
	}
	if s := f.snap(at(5)); s.Serving != 0 {
		t.Fatalf("a closed room advanced serving to %d", s.Serving)
	}
	// Budget does not pile up while closed: opening admits one second's worth.
	f.fill(50, at(5))
	f.advance(at(6), limits())
	if s := f.snap(at(6)); s.Serving != 10 {
		t.Fatalf("first step after opening: serving %d, want 10 (one second of 600/min)", s.Serving)
	}
}

func testRateBudget(t *testing.T, h Harness) {
	f, lim := lineOf(t, h, 100)
	lim.Rate = 300 // five a second
	for i := 1; i <= 4; i++ {
		f.advance(at(float64(i)), lim)
	}
	if s := f.snap(at(4)); s.Serving != 20 || s.Pending != 20 {
		t.Fatalf("after 4 steps at 300/min: serving %d pending %d, want 20 and 20", s.Serving, s.Pending)
	}
	// A stalled controller catches up on a few seconds only, never a burst.
	f.advance(at(60), lim)
	if s := f.snap(at(60)); s.Serving != 25 {
		t.Fatalf("after a 56 s stall: serving %d, want 25 (one second's budget banked at most)", s.Serving)
	}
}

func testSlowRate(t *testing.T, h Harness) {
	f, lim := lineOf(t, h, 10)
	lim.Rate = 6 // one every ten seconds
	for i := 1; i <= 30; i++ {
		f.advance(at(float64(i)), lim)
	}
	if s := f.snap(at(30)); s.Serving != 3 {
		t.Fatalf("30 s at 6/min: serving %d, want 3", s.Serving)
	}
}

func testOneStepPerSecond(t *testing.T, h Harness) {
	f, lim := lineOf(t, h, 100)
	f.advance(at(1), lim)
	f.advance(at(1.2), lim)
	f.advance(at(1.9), lim)
	if s := f.snap(at(1.9)); s.Serving != 10 {
		t.Fatalf("three calls within one second: serving %d, want 10 (one step)", s.Serving)
	}
	f.advance(at(1.5), lim) // a node whose clock lags must not step again
	f.advance(at(2), lim)
	if s := f.snap(at(2)); s.Serving != 20 {
		t.Fatalf("next second: serving %d, want 20", s.Serving)
	}
}

// testPace: each step that runs while the room admits and people wait adds to
// the pace record exactly as waitingroom.Pace.Step says; a closed room, or one
// nobody waits in, leaves it be.
func testPace(t *testing.T, h Harness) {
	f, lim := lineOf(t, h, 25)
	lim.Cap = 20
	var want waitingroom.Pace
	check := func(sec float64, what string) {
		t.Helper()
		if got := f.snap(at(sec)).Pace; got != want {
			t.Fatalf("%s: pace %+v, want %+v", what, got, want)
		}
	}
	check(0, "a new room")
	f.advance(at(1), lim)
	f.advance(at(2), lim)
	want = want.Step(1, 10).Step(1, 10)
	check(2, "two steps of ten")
	f.advance(at(3), lim)
	f.advance(at(5), lim) // two seconds in one step
	want = want.Step(1, 0).Step(2, 0)
	check(5, "a full room")
	closed := lim
	closed.Open = false
	f.advance(at(6), closed)
	check(6, "a closed room")
	for i := range 20 {
		f.claim(visitor(i), uint64(i), at(6), lim)
	}
	for i := range 20 {
		if err := f.s.Release(f.ctx, f.room, visitor(i), "", time.Time{}, at(6), lim); err != nil {
			t.Fatal(err)
		}
	}
	f.advance(at(7), lim)
	want = want.Step(1, 5)
	check(7, "the last five in")
	f.advance(at(8), lim)
	want.Still = 0
	check(8, "nobody waiting")
}

func testCap(t *testing.T, h Harness) {
	f, lim := lineOf(t, h, 50)
	lim.Cap = 3
	lim.Rate = 6000
	f.advance(at(1), lim)
	s := f.snap(at(1))
	if s.Serving != 3 || s.Pending != 3 {
		t.Fatalf("cap 3: serving %d pending %d, want 3 and 3", s.Serving, s.Pending)
	}
	for i := range 3 {
		if res := f.claim(visitor(i), uint64(i), at(1.5), lim); res.Status != waitingroom.Claimed {
			t.Fatalf("claim %d: %v", i, res.Status)
		}
	}
	f.advance(at(2), lim)
	if s := f.snap(at(2)); s.Serving != 3 || s.Active != 3 || s.Pending != 0 {
		t.Fatalf("cap full: serving %d active %d pending %d, want 3, 3, 0", s.Serving, s.Active, s.Pending)
	}
	if res := f.join("late", at(2), lim); res.Admitted {
		t.Fatal("a visitor was admitted on the spot into a full room")
	}
}

func testClaimLifecycle(t *testing.T, h Harness) {
	f, lim := lineOf(t, h, 20)
	if res := f.claim(visitor(0), 0, at(0.5), lim); res.Status != waitingroom.NotYet {
		t.Fatalf("claim before admission: %v, want not_yet", res.Status)
	}
	f.advance(at(1), lim)
	res := f.claim(visitor(3), 3, at(1.5), lim)
	if res.Status != waitingroom.Claimed || !res.Expires.Equal(at(1.5).Add(lim.Session)) {
		t.Fatalf("claim after admission: %+v", res)
	}
	again := f.claim(visitor(3), 3, at(2.5), lim)
	if again.Status != waitingroom.Claimed || !again.Expires.Equal(res.Expires) {
		t.Fatalf("second claim of a live session: %+v, want the same session %v", again, res.Expires)
	}
	if res := f.claim(visitor(15), 15, at(1.5), lim); res.Status != waitingroom.NotYet {
		t.Fatalf("claim of place 15 with serving 10: %v, want not_yet", res.Status)
	}
	s := f.snap(at(2.5))
	if s.Active != 1 || s.Pending != 9 || s.Claimed != 1 {
		t.Fatalf("after one claim: active %d pending %d claimed %d, want 1, 9, 1", s.Active, s.Pending, s.Claimed)
	}
}

func testSessionExpiry(t *testing.T, h Harness) {
	f, lim := admittedLine(t, h, 10, 1)
	f.claim(visitor(0), 0, at(1), lim)
	end := at(1).Add(lim.Session)
	f.advance(end.Add(-time.Second), lim)
	if s := f.snap(end.Add(-time.Second)); s.Active != 1 || s.Serving != 1 {
		t.Fatalf("before the session ends: active %d serving %d, want 1 and 1", s.Active, s.Serving)
	}
	f.advance(end, lim)
	if s := f.snap(end); s.Active != 0 || s.Serving != 2 {
		t.Fatalf("when the session ends: active %d serving %d, want 0 and 2", s.Active, s.Serving)
	}
	if res := f.claim(visitor(0), 0, end, lim); res.Status != waitingroom.Finished {
		t.Fatalf("claim after the session ended: %v, want finished", res.Status)
	}
}

func testRejoinWhileLive(t *testing.T, h Harness) {
	f := newFixture(t, h)
	lim := limits()
	first := f.join("fan", t0, lim)
	f.advance(at(1), lim) // banks budget; nobody waits
	again := f.join("fan", at(1.5), lim)
	if !first.Admitted || !again.Admitted {
		t.Fatalf("joins of an empty room: %+v then %+v, want both admitted", first, again)
	}
	// One visitor, one session, which runs to the later end.
	if s := f.snap(at(1.5)); s.Active != 1 {
		t.Fatalf("after the second admission: %d active, want 1", s.Active)
	}
	if s := f.snap(first.Expires); s.Active != 1 {
		t.Fatalf("when the first session would have ended: %d active, want 1 (the session runs to %v)", s.Active, again.Expires)
	}
	if res := f.claim("fan", again.Key, first.Expires.Add(time.Second), lim); res.Status != waitingroom.Claimed || !res.Expires.Equal(again.Expires) {
		t.Fatalf("claim after the first end: %+v, want the live session until %v", res, again.Expires)
	}
	if s := f.snap(again.Expires); s.Active != 0 {
		t.Fatalf("at the session end: %d active, want 0", s.Active)
	}
}

func testClaimAfterForgotten(t *testing.T, h Harness) {
	f, lim := lineOf(t, h, 5)
	lim.Cap = 1
	lim.Session = 5 * time.Second
	lim.Retention = time.Second
	f.advance(at(1), lim)              // admits place 0; its grace runs to 31
	f.claim(visitor(0), 0, at(2), lim) // session until 7, remembered until 8
	// The visitor comes back after the store forgot them, while the batch that
	// admitted them is still within its grace window. Their place was claimed
	// once already: it must not take a second slot of that batch, or pending
	// goes below zero and the controller hands out a slot that is not free.
	f.claim(visitor(0), 0, at(10), lim)
	f.advance(at(11), lim)
	f.claim(visitor(1), 1, at(12), lim)
	if s := f.snap(at(12)); s.Pending < 0 || s.Active+s.Pending > lim.Cap {
		t.Fatalf("active %d pending %d with a cap of %d", s.Active, s.Pending, lim.Cap)
	}
	f.advance(at(31), lim) // the batch leaves the grace window
	if s := f.snap(at(31)); s.Pending < 0 || s.Abandoned > s.Admitted {
		t.Fatalf("after the batch lapsed: pending %d, abandoned %d of %d admitted", s.Pending, s.Abandoned, s.Admitted)
	}
}

func testRelease(t *testing.T, h Harness) {
	f, lim := admittedLine(t, h, 10, 1)
	res := f.claim(visitor(0), 0, at(1), lim)
	if err := f.s.Release(f.ctx, f.room, visitor(0), "pass-0", res.Expires, at(2), lim); err != nil {
		t.Fatal(err)
	}
	s := f.snap(at(2))
	if s.Active != 0 {
		t.Fatalf("after release: %d active, want 0", s.Active)
	}
	if len(s.Revocations) != 1 || s.Revocations[0].PassID != "pass-0" || !s.Revocations[0].ExpiresAt.Equal(res.Expires) {
		t.Fatalf("revocations %+v, want pass-0 until %v", s.Revocations, res.Expires)
	}
	cursor := s.Revocations[0].Cursor
	if later, _ := f.s.Snapshot(f.ctx, f.room, at(2), cursor); len(later.Revocations) != 0 {
		t.Fatalf("revocations after the cursor: %+v, want none", later.Revocations)
	}
	f.advance(at(3), lim)
	if s := f.snap(at(3)); s.Serving != 2 {
		t.Fatalf("the released slot went to the next visitor: serving %d, want 2", s.Serving)
	}
	if res := f.claim(visitor(0), 0, at(3), lim); res.Status != waitingroom.Finished {
		t.Fatalf("a released visitor claimed again: %v, want finished", res.Status)
	}
	// Revocations are forgotten once the pass would have expired anyway.
	if s := f.snap(res.Expires.Add(time.Second)); len(s.Revocations) != 0 {
		t.Fatalf("revocations after the pass expired: %+v", s.Revocations)
	}
	// Releasing a visitor without a session is harmless.
	if err := f.s.Release(f.ctx, f.room, "nobody", "", time.Time{}, at(3), lim); err != nil {
		t.Fatal(err)
	}
}

func testAbandonment(t *testing.T, h Harness) {
	f, lim := admittedLine(t, h, 10, 2)
	f.claim(visitor(0), 0, at(2), lim)
	f.advance(at(30), lim)
	if s := f.snap(at(30)); s.Serving != 2 || s.Pending != 1 {
		t.Fatalf("within grace: serving %d pending %d, want 2 and 1", s.Serving, s.Pending)
	}
	f.advance(at(31), lim) // grace of place 1 ends at 31
	s := f.snap(at(31))
	if s.Abandoned != 1 || s.Pending != 1 || s.Serving != 3 {
		t.Fatalf("after grace: abandoned %d pending %d serving %d, want 1, 1, 3", s.Abandoned, s.Pending, s.Serving)
	}
}

func testLateReturner(t *testing.T, h Harness) {
	f, lim := admittedLine(t, h, 10, 1)
	f.advance(at(31), lim) // place 0 lapses; place 1 is admitted
	f.claim(visitor(1), 1, at(32), lim)
	// Visitor 0 comes back while the only slot is taken.
	if res := f.claim(visitor(0), 0, at(40), lim); res.Status != waitingroom.Full {
		t.Fatalf("late returner into a full room: %v, want full", res.Status)
	}
	if s := f.snap(at(40)); s.Returning != 1 {
		t.Fatalf("returning %d, want 1", s.Returning)
	}
	// The slot frees; the controller holds it back for the returner instead of
	// admitting place 2.
	if err := f.s.Release(f.ctx, f.room, visitor(1), "", time.Time{}, at(41), lim); err != nil {
		t.Fatal(err)
	}
	f.advance(at(42), lim)
	if s := f.snap(at(42)); s.Serving != 2 {
		t.Fatalf("with a returner waiting: serving %d, want 2 (slot held back)", s.Serving)
	}
	if res := f.claim(visitor(0), 0, at(43), lim); res.Status != waitingroom.Claimed {
		t.Fatalf("late returner with a slot held: %v, want claimed", res.Status)
	}
	s := f.snap(at(43))
	if s.Active != 1 || s.Returning != 0 {
		t.Fatalf("after the returner got in: active %d returning %d, want 1 and 0", s.Active, s.Returning)
	}
	// A returner who stops asking gives the slot back after the window.
	g := newFixture(t, h)
	g.fill(10, t0)
	g.advance(at(1), lim)
	g.advance(at(31), lim)
	g.claim(visitor(1), 1, at(32), lim)
	g.claim(visitor(0), 0, at(40), lim)
	if err := g.s.Release(g.ctx, g.room, visitor(1), "", time.Time{}, at(41), lim); err != nil {
		t.Fatal(err)
	}
	late := at(40).Add(waitingroom.ReturnerWindow)
	g.advance(late, lim)
	if s := g.snap(late); s.Returning != 0 || s.Serving != 3 {
		t.Fatalf("after the returner window: returning %d serving %d, want 0 and 3", s.Returning, s.Serving)
	}
}

func testDraw(t *testing.T, h Harness) {
	f := newFixture(t, h)
	f.fill(25, t0)
	closed := limits()
	closed.Open = false
	f.advance(at(1), closed)
	if s := f.snap(at(1)); s.DrawClosed {
		t.Fatal("draw closed before it was asked to")
	}
	f.closeDraw(at(2), 25, "draw")
	f.fill(5, at(2))
	f.advance(at(3), drawLimits())
	if s := f.snap(at(3)); s.DrawSize != 25 {
		t.Fatalf("draw size changed to %d after it closed", s.DrawSize)
	}
}

func testDrawAfterAdmission(t *testing.T, h Harness) {
	f := newFixture(t, h)
	f.fill(25, t0)
	f.advance(at(1), limits())
	f.closeDraw(at(2), 0, "draw after admission began")
}

// drawLimits are limits whose controller's step closes the pre-queue's draw.
func drawLimits() waitingroom.Limits {
	lim := limits()
	lim.CloseDraw = true
	return lim
}

// closeDraw runs the controller's step that closes the pre-queue's draw at
// now, and checks that the draw is closed with size places.
func (f *fixture) closeDraw(now time.Time, size uint64, what string) waitingroom.Snapshot {
	f.t.Helper()
	f.advance(now, drawLimits())
	s := f.snap(now)
	if !s.DrawClosed || s.DrawSize != size {
		f.t.Fatalf("%s: closed %v size %d, want true and %d", what, s.DrawClosed, s.DrawSize, size)
	}
	return s
}

func testRandomEpochs(t *testing.T, h Harness) {
	f, lim := lineOf(t, h, 10)
	lim.Reshuffle = true
	lim.Rate = 240 // four a second
	f.advance(at(1), lim)
	s := f.snap(at(1))
	if len(s.Epochs) != 1 || s.Epochs[0] != (waitingroom.Epoch{Start: 0, Size: 10, Number: 1}) {
		t.Fatalf("first step of a random room: epochs %+v, want one of keys 0-9, number 1", s.Epochs)
	}
	if s.Serving != 4 {
		t.Fatalf("serving %d, want 4", s.Serving)
	}
	// Newcomers wait for the next draw: they are not in this one.
	f.fill(5, at(1))
	f.advance(at(2), lim)
	f.advance(at(3), lim)
	if s := f.snap(at(3)); s.Serving != 10 || len(s.Epochs) != 1 {
		t.Fatalf("after the first draw's places: serving %d, epochs %+v; want 10 and no second draw while places of the first remained", s.Serving, s.Epochs)
	}
	f.advance(at(4), lim)
	s = f.snap(at(4))
	if len(s.Epochs) != 2 || s.Epochs[1] != (waitingroom.Epoch{Start: 10, Size: 5, Number: 2}) || s.Serving != 14 {
		t.Fatalf("once the first draw is in: epochs %+v serving %d, want a second of keys 10-14 and serving 14", s.Epochs, s.Serving)
	}
	// With nobody waiting no draw is made, and a newcomer walks straight in.
	f.advance(at(5), lim)
	f.advance(at(6), lim)
	if s := f.snap(at(6)); len(s.Epochs) != 2 || s.Serving != 15 {
		t.Fatalf("with nobody waiting: epochs %+v serving %d, want still two and 15", s.Epochs, s.Serving)
	}
	if res := f.join("walk-in", at(6), lim); !res.Admitted {
		t.Fatal("a newcomer to a random room with nobody waiting was not let in")
	}
	// The store remembers the latest MaxEpochs draws only.
	g := newFixture(t, h)
	lim.Cap = 1000
	for i := range waitingroom.MaxEpochs + 6 {
		g.fill(1, at(float64(i)))
		g.advance(at(float64(i)+0.5), lim)
	}
	es := g.snap(at(100)).Epochs
	if len(es) != waitingroom.MaxEpochs || es[0].Number != 7 || es[len(es)-1].Number != waitingroom.MaxEpochs+6 {
		t.Fatalf("after %d draws: %d kept, numbers %d..%d; want the last %d", waitingroom.MaxEpochs+6, len(es), es[0].Number, es[len(es)-1].Number, waitingroom.MaxEpochs)
	}
}

func testDrawSeed(t *testing.T, h Harness) {
	f := newFixture(t, h)
	a := []byte("seed-a-0123456789abcdef0123456789")
	b := []byte("seed-b-0123456789abcdef0123456789")
	got, when, err := f.s.DrawSeed(f.ctx, f.room, a, at(1))
	if err != nil || string(got) != string(a) || !when.Equal(at(1)) {
		t.Fatalf("first DrawSeed: %q %v %v", got, when, err)
	}
	got, when, err = f.s.DrawSeed(f.ctx, f.room, b, at(2))
	if err != nil || string(got) != string(a) || !when.Equal(at(1)) {
		t.Fatalf("second DrawSeed: %q %v %v, want the first seed kept", got, when, err)
	}
}

func testCommitLanes(t *testing.T, h Harness) {
	f := newFixture(t, h)
	for _, tc := range []struct {
		phase, commitment string
		now, want         time.Time
	}{
		{"presale", "aaa", at(1), at(1)},
		{"presale", "aaa", at(5), at(1)}, // the first time stands
		{"presale", "bbb", at(6), at(6)}, // other weights: a commitment of their own
		{"public", "aaa", at(7), at(7)},  // each phase its own
		{"presale", "bbb", at(9), at(6)},
	} {
		got, err := f.s.CommitLanes(f.ctx, f.room, tc.phase, tc.commitment, tc.now)
		if err != nil || !got.Equal(tc.want) {
			t.Errorf("CommitLanes(%s, %s) at %v: %v %v, want %v", tc.phase, tc.commitment, tc.now, got, err, tc.want)
		}
	}
}

func testOverrides(t *testing.T, h Harness) {
	f := newFixture(t, h)
	data, v, err := f.s.Overrides(f.ctx, f.room)
	if err != nil || len(data) != 0 || v != 0 {
		t.Fatalf("fresh room overrides: %q v%d %v", data, v, err)
	}
	v1, err := f.s.SaveOverrides(f.ctx, f.room, []byte(`{"paused":true}`), 0)
	if err != nil || v1 != 1 {
		t.Fatalf("first save: v%d %v", v1, err)
	}
	if _, err := f.s.SaveOverrides(f.ctx, f.room, []byte(`{"paused":false}`), 0); !errors.Is(err, waitingroom.ErrVersionConflict) {
		t.Fatalf("save on a stale version: %v, want ErrVersionConflict", err)
	}
	data, v, _ = f.s.Overrides(f.ctx, f.room)
	if string(data) != `{"paused":true}` || v != 1 {
		t.Fatalf("overrides after a refused save: %q v%d", data, v)
	}
	if s := f.snap(t0); s.Version != 1 {
		t.Fatalf("snapshot version %d, want 1", s.Version)
	}
}

func testInitMax(t *testing.T, h Harness) {
	f := newFixture(t, h)
	f.fill(10, t0)
	f.init(waitingroom.Recall{Counters: waitingroom.Counters{Seq: 5, Serving: 3}})
	if s := f.snap(t0); s.Seq != 10 || s.Serving != 3 {
		t.Fatalf("Init with a partly lower floor: seq %d serving %d, want 10 and 3", s.Seq, s.Serving)
	}
	inc := f.snap(t0).Incarnation
	f.init(waitingroom.Recall{Counters: waitingroom.Counters{Seq: 2}, Held: 50, HeldUntil: at(100), Incarnation: "other"})
	if s := f.snap(t0); s.Incarnation != inc || inc == "" {
		t.Fatalf("Init of an existing room changed its incarnation from %q to %q", inc, s.Incarnation)
	}
	if s := f.snap(t0); s.Seq != 10 || s.Serving != 3 {
		t.Fatalf("Init with a lower floor lowered counters: seq %d serving %d", s.Seq, s.Serving)
	} else if s.Active != 0 {
		t.Fatalf("Init of an existing room added %d held sessions; it must not", s.Active)
	}
}

func testWipe(t *testing.T, h Harness) {
	needsWipe(t, h)
	f := newFixture(t, h)
	f.fill(30, t0)
	before := f.closeDraw(at(1), 30, "draw before the loss")
	h.Wipe(t, f.s, f.room)
	if _, err := f.s.Join(f.ctx, f.room, "after", at(2), limits()); !errors.Is(err, waitingroom.ErrNoRoom) {
		t.Fatalf("Join after the store lost the room: %v, want ErrNoRoom (never a key from 0 again)", err)
	}
	lim := limits()
	lim.Cap = 15
	epochs := []waitingroom.Epoch{{Start: 30, Size: 7, Number: 3}}
	f.init(waitingroom.Recall{
		Counters:   before.Counters,
		Held:       before.Active + before.Pending,
		HeldUntil:  at(2).Add(lim.Session),
		DrawClosed: before.DrawClosed,
		DrawSize:   before.DrawSize,
		Batches:    before.Batches,
		Epochs:     epochs,
	})
	if s := f.snap(at(2)); len(s.Epochs) != 1 || s.Epochs[0] != epochs[0] {
		t.Fatalf("epochs after re-seeding: %+v, want %+v", s.Epochs, epochs)
	}
	res := f.join("after", at(2), lim)
	if res.Key < before.Seq {
		t.Fatalf("key %d after re-seeding, want at least %d", res.Key, before.Seq)
	}
	if s := f.snap(at(2)); s.Incarnation == before.Incarnation || s.Incarnation == "" {
		t.Fatalf("incarnation %q after re-creation, was %q: it must change", s.Incarnation, before.Incarnation)
	}
	if s := f.snap(at(2)); s.Serving != before.Serving || !s.DrawClosed || s.DrawSize != 30 {
		t.Fatalf("after re-seeding: serving %d draw %v/%d, want %d and the draw of 30 kept", s.Serving, s.DrawClosed, s.DrawSize, before.Serving)
	}
	if s := f.snap(at(2)); len(s.Batches) != 1 || s.Batches[0].Start != 0 || s.Batches[0].Count != 10 ||
		!s.Batches[0].At.Equal(at(1)) || !s.Batches[0].Restored || s.Pending != 0 || s.Active != 10 {
		t.Fatalf("admissions after re-seeding: %+v, %d pending, %d active; want the batch of places 0-9 admitted at 1s, restored, its places held", s.Batches, s.Pending, s.Active)
	}
	// A fan admitted before the loss still claims within their grace, into
	// one of the held slots: no eleventh slot is taken.
	if res := f.claim("place-3", 3, at(2.5), lim); res.Status != waitingroom.Claimed {
		t.Fatalf("claim of an admission made before the loss: %v, want claimed", res.Status)
	}
	if s := f.snap(at(2.5)); s.Active != 10 || s.Pending != 0 {
		t.Fatalf("after the claim: %d active, %d pending; want 10 and 0", s.Active, s.Pending)
	}
	// The ten admitted before the loss still hold their slots: with a cap of 15,
	// five more may come in, not fifteen.
	f.advance(at(3), lim)
	if s := f.snap(at(3)); s.Serving != before.Serving+5 || s.Active != 10 || s.Pending != 5 {
		t.Fatalf("after re-seeding with 10 admitted: serving %d active %d pending %d, want %d, 10 and 5", s.Serving, s.Active, s.Pending, before.Serving+5)
	}
	// When the restored batch's grace runs out, its unclaimed places count as
	// abandoned, but their slots stay held: the node that re-seeded may not
	// have seen their claims, and those sessions would still be live.
	f.advance(at(31), lim)
	if s := f.snap(at(31)); s.Abandoned != before.Abandoned+9 || s.Active != 10 {
		t.Fatalf("after the restored batch's grace: abandoned %d active %d, want %d and the 10 slots still held", s.Abandoned, s.Active, before.Abandoned+9)
	}
	f.advance(at(3).Add(lim.Session), lim)
	if s := f.snap(at(3).Add(lim.Session)); s.Active != 0 {
		t.Fatalf("held slots outlived the session: %d active", s.Active)
	}
}

func testConcurrentJoins(t *testing.T, h Harness) {
	f := newFixture(t, h)
	const workers, each = 16, 25
	closed := limits()
	closed.Open = false
	keys := make(chan uint64, workers*each)
	var wg sync.WaitGroup
	for w := range workers {
		s := f.s
		if w%2 == 1 && h.Pair != nil {
			_, s = h.Pair(t)
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range each {
				res, err := s.Join(f.ctx, f.room, visitor(w*each+i), t0, closed)
				if err != nil {
					t.Error(err)
					return
				}
				keys <- res.Key
			}
		}()
	}
	wg.Wait()
	close(keys)
	seen := make(map[uint64]bool)
	for k := range keys {
		if seen[k] {
			t.Fatalf("key %d handed out twice", k)
		}
		seen[k] = true
	}
	for k := range uint64(workers * each) {
		if !seen[k] {
			t.Fatalf("key %d never handed out: keys must be dense", k)
		}
	}
}

func testConcurrentAdvance(t *testing.T, h Harness) {
	f := newFixture(t, h)
	f.fill(500, t0)
	a, b := f.pair(h)
	lim := limits()
	for sec := 1; sec <= 5; sec++ {
		together(20, a, b, func(i int, s waitingroom.Store) {
			if err := s.Advance(f.ctx, f.room, at(float64(sec)+float64(i)/100), lim); err != nil {
				t.Error(err)
			}
		})
	}
	if s := f.snap(at(6)); s.Serving != 50 {
		t.Fatalf("20 nodes stepping for 5 s at 600/min: serving %d, want 50", s.Serving)
	}
}

func testConcurrentClaims(t *testing.T, h Harness) {
	f := newFixture(t, h)
	lim := limits()
	lim.Cap = 7
	lim.Rate = 60000
	a, b := f.pair(h)
	// Visitors join while the room is open and keep claiming while the
	// controller steps; sessions end and lapse along the way.
	var wg sync.WaitGroup
	const fans = 120
	for i := range fans {
		s := a
		if i%2 == 1 {
			s = b
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			now := at(float64(i % 5))
			res, err := s.Join(f.ctx, f.room, visitor(i), now, lim)
			if err != nil {
				t.Error(err)
				return
			}
			for sec := 0; sec < 40 && !res.Admitted; sec++ {
				now := at(float64(sec))
				if err := s.Advance(f.ctx, f.room, now, lim); err != nil {
					t.Error(err)
					return
				}
				c, err := s.Claim(f.ctx, f.room, visitor(i), res.Key, now, lim)
				if err != nil {
					t.Error(err)
					return
				}
				if c.Status == waitingroom.Claimed {
					return
				}
			}
		}()
	}
	done := make(chan struct{})
	var over error
	go func() {
		defer close(done)
		for sec := 0; sec < 40; sec++ {
			s, err := a.Snapshot(f.ctx, f.room, at(float64(sec)), 0)
			if err != nil {
				over = err
				return
			}
			if s.Active+s.Pending > lim.Cap {
				over = fmt.Errorf("at %ds: %d active + %d pending over the cap of %d", sec, s.Active, s.Pending, lim.Cap)
				return
			}
		}
	}()
	wg.Wait()
	<-done
	if over != nil {
		t.Fatal(over)
	}
	if s := f.snap(at(40)); s.Active > lim.Cap || s.Claimed > uint64(lim.Cap) {
		t.Fatalf("sessions opened %d, active %d: more than the cap of %d while none ended", s.Claimed, s.Active, lim.Cap)
	}
}
