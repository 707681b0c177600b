package storetest

import (
	"testing"
	"time"

	"github.com/foyer-dev/foyer/waitingroom"
)

// phaseQueueTests are the phase pre-queues' (waitingroom/phasequeue.go).
var phaseQueueTests = []suiteTest{
	{"PhasePrequeueHoldsItsFansOnly", testPhasePrequeueHolds},
	{"PhasePrequeueNoneOnTheSpot", testPhasePrequeueNoneOnTheSpot},
	{"PhasePrequeueClosesAtItsStart", testPhasePrequeueClosesAtStart},
	{"PhasePrequeueClosedByAJoin", testPhasePrequeueClosedByJoin},
	{"PhasePrequeueReseeded", testPhasePrequeueReseeded},
	{"PhaseSeedFirstWins", testPhaseSeed},
}

// phaseLimits are the suite's limits while phase "second"'s pre-queue,
// open from at(10) to its start at(20), is open at now (else none).
func phaseLimits(now time.Time) waitingroom.Limits {
	lim := limits()
	if !now.Before(at(10)) && now.Before(at(20)) {
		lim.PhaseQueue = waitingroom.PhaseQueue{Phase: "second", Opens: at(10), Starts: at(20), Draw: true}
	}
	return lim
}

// prequeueOfTwo is a room of n fans who joined closed at t0, then two in
// phase "second"'s pre-queue, at its opening and at second.
func prequeueOfTwo(t *testing.T, h Harness, n int, second time.Time) *fixture {
	f := newFixture(t, h)
	f.fill(n, t0)
	closed := phaseLimits(at(10))
	closed.Open = false
	f.join(visitor(10), at(10), closed)
	f.join(visitor(11), second, closed)
	return f
}

// testPhasePrequeueHolds: fans who joined before the pre-queue opened keep
// being admitted, in order, while it is open; nobody who joined in it is
// let in before its start, however free the room is.
func testPhasePrequeueHolds(t *testing.T, h Harness) {
	f := newFixture(t, h)
	f.fill(30, t0)
	lim := phaseLimits(at(10))
	lim.Rate = 600 // ten a second
	f.join(visitor(100), at(10), lim)
	for i := 101; i < 110; i++ {
		f.join(visitor(i), at(11), lim)
	}
	s := f.snap(at(11))
	if len(s.PhaseRanges) != 1 || s.PhaseRanges[0].Phase != "second" || s.PhaseRanges[0].Start != 30 || s.PhaseRanges[0].Closed ||
		!s.PhaseRanges[0].Draw || !s.PhaseRanges[0].Starts.Equal(at(20)) {
		t.Fatalf("phase pre-queue after its first joins: %+v, want one open from key 30", s.PhaseRanges)
	}
	for sec := 11; sec < 20; sec++ {
		f.advance(at(float64(sec)), phaseLimits(at(float64(sec))))
	}
	if s := f.snap(at(19)); s.Serving != 30 {
		t.Fatalf("serving %d before the phase's start, want 30: the earlier fans all in, the pre-queue's none", s.Serving)
	}
	if c := f.claim(visitor(100), 30, at(19), phaseLimits(at(19))); c.Status != waitingroom.NotYet {
		t.Fatalf("a pre-queue fan's claim before the start: %v, want not yet", c.Status)
	}
	f.advance(at(20), phaseLimits(at(20)))
	s = f.snap(at(20))
	if len(s.PhaseRanges) != 1 || !s.PhaseRanges[0].Closed || s.PhaseRanges[0].Count != 10 {
		t.Fatalf("phase pre-queue at its start: %+v, want closed with 10 keys", s.PhaseRanges)
	}
	if s.Serving != 40 {
		t.Fatalf("serving %d after the start, want 40: the drawn places go in", s.Serving)
	}
}

// testPhasePrequeueNoneOnTheSpot: in an empty room, a fan who joins in a
// phase pre-queue waits; once it is drawn, newcomers go in as usual.
func testPhasePrequeueNoneOnTheSpot(t *testing.T, h Harness) {
	f := newFixture(t, h)
	if res := f.join(visitor(0), at(10), phaseLimits(at(10))); res.Admitted {
		t.Fatal("a fan of an open phase pre-queue was admitted on the spot")
	}
	place := f.account("acc", newVisitor(), nil, at(11), phaseLimits(at(11)))
	if place.Admitted || place.Key != 1 {
		t.Fatalf("an account joining the pre-queue: %+v, want key 1, waiting", place)
	}
	f.advance(at(20), phaseLimits(at(20)))
	f.advance(at(21), phaseLimits(at(21)))
	if res := f.join(visitor(1), at(22), phaseLimits(at(22))); !res.Admitted || res.Key != 2 {
		t.Fatalf("a newcomer after the draw in an empty room: %+v, want key 2 let in", res)
	}
}

// testPhasePrequeueClosesAtStart: the range closes at the first call at or
// after the start it recorded, even one whose limits name no pre-queue
// (the phase was removed, or the node's clock is late), and never holds
// the line again; a later phase's pre-queue opens one of its own.
func testPhasePrequeueClosesAtStart(t *testing.T, h Harness) {
	f := prequeueOfTwo(t, h, 5, at(12))
	f.advance(at(25), limits()) // no pre-queue named
	s := f.snap(at(25))
	if len(s.PhaseRanges) != 1 || !s.PhaseRanges[0].Closed || s.PhaseRanges[0].Start != 5 || s.PhaseRanges[0].Count != 2 {
		t.Fatalf("after the start: %+v, want keys 5-6 drawn", s.PhaseRanges)
	}
	if s.Serving != 7 {
		t.Fatalf("serving %d, want 7: nothing holds the line once the range is drawn", s.Serving)
	}
	later := limits()
	later.PhaseQueue = waitingroom.PhaseQueue{Phase: "third", Opens: at(30), Starts: at(40)}
	f.join(visitor(12), at(31), later)
	f.advance(at(32), later)
	s = f.snap(at(32))
	if len(s.PhaseRanges) != 2 || s.PhaseRanges[1].Phase != "third" || s.PhaseRanges[1].Start != 7 || s.PhaseRanges[1].Closed || s.PhaseRanges[1].Draw {
		t.Fatalf("a later phase's pre-queue: %+v, want a second range from key 7", s.PhaseRanges)
	}
	if s.Serving != 7 {
		t.Fatalf("serving %d in the later pre-queue, want 7", s.Serving)
	}
}

// testPhasePrequeueClosedByAJoin: a join at or after the start closes the
// range before it takes its key, so that key queues behind the drawn ones.
func testPhasePrequeueClosedByJoin(t *testing.T, h Harness) {
	f := prequeueOfTwo(t, h, 3, at(19.5))
	res := f.join(visitor(12), at(20), phaseLimits(at(20)))
	s := f.snap(at(20))
	if res.Key != 5 || len(s.PhaseRanges) != 1 || !s.PhaseRanges[0].Closed || s.PhaseRanges[0].Count != 2 {
		t.Fatalf("join at the start: key %d, ranges %+v; want key 5 after a range of keys 3-4", res.Key, s.PhaseRanges)
	}
}

// testPhasePrequeueReseeded: a store that lost the room gets its phase
// pre-queues back from a node's seed, open or drawn, so places stay.
func testPhasePrequeueReseeded(t *testing.T, h Harness) {
	needsWipe(t, h)
	f := newFixture(t, h)
	f.fill(4, t0)
	closed := phaseLimits(at(10))
	closed.Open = false
	f.join(visitor(10), at(10), closed)
	before := f.snap(at(11))
	h.Wipe(t, f.s, f.room)
	f.init(waitingroom.Recall{Counters: before.Counters, Whole: true, PhaseRanges: before.PhaseRanges})
	s := f.snap(at(12))
	if len(s.PhaseRanges) != 1 || s.PhaseRanges[0] != before.PhaseRanges[0] {
		t.Fatalf("after re-seeding: %+v, want %+v", s.PhaseRanges, before.PhaseRanges)
	}
	f.advance(at(12), phaseLimits(at(12)))
	if s := f.snap(at(12)); s.Serving > 4 {
		t.Fatalf("serving %d after re-seeding, want at most 4: the pre-queue still holds", s.Serving)
	}
}

// testPhaseSeed: each phase's seed is the first stored for it.
func testPhaseSeed(t *testing.T, h Harness) {
	f := newFixture(t, h)
	a := []byte("seed-a-0123456789abcdef0123456789")
	b := []byte("seed-b-0123456789abcdef0123456789")
	for _, tc := range []struct {
		phase     string
		candidate []byte
		now       time.Time
		want      []byte
		wantAt    time.Time
	}{
		{"second", a, at(1), a, at(1)},
		{"second", b, at(2), a, at(1)}, // the first stands
		{"third", b, at(3), b, at(3)},  // each phase its own
	} {
		got, when, err := f.s.PhaseSeed(f.ctx, f.room, tc.phase, tc.candidate, tc.now)
		if err != nil || string(got) != string(tc.want) || !when.Equal(tc.wantAt) {
			t.Errorf("PhaseSeed(%s) at %v: %q %v %v, want %q at %v", tc.phase, tc.now, got, when, err, tc.want, tc.wantAt)
		}
	}
	if got, _, _ := f.s.DrawSeed(f.ctx, f.room, b, at(4)); string(got) != string(b) {
		t.Errorf("the room's own seed after the phases': %q, want its own", got)
	}
}
