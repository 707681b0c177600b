package storetest

import (
	"testing"

	"github.com/foyer-dev/foyer/waitingroom"
)

var supplyTests = []suiteTest{
	{"SupplyLatestReportWins", testSupplyLatestWins},
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
