package storetest

import (
	"fmt"
	"testing"
	"time"

	"github.com/foyer-dev/foyer/waitingroom"
)

// Priority lanes (docs/line.md, "Priority lanes"): each lane is a first-come
// line of its own, and every step's admissions are shared between the lanes
// with fans waiting, by weight.

var laneTests = []suiteTest{
	{"LanesHaveTheirOwnKeys", testLaneKeys},
	{"LanesShareByWeight", testLanesShareByWeight},
	{"EmptyLaneTakesNoSlot", testEmptyLaneTakesNoSlot},
	{"LanePlacesClaim", testLanePlacesClaim},
	{"LanesWithinTheCap", testLanesWithinTheCap},
	{"LanesRecordedInHistory", testLanesHistory},
	{"LanesReseeded", testLanesReseeded},
	{"LaneOfWeightZeroWaits", testLaneOfWeightZeroWaits},
	{"LaneOfWeightZeroOutOfThePace", testLaneOfWeightZeroOutOfThePace},
}

// laneLimits: presale=3 members=2 general=1, thirty a second, room for all.
func laneLimits() waitingroom.Limits {
	lim := limits()
	lim.Rate = 1800
	lim.Cap = 10_000
	l, err := waitingroom.ParseLanes("presale=3 members=2 general=1")
	if err != nil {
		panic(err)
	}
	lim.Lanes = l
	return lim
}

// presaleOnly are laneLimits in a phase that lets in the presale lane
// alone: members and general weigh 0.
func presaleOnly() waitingroom.Limits {
	lim := laneLimits()
	l, err := waitingroom.ParseLanes("presale=3 members=0 general=0")
	if err != nil {
		panic(err)
	}
	lim.Lanes = l
	return lim
}

// joinLane joins v to lane, checking the store gave no refusal.
func (f *fixture) joinLane(v, lane string, now time.Time, lim waitingroom.Limits) waitingroom.JoinResult {
	f.t.Helper()
	res, err := f.s.JoinMany(f.ctx, f.room, []waitingroom.Joiner{{Visitor: v, Lane: lane}}, now, lim)
	if err != nil {
		f.t.Fatalf("JoinMany(%s in %s): %v", v, lane, err)
	}
	return res[0]
}

// fillLanes joins n visitors to each of the lanes named, while the room is
// closed, and returns their places by lane.
func (f *fixture) fillLanes(n int, lanes ...string) map[string][]uint64 {
	f.t.Helper()
	closed := laneLimits()
	closed.Open = false
	out := make(map[string][]uint64)
	for i := range n {
		for _, lane := range lanes {
			res := f.joinLane(fmt.Sprintf("%s-%d", lane, i), lane, t0, closed)
			out[lane] = append(out[lane], res.Key)
		}
	}
	return out
}

// laneServing is how many of lane's places the line reached.
func laneServing(s waitingroom.Snapshot, lim waitingroom.Limits, lane string) uint64 {
	i := lim.Lanes.LaneOf(lane)
	if i == 0 {
		return s.Serving
	}
	if i < len(s.Lanes) {
		return s.Lanes[i].Serving
	}
	return 0
}

func testLaneKeys(t *testing.T, h Harness) {
	f := newFixture(t, h)
	lim := laneLimits()
	places := f.fillLanes(3, "presale", "general", "nosuchlane", "")
	for lane, want := range map[string]int{"presale": lim.Lanes.LaneOf("presale"), "general": 0, "nosuchlane": 0, "": 0} {
		for _, p := range places[lane] {
			if got, _ := waitingroom.LaneOfPlace(p); got != want {
				t.Errorf("a place of lane %q is lane %d's (%d), want %d", lane, got, p, want)
			}
		}
	}
	if got := places["presale"]; got[0] != waitingroom.LanePlace(lim.Lanes.LaneOf("presale"), 0) || got[2] != got[0]+2 {
		t.Errorf("presale places %v, want its own keys from 0", got)
	}
	// The general lane's keys are the order keys, whatever other lanes hold.
	if s := f.snap(t0); s.Seq != 9 {
		t.Errorf("general keys issued %d, want 9", s.Seq)
	}
}

func testLanesShareByWeight(t *testing.T, h Harness) {
	f := newFixture(t, h)
	lim := laneLimits()
	f.fillLanes(100, "presale", "members", "general")
	for sec := 1; sec <= 3; sec++ {
		f.advance(at(float64(sec)), lim)
	}
	// 30 a second: 15, 10 and 5 each second.
	s := f.snap(at(3))
	for lane, want := range map[string]uint64{"presale": 45, "members": 30, "general": 15} {
		if got := laneServing(s, lim, lane); got != want {
			t.Errorf("%s let in %d in 3 s, want %d", lane, got, want)
		}
	}
	if s.Pending != 90 {
		t.Errorf("pending %d, want 90", s.Pending)
	}
}

func testEmptyLaneTakesNoSlot(t *testing.T, h Harness) {
	f := newFixture(t, h)
	lim := laneLimits()
	f.fillLanes(2, "presale")
	f.fillLanes(100, "general")
	f.advance(at(1), lim)
	s := f.snap(at(1))
	// Presale's two go in, the general lane takes the rest of the 30; members is empty.
	if p, g, m := laneServing(s, lim, "presale"), laneServing(s, lim, "general"), laneServing(s, lim, "members"); p != 2 || g != 28 || m != 0 {
		t.Errorf("presale %d, general %d, members %d let in; want 2, 28, 0", p, g, m)
	}
}

func testLanePlacesClaim(t *testing.T, h Harness) {
	f := newFixture(t, h)
	lim := laneLimits()
	lim.Rate = 60 // one a second
	places := f.fillLanes(2, "presale", "general")
	first, second := places["presale"][0], places["presale"][1]
	f.expectClaim("presale's first before its turn", "presale-0", first, at(0.5), lim, waitingroom.NotYet)
	f.advance(at(1), lim)
	f.expectClaim("presale's first in its turn", "presale-0", first, at(1.5), lim, waitingroom.Claimed)
	f.expectClaim("presale's second", "presale-1", second, at(1.5), lim, waitingroom.NotYet)
	f.expectClaim("general's first", "general-0", places["general"][0], at(1.5), lim, waitingroom.NotYet)
	if s := f.snap(at(1.5)); s.Active != 1 || s.Pending != 0 {
		t.Errorf("active %d pending %d, want 1 and 0", s.Active, s.Pending)
	}
}

func testLanesWithinTheCap(t *testing.T, h Harness) {
	f := newFixture(t, h)
	lim := laneLimits()
	lim.Cap = 7
	f.fillLanes(50, "presale", "members", "general")
	for sec := 1; sec <= 5; sec++ {
		f.advance(at(float64(sec)), lim)
		if s := f.snap(at(float64(sec))); s.Active+s.Pending > lim.Cap {
			t.Fatalf("at %d s: %d active and %d pending, over the cap of %d", sec, s.Active, s.Pending, lim.Cap)
		}
	}
	s := f.snap(at(5))
	var total uint64
	for _, lane := range []string{"presale", "members", "general"} {
		total += laneServing(s, lim, lane)
	}
	if total != 7 {
		t.Errorf("%d let in under a cap of 7", total)
	}
}

func testLanesHistory(t *testing.T, h Harness) {
	f := newFixture(t, h)
	lim := laneLimits()
	f.fillLanes(100, "presale", "members", "general")
	f.advance(at(1), lim)
	hist, err := f.s.History(f.ctx, f.room, 0, waitingroom.MaxHistoryPage)
	if err != nil {
		t.Fatal(err)
	}
	var steps []waitingroom.HistoryEntry
	admitted := make(map[int]uint64)
	for _, e := range hist {
		switch e.Kind {
		case waitingroom.HistoryLanes:
			steps = append(steps, e)
		case waitingroom.HistoryAdmit:
			lane, _ := waitingroom.LaneOfPlace(e.Start)
			admitted[lane] += e.Count
		}
	}
	if len(steps) != 1 {
		t.Fatalf("lanes entries %+v, want one", steps)
	}
	want := []waitingroom.LaneShare{{Waiting: 100, Admitted: 5}, {Waiting: 100, Admitted: 10}, {Waiting: 100, Admitted: 15}}
	if fmt.Sprint(steps[0].Shares) != fmt.Sprint(want) || steps[0].Count != 30 || !steps[0].At.Equal(at(1)) {
		t.Errorf("lanes entry %+v, want shares %v of 30 at 1 s", steps[0], want)
	}
	for i, sh := range want {
		if admitted[i] != sh.Admitted {
			t.Errorf("lane %d's admissions in the history %d, want %d", i, admitted[i], sh.Admitted)
		}
	}
}

func testLanesReseeded(t *testing.T, h Harness) {
	needsWipe(t, h)
	f := newFixture(t, h)
	lim := laneLimits()
	f.fillLanes(10, "presale", "general")
	f.advance(at(1), lim)
	before := f.snap(at(1))
	h.Wipe(t, f.s, f.room)
	f.init(waitingroom.Recall{Counters: before.Counters, Lanes: before.Lanes, LaneCredit: before.LaneCredit, LaneSpec: before.LaneSpec, Whole: true})
	after := f.snap(at(1.5))
	if fmt.Sprint(after.Lanes) != fmt.Sprint(before.Lanes) || fmt.Sprint(after.LaneCredit) != fmt.Sprint(before.LaneCredit) {
		t.Errorf("after the loss lanes %v credit %v, want %v %v", after.Lanes, after.LaneCredit, before.Lanes, before.LaneCredit)
	}
	// The next presale place follows the last one handed out.
	if res := f.joinLane("presale-late", "presale", at(2), lim); res.Key != waitingroom.LanePlace(lim.Lanes.LaneOf("presale"), 10) {
		t.Errorf("presale place after the loss %d, want its 11th", res.Key)
	}
}

// testLaneOfWeightZeroWaits: weights of a phase that hold a lane back
// (weight 0) let none of its fans in, not even one who joins an empty open
// room, while they keep their places; each step records the weights it
// split by, and the lane's fans go in, from its first place, once weights
// that give it a share are in force.
func testLaneOfWeightZeroWaits(t *testing.T, h Harness) {
	f := newFixture(t, h)
	held := presaleOnly()
	first := f.joinLane("members-first", "members", t0, held)
	if first.Admitted {
		t.Fatal("a fan of a lane of weight 0 was let in on joining an empty room")
	}
	if again := f.joinLane("general-first", "general", t0, held); again.Admitted {
		t.Fatal("a fan of the general lane of weight 0 was let in on joining an empty room")
	}
	f.fillLanes(10, "presale", "members", "general")
	f.advance(at(1), held)
	s := f.snap(at(1))
	if p, m, g := laneServing(s, held, "presale"), laneServing(s, held, "members"), laneServing(s, held, "general"); p != 10 || m != 0 || g != 0 {
		t.Errorf("presale %d, members %d, general %d let in under %s; want 10, 0, 0", p, m, g, held.Lanes)
	}
	open := laneLimits()
	f.advance(at(2), open)
	s = f.snap(at(2))
	if m, g := laneServing(s, open, "members"), laneServing(s, open, "general"); m != 11 || g != 11 {
		t.Errorf("members %d, general %d let in once both had weights; want 11 and 11", m, g)
	}
	hist, err := f.s.History(f.ctx, f.room, 0, waitingroom.MaxHistoryPage)
	if err != nil {
		t.Fatal(err)
	}
	var weights []string
	for _, e := range hist {
		if e.Kind == waitingroom.HistoryLanes {
			weights = append(weights, e.Weights)
		}
	}
	if want := []string{held.Lanes.String(), open.Lanes.String()}; fmt.Sprint(weights) != fmt.Sprint(want) {
		t.Errorf("the steps recorded weights %q, want %q", weights, want)
	}
}

// testLaneOfWeightZeroOutOfThePace: seconds in which only fans of lanes of
// weight 0 wait are not measured in the line's pace (waitingroom.Pace):
// they wait for a phase that gives their lane a weight, not for the line to
// move, and counting those seconds would make the wait of everyone after
// them look longer. A second with a fan of a lane that admits is measured,
// admitted or not.
func testLaneOfWeightZeroOutOfThePace(t *testing.T, h Harness) {
	f := newFixture(t, h)
	held := presaleOnly()
	f.fillLanes(5, "members", "general")
	for sec := 1.0; sec <= 4; sec++ {
		f.advance(at(sec), held)
	}
	if p := f.snap(at(4)).Pace; p != (waitingroom.Pace{}) {
		t.Fatalf("only lanes of weight 0 waited: pace %+v, want nothing measured", p)
	}
	f.joinLane("presale-late", "presale", at(4.5), held)
	f.advance(at(5), held)
	if p := f.snap(at(5)).Pace; p.Seconds != 1 || p.Places != 1 {
		t.Fatalf("a presale fan waited and went in: pace %+v, want one second, one place", p)
	}
}
