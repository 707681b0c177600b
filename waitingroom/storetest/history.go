package storetest

import (
	"testing"

	"github.com/foyer-dev/foyer/waitingroom"
)

func (f *fixture) history(from, limit int) []waitingroom.HistoryEntry {
	f.t.Helper()
	h, err := f.s.History(f.ctx, f.room, from, limit)
	if err != nil {
		f.t.Fatalf("History: %v", err)
	}
	return h
}

func admit(start, count uint64, sec float64) waitingroom.HistoryEntry {
	return waitingroom.HistoryEntry{Kind: waitingroom.HistoryAdmit, Start: start, Count: count, At: at(sec)}
}

func sameHistory(got, want []waitingroom.HistoryEntry) bool {
	if len(got) != len(want) {
		return false
	}
	for i := range got {
		g, w := got[i], want[i]
		if g.Kind != w.Kind || g.Start != w.Start || g.Count != w.Count || g.Number != w.Number || !g.At.Equal(w.At) {
			return false
		}
	}
	return true
}

// testHistory: every admission is recorded in order-key order with its time,
// admissions on the spot within one second share an entry, draws of the
// random method are recorded, and the history pages.
func testHistory(t *testing.T, h Harness) {
	f := newFixture(t, h)
	lim := limits()
	lim.Rate = 120 // two a second
	// Three walk in at once (the first on the banked visitor, then the
	// budget runs out), in the same second: one entry.
	f.join("a", at(0.1), lim)
	f.advance(at(1), lim)
	f.join("b", at(1.2), lim)
	f.join("c", at(1.3), lim)
	f.join("d", at(1.4), lim) // no budget left: waits
	f.fill(0, at(1.4))
	f.advance(at(2), lim)
	want := []waitingroom.HistoryEntry{admit(0, 1, 0.1), admit(1, 2, 1.2), admit(3, 1, 2)}
	if got := f.history(0, 100); !sameHistory(got, want) {
		t.Fatalf("history %+v, want %+v", got, want)
	}
	if got := f.history(1, 1); !sameHistory(got, want[1:2]) {
		t.Fatalf("page from 1 of 1: %+v, want %+v", got, want[1:2])
	}
	if got := f.history(3, 10); len(got) != 0 {
		t.Fatalf("page past the end: %+v", got)
	}

	// The random method: each draw is recorded before the admissions it allows.
	g := newFixture(t, h)
	g.fill(6, t0)
	lim = limits()
	lim.Reshuffle = true
	lim.Rate = 240 // four a second
	g.advance(at(1), lim)
	g.advance(at(2), lim)
	want = []waitingroom.HistoryEntry{
		{Kind: waitingroom.HistoryDraw, Start: 0, Count: 6, Number: 1, At: at(1)},
		admit(0, 4, 1), admit(4, 2, 2),
	}
	if got := g.history(0, 100); !sameHistory(got, want) {
		t.Fatalf("random room's history %+v, want %+v", got, want)
	}
	if _, err := g.s.History(g.ctx, "never-made-"+g.room, 0, 10); err != waitingroom.ErrNoRoom {
		t.Fatalf("history of an unknown room: %v, want ErrNoRoom", err)
	}
}
