package storetest

import (
	"errors"
	"testing"

	"github.com/foyer-dev/foyer/waitingroom"
)

var supplyTests = []suiteTest{
	{"SupplyLatestReportWins", testSupplyLatestWins},
	{"ToldMarksAddUp", testToldMarks},
}

func (f *fixture) supply(units uint64, sec float64) (waitingroom.SupplySample, bool) {
	f.t.Helper()
	s, ok, err := f.s.ReportSupply(f.ctx, f.room, units, at(sec))
	if err != nil {
		f.t.Fatalf("ReportSupply: %v", err)
	}
	return s, ok
}

// testSupplyLatestWins: each report is a numbered sample carrying the room's
// claims and live sessions; one dated before the last changes nothing; the
// snapshot carries the latest MaxSupplyTail; the history records every
// sample.
func testSupplyLatestWins(t *testing.T, h Harness) {
	f := newFixture(t, h)
	lim := limits()
	if got := f.snap(at(0)).Supply; len(got) != 0 {
		t.Fatalf("supply before any report: %+v", got)
	}
	f.join("a", at(0.1), lim) // walks in on the banked visitor
	f.claim("a", 0, at(0.2), lim)
	s, ok := f.supply(100, 1)
	if !ok || s.N != 1 || s.Units != 100 || s.Claimed != 1 || s.Active != 1 || !s.At.Equal(at(1)) {
		t.Fatalf("first report: %+v %v", s, ok)
	}
	if s, ok := f.supply(90, 0.5); ok || s.N != 1 || s.Units != 100 {
		t.Fatalf("a report older than the last: %+v %v, want ignored", s, ok)
	}
	for i := range waitingroom.MaxSupplyTail + 2 {
		f.supply(uint64(90-i), 2+float64(i))
	}
	tail := f.snap(at(20)).Supply
	if len(tail) != waitingroom.MaxSupplyTail {
		t.Fatalf("snapshot carries %d samples, want %d", len(tail), waitingroom.MaxSupplyTail)
	}
	last := tail[len(tail)-1]
	if last.N != uint64(waitingroom.MaxSupplyTail+3) || last.Units != uint64(90-waitingroom.MaxSupplyTail-1) {
		t.Fatalf("latest sample %+v", last)
	}
	for i := 1; i < len(tail); i++ {
		if tail[i].N != tail[i-1].N+1 {
			t.Fatalf("samples out of order: %+v", tail)
		}
	}
	n := 0
	for _, e := range f.history(0, 100) {
		if e.Kind == waitingroom.HistorySupply {
			n++
			if e.Supply == nil || e.Supply.N != uint64(n) || !e.At.Equal(e.Supply.At) {
				t.Fatalf("history entry %d: %+v", n, e)
			}
		}
	}
	if n != waitingroom.MaxSupplyTail+3 {
		t.Fatalf("history holds %d supply entries, want %d", n, waitingroom.MaxSupplyTail+3)
	}
}

// testToldMarks: the marks of what places' holders were told are kept place
// by place, whatever serving and whether the place is still waiting, in
// every lane; a mark only adds to a place's (two nodes may send the same);
// the tally counts each place once, by the marks it carries; a room the
// store lost starts with none; an unknown room is ErrNoRoom.
func testToldMarks(t *testing.T, h Harness) {
	f := newFixture(t, h)
	lim := limits()
	if got, err := f.s.ToldTally(f.ctx, f.room); err != nil || got != (waitingroom.ToldTally{}) {
		t.Fatalf("tally of a room told nothing: %v %v", got, err)
	}
	const (
		likely, risk, unlikely, in = waitingroom.MarkLikely, waitingroom.MarkAtRisk, waitingroom.MarkUnlikely, waitingroom.MarkLetIn
	)
	lanePlace := waitingroom.LanePlace(2, 7)
	f.beat(waitingroom.Beats{Told: []waitingroom.PlaceTold{
		{Place: 0, Marks: likely}, {Place: 1, Marks: likely}, {Place: 2, Marks: unlikely},
		{Place: 5000, Marks: risk}, {Place: lanePlace, Marks: unlikely},
	}}, at(1), lim)
	a, b := f.pair(h)
	for _, s := range []waitingroom.Store{a, b} {
		// Both nodes tell place 2 "at risk" and let places 0 and 2 in.
		if err := s.Beat(f.ctx, f.room, waitingroom.Beats{Told: []waitingroom.PlaceTold{
			{Place: 0, Marks: in}, {Place: 2, Marks: risk | in}, {Place: lanePlace, Marks: risk},
		}}, at(2), lim); err != nil {
			t.Fatal(err)
		}
	}
	f.advance(at(3), lim)
	var want waitingroom.ToldTally
	want[likely|in]++        // place 0
	want[likely]++           // place 1
	want[unlikely|risk|in]++ // place 2
	want[risk]++             // place 5000
	want[unlikely|risk]++    // the lane's place 7
	if got, err := f.s.ToldTally(f.ctx, f.room); err != nil || got != want {
		t.Fatalf("tally %v %v, want %v", got, err, want)
	}
	if h.Wipe != nil {
		h.Wipe(t, f.s, f.room)
		f.init(waitingroom.Recall{})
		if got, err := f.s.ToldTally(f.ctx, f.room); err != nil || got != (waitingroom.ToldTally{}) {
			t.Fatalf("tally after the store lost the room: %v %v, want none", got, err)
		}
	}
	if _, err := f.s.ToldTally(f.ctx, f.room+"-unknown"); !errors.Is(err, waitingroom.ErrNoRoom) {
		t.Fatalf("tally of an unknown room: %v, want ErrNoRoom", err)
	}
	if err := f.s.Beat(f.ctx, f.room+"-unknown", waitingroom.Beats{Told: []waitingroom.PlaceTold{{Place: 1, Marks: likely}}}, at(4), lim); !errors.Is(err, waitingroom.ErrNoRoom) {
		t.Fatalf("marks for an unknown room: %v, want ErrNoRoom", err)
	}
}
