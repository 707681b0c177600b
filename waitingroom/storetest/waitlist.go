package storetest

import (
	"testing"
	"time"

	"github.com/foyer-dev/foyer/waitingroom"
)

var waitlistTests = []suiteTest{
	{"WaitlistLetsInWhatCameBack", testWaitlistLetsInWhatCameBack},
	{"WaitlistEachUnitReachesOneFan", testWaitlistEachUnitOneFan},
	{"WaitlistUnitsAFanAndTheCap", testWaitlistUnitsAndCap},
	{"WaitlistLeftoverReachesAFan", testWaitlistLeftover},
	{"WaitlistEnds", testWaitlistEnds},
	{"WaitlistEndSurvivesLoss", testWaitlistEndSurvivesLoss},
	{"WaitlistOwedSurvivesLoss", testWaitlistOwedSurvivesLoss},
}

// waitlisting are the limits of a sold-out room with the waitlist on.
func waitlisting(units int) waitingroom.Limits {
	lim := limits()
	lim.Open, lim.Waitlist, lim.WaitlistUnits = false, true, units
	return lim
}

func (f *fixture) advanceOn(s waitingroom.Store, now time.Time, lim waitingroom.Limits) {
	f.t.Helper()
	if err := s.Advance(f.ctx, f.room, now, lim); err != nil {
		f.t.Fatalf("Advance: %v", err)
	}
}

// waitlistSteps are the history's waitlist steps, checked as the fairness
// report checks them: in order of places, each starting where the last
// ended, never owing more units than the supply it went by.
func (f *fixture) waitlistSteps() []waitingroom.HistoryEntry {
	f.t.Helper()
	var out []waitingroom.HistoryEntry
	for _, e := range f.history(0, 1000) {
		if e.Kind != waitingroom.HistoryWaitlist {
			continue
		}
		if e.Waitlist == nil || e.Waitlist.Owed > e.Waitlist.Supply || e.Waitlist.Fans > e.Count {
			f.t.Fatalf("waitlist step %+v %+v: owes more than the supply", e, e.Waitlist)
		}
		if k := len(out); k > 0 && out[k-1].Start+out[k-1].Count > e.Start {
			f.t.Fatalf("waitlist steps out of order: %+v then %+v", out[k-1], e)
		}
		out = append(out, e)
	}
	return out
}

// testWaitlistLetsInWhatCameBack: sold out, nobody goes in; k units back let
// k fans in, from the front, once; a fall (a hold) pays what they were let in
// for, so a later return reaches the next fan; units let in for and never
// paid free again when the session could have ended.
func testWaitlistLetsInWhatCameBack(t *testing.T, h Harness) {
	f := newFixture(t, h)
	f.fill(10, at(0))
	lim := waitlisting(1)
	f.supply(0, 1)
	for sec := 2.0; sec <= 5; sec++ {
		f.advance(at(sec), lim)
	}
	s := f.snap(at(5))
	if s.Serving != 0 || !s.Waitlist.On() || s.Waitlist.From != 0 || !s.Waitlist.Since.Equal(at(2)) {
		t.Fatalf("sold out, nothing back: serving %d, waitlist %+v", s.Serving, s.Waitlist)
	}
	f.supply(3, 6) // three refunds
	f.advance(at(7), lim)
	f.advance(at(8), lim)
	s = f.snap(at(8))
	if s.Serving != 3 || s.Waitlist.Admitted != 3 || s.Waitlist.Owed != 3 {
		t.Fatalf("three back: serving %d, waitlist %+v; want 3 let in, 3 owed", s.Serving, s.Waitlist)
	}
	f.claim(visitor(0), 0, at(8.5), lim)
	f.supply(2, 9) // the first holds one
	f.advance(at(10), lim)
	if s = f.snap(at(10)); s.Serving != 3 || s.Waitlist.Owed != 2 {
		t.Fatalf("after a hold: serving %d, owed %d; want 3, 2", s.Serving, s.Waitlist.Owed)
	}
	f.supply(3, 11) // one more refund
	f.advance(at(12), lim)
	if s = f.snap(at(12)); s.Serving != 4 || s.Waitlist.Admitted != 4 || s.Waitlist.Owed != 3 {
		t.Fatalf("one more back: serving %d, waitlist %+v; want the fourth in, 3 owed", s.Serving, s.Waitlist)
	}
	// The first step's grant (3, 1 paid) runs out grace+session after it:
	// its 2 unpaid units free again, for the next two.
	end := 7 + (lim.Grace + lim.Session).Seconds()
	f.advance(at(end-0.5), lim)
	if s = f.snap(at(end - 0.5)); s.Serving != 4 {
		t.Fatalf("before the grant runs out: serving %d, want 4", s.Serving)
	}
	f.advance(at(end+1), lim)
	if s = f.snap(at(end + 1)); s.Serving != 6 || s.Waitlist.Owed != 3 {
		t.Fatalf("after the grant ran out: serving %d, owed %d; want 6, 3", s.Serving, s.Waitlist.Owed)
	}
	steps := f.waitlistSteps()
	if len(steps) != 3 || steps[0].Start != 0 || steps[0].Count != 3 || steps[1].Start != 3 || steps[2].Start != 4 || steps[2].Count != 2 {
		t.Fatalf("waitlist steps %+v", steps)
	}
	if steps[0].Number != 2 || steps[0].Waitlist.Supply != 3 || steps[1].Number != 4 {
		t.Fatalf("steps name the samples they went by: %+v %+v", steps[0], steps[1])
	}
	var began bool
	for _, e := range f.history(0, 1000) {
		began = began || (e.Kind == waitingroom.HistoryWaitlistStart && e.Start == 0 && e.At.Equal(at(2)))
	}
	if !began {
		t.Fatalf("no waitlist_start entry in the history")
	}
}

// testWaitlistEachUnitOneFan: two handles stepping the same seconds, over
// many returns, let in exactly as many fans as units came back.
func testWaitlistEachUnitOneFan(t *testing.T, h Harness) {
	f := newFixture(t, h)
	a, b := f.s, f.s
	if h.Pair != nil {
		a, b = h.Pair(t)
	}
	f.fill(40, at(0))
	lim := waitlisting(1)
	f.supply(0, 1)
	units := uint64(0)
	for i := range 10 {
		sec := 2 + 3*float64(i)
		units += uint64(i%3 + 1) // refunds of 1, 2, 3
		if _, _, err := a.ReportSupply(f.ctx, f.room, units, at(sec)); err != nil {
			t.Fatal(err)
		}
		f.advanceOn(a, at(sec+1), lim)
		f.advanceOn(b, at(sec+1), lim)
		f.advanceOn(b, at(sec+2), lim)
		f.advanceOn(a, at(sec+2), lim)
	}
	s := f.snap(at(40))
	if s.Serving != units || s.Waitlist.Admitted != units || s.Waitlist.Owed != units {
		t.Fatalf("%d units came back: serving %d, waitlist %+v", units, s.Serving, s.Waitlist)
	}
	var fans uint64
	for _, e := range f.waitlistSteps() {
		fans += e.Waitlist.Fans
	}
	if fans != units {
		t.Fatalf("history says %d fans let in, want %d", fans, units)
	}
}

// testWaitlistUnitsAndCap: with several units a fan, a return serves as
// many whole fans; the cap bounds the sessions whatever came back.
func testWaitlistUnitsAndCap(t *testing.T, h Harness) {
	f := newFixture(t, h)
	f.fill(10, at(0))
	lim := waitlisting(2)
	f.supply(5, 1)
	f.advance(at(2), lim)
	if s := f.snap(at(2)); s.Serving != 2 || s.Waitlist.Owed != 4 {
		t.Fatalf("5 units, 2 a fan: serving %d, owed %d; want 2, 4", s.Serving, s.Waitlist.Owed)
	}
	lim.Cap, lim.WaitlistUnits = 3, 1
	f.supply(100, 3)
	f.advance(at(4), lim)
	f.advance(at(5), lim)
	if s := f.snap(at(5)); s.Serving != 3 {
		t.Fatalf("cap 3 with 2 pending: serving %d, want 3", s.Serving)
	}
	lim.WaitlistUnits = 0 // paused while waitlisting
	f.supply(200, 6)
	f.advance(at(7), lim)
	if s := f.snap(at(7)); s.Serving != 3 || !s.Waitlist.On() {
		t.Fatalf("paused waitlist: serving %d, waitlist %+v", s.Serving, s.Waitlist)
	}
}

// testWaitlistLeftover: a return smaller than one fan's worth, with nothing
// owed, still reaches the next fan, who is owed what came back; once their
// hold pays it, the next such return reaches the next fan.
func testWaitlistLeftover(t *testing.T, h Harness) {
	f := newFixture(t, h)
	f.fill(10, at(0))
	lim := waitlisting(2)
	f.supply(0, 1)
	f.supply(1, 2)
	f.advance(at(3), lim)
	f.advance(at(4), lim)
	if s := f.snap(at(4)); s.Serving != 1 || s.Waitlist.Owed != 1 {
		t.Fatalf("1 unit back, 2 a fan, nothing owed: serving %d, owed %d; want 1, 1", s.Serving, s.Waitlist.Owed)
	}
	f.supply(0, 5) // the fan let in holds it
	f.supply(1, 6) // another refund
	f.advance(at(7), lim)
	f.advance(at(8), lim)
	if s := f.snap(at(8)); s.Serving != 2 || s.Waitlist.Owed != 1 {
		t.Fatalf("the next unit back: serving %d, owed %d; want 2, 1", s.Serving, s.Waitlist.Owed)
	}
	if steps := f.waitlistSteps(); len(steps) != 2 || steps[0].Waitlist.Units != 1 || steps[1].Waitlist.Units != 1 {
		t.Fatalf("waitlist steps %+v; want two of one unit each", steps)
	}
}

// waitlistThatEnded is a room of five fans whose line became a waitlist at
// 2 s, let the first in on a unit reported back, and stopped being one at
// 3 s (the sale reopened).
func waitlistThatEnded(t *testing.T, h Harness) *fixture {
	f := newFixture(t, h)
	f.fill(5, at(0))
	f.supply(1, 1)
	f.advance(at(2), waitlisting(1))
	closed := limits()
	closed.Open = false
	f.advance(at(3), closed)
	return f
}

// testWaitlistEnds: a step without the waitlist ends it (sold_out or the
// waitlist turned off): its record and grants go, the history says so, and
// the snapshot says when it ended (the passes issued from then on may hold
// what came back) until a new waitlist starts.
func testWaitlistEnds(t *testing.T, h Harness) {
	f := waitlistThatEnded(t, h)
	if s := f.snap(at(3)); s.Waitlist.On() || s.Waitlist.Owed != 0 || s.Serving != 1 || !s.Waitlist.Ended.Equal(at(3)) {
		t.Fatalf("after the waitlist: %+v serving %d; want it ended at %s", s.Waitlist, s.Serving, at(3))
	}
	var ended bool
	for _, e := range f.history(0, 100) {
		ended = ended || (e.Kind == waitingroom.HistoryWaitlistEnd && e.Count == 1 && e.Start == 1)
	}
	if !ended {
		t.Fatalf("no waitlist_end entry: %+v", f.history(0, 100))
	}
	// A new waitlist starts afresh, from serving, owing nothing: the unit
	// reported serves the next fan.
	f.advance(at(4), waitlisting(1))
	if s := f.snap(at(4)); !s.Waitlist.On() || s.Waitlist.From != 1 || s.Waitlist.Admitted != 1 || s.Serving != 2 || !s.Waitlist.Ended.IsZero() {
		t.Fatalf("second waitlist: %+v serving %d", s.Waitlist, s.Serving)
	}
}

// testWaitlistEndSurvivesLoss: the end of the last waitlist comes back with
// a node's seed: a room the seed creates takes it; one that exists takes a
// later one, never an earlier; a line that is a waitlist again keeps none.
func testWaitlistEndSurvivesLoss(t *testing.T, h Harness) {
	f := waitlistThatEnded(t, h)
	if h.Wipe != nil {
		h.Wipe(t, f.s, f.room)
		f.init(waitingroom.Recall{Counters: waitingroom.Counters{Seq: 5, Serving: 1}, Whole: true, WaitlistEnded: at(3)})
		if s := f.snap(at(4)); s.Waitlist.On() || !s.Waitlist.Ended.Equal(at(3)) {
			t.Fatalf("re-created from a seed: waitlist %+v, want ended at %s", s.Waitlist, at(3))
		}
	}
	f.init(waitingroom.Recall{WaitlistEnded: at(2)})
	if s := f.snap(at(4)); !s.Waitlist.Ended.Equal(at(3)) {
		t.Fatalf("an earlier end from a seed: %+v, want the end at %s kept", s.Waitlist, at(3))
	}
	f.init(waitingroom.Recall{WaitlistEnded: at(3.5)})
	if s := f.snap(at(4)); !s.Waitlist.Ended.Equal(at(3.5)) {
		t.Fatalf("a later end from a seed: %+v, want it taken", s.Waitlist)
	}
	f.advance(at(5), waitlisting(1))
	f.init(waitingroom.Recall{WaitlistEnded: at(4.5)})
	if s := f.snap(at(5)); !s.Waitlist.On() || !s.Waitlist.Ended.IsZero() {
		t.Fatalf("a seed's end while the line is a waitlist again: %+v, want none", s.Waitlist)
	}
}

// testWaitlistOwedSurvivesLoss: a room re-created from a node's seed takes
// up the waitlist it had, with what it owed, so the unit a fan was let in
// for before the loss does not let in another after it; the debt runs out
// when the seed says; a room that exists keeps its own waitlist.
func testWaitlistOwedSurvivesLoss(t *testing.T, h Harness) {
	if h.Wipe == nil {
		t.Skip("the backend cannot lose a room")
	}
	f := newFixture(t, h)
	f.fill(5, at(0))
	lim := waitlisting(1)
	f.supply(0, 1)
	f.advance(at(2), lim)
	f.supply(1, 3) // one refund
	f.advance(at(4), lim)
	before := f.snap(at(4))
	if !before.Waitlist.On() || before.Serving != 1 || before.Waitlist.Owed != 1 {
		t.Fatalf("one back: serving %d, waitlist %+v; want 1 let in, 1 owed", before.Serving, before.Waitlist)
	}
	h.Wipe(t, f.s, f.room)
	f.init(waitingroom.Recall{Counters: before.Counters, Whole: true, Waitlist: before.Waitlist, WaitlistOwedUntil: at(60)})
	s := f.snap(at(5))
	if w := s.Waitlist; !w.On() || !w.Since.Equal(at(2)) || w.From != 0 || w.Admitted != 1 || w.Owed != 1 {
		t.Fatalf("re-created from a seed: waitlist %+v; want it taken up, owing 1", w)
	}
	// The origin reports the same unit after the loss: it is owed, nobody
	// more goes in, until the debt runs out.
	f.supply(1, 6)
	f.advance(at(7), lim)
	if s := f.snap(at(7)); s.Serving != 1 {
		t.Fatalf("the owed unit reported again: serving %d, want 1 (nobody more let in)", s.Serving)
	}
	f.advance(at(61), lim)
	if s := f.snap(at(61)); s.Serving != 2 || s.Waitlist.Admitted != 2 {
		t.Fatalf("once the debt ran out: serving %d, waitlist %+v; want the next fan in", s.Serving, s.Waitlist)
	}
	// Again, and this time the first report after the loss says nothing is
	// left: nothing more can be owed.
	again := f.snap(at(61))
	h.Wipe(t, f.s, f.room)
	f.init(waitingroom.Recall{Counters: again.Counters, Whole: true, Waitlist: again.Waitlist, WaitlistOwedUntil: at(200)})
	if w := f.snap(at(62)).Waitlist; w.Owed != 1 {
		t.Fatalf("re-created again: waitlist %+v; want 1 owed", w)
	}
	f.supply(0, 62)
	if w := f.snap(at(63)).Waitlist; w.Owed != 0 {
		t.Fatalf("after a first report of none left: waitlist %+v; want nothing owed", w)
	}
	var began bool
	for _, e := range f.history(0, 100) {
		began = began || (e.Kind == waitingroom.HistoryWaitlistStart && e.Start == 0 && e.At.Equal(at(2)))
	}
	if !began {
		t.Fatalf("the re-created room's history does not say when its waitlist began: %+v", f.history(0, 100))
	}
	other := before.Waitlist
	other.Since, other.From = at(1), 3
	f.init(waitingroom.Recall{Waitlist: other, WaitlistOwedUntil: at(200)})
	if w := f.snap(at(62)).Waitlist; !w.Since.Equal(at(2)) || w.From != 0 {
		t.Fatalf("a seed's waitlist over the room's own: %+v; want the room's kept", w)
	}
}
