package storetest

import (
	"encoding/json"
	"errors"
	"fmt"
	"testing"

	"github.com/foyer-dev/foyer/waitingroom"
)

func (f *fixture) audit(after uint64, limit int) []waitingroom.AuditEntry {
	f.t.Helper()
	a, err := f.s.Audit(f.ctx, f.room, after, limit)
	if err != nil {
		f.t.Fatalf("Audit: %v", err)
	}
	return a
}

func seqs(a []waitingroom.AuditEntry) []uint64 {
	out := make([]uint64, len(a))
	for i, e := range a {
		out[i] = e.Seq
	}
	return out
}

// testAuditTrail: entries are numbered from 1 as appended, read back whole
// (time, author, action, old and new values, note), paged by number, and
// only the newest waitingroom.MaxAudit are kept; an unknown room has none.
func testAuditTrail(t *testing.T, h Harness) {
	f := newFixture(t, h)
	if got := f.audit(0, 10); len(got) != 0 {
		t.Fatalf("a new room's trail: %+v", got)
	}
	first := waitingroom.AuditEntry{
		Seq: 99, At: at(1.5), Who: "127.0.0.1:4000 (cli on box)", Action: waitingroom.AuditPause, Note: "payment provider down",
		Changes: []waitingroom.AuditChange{{Setting: "paused", Old: json.RawMessage("false"), New: json.RawMessage("true")}},
	}
	e, err := f.s.AppendAudit(f.ctx, f.room, first)
	if err != nil || e.Seq != 1 {
		t.Fatalf("AppendAudit: %+v %v, want seq 1", e, err)
	}
	got := f.audit(0, 10)
	if len(got) != 1 {
		t.Fatalf("trail %+v, want one entry", got)
	}
	g := got[0]
	if g.Seq != 1 || !g.At.Equal(first.At) || g.Who != first.Who || g.Action != first.Action || g.Note != first.Note ||
		len(g.Changes) != 1 || g.Changes[0].Setting != "paused" || string(g.Changes[0].Old) != "false" || string(g.Changes[0].New) != "true" {
		t.Fatalf("read back %+v, want %+v numbered 1", g, first)
	}
	for i := range 4 {
		if _, err := f.s.AppendAudit(f.ctx, f.room, waitingroom.AuditEntry{At: at(float64(2 + i)), Who: "x", Action: waitingroom.AuditPatch}); err != nil {
			t.Fatal(err)
		}
	}
	if got := seqs(f.audit(2, 2)); fmt.Sprint(got) != "[3 4]" {
		t.Fatalf("page after 2 of 2: %v, want [3 4]", got)
	}
	if got := f.audit(5, 10); len(got) != 0 {
		t.Fatalf("page past the end: %+v", got)
	}
	if _, err := f.s.Audit(f.ctx, "no-such-room", 0, 10); !errors.Is(err, waitingroom.ErrNoRoom) {
		t.Fatalf("unknown room: %v, want ErrNoRoom", err)
	}
	if _, err := f.s.AppendAudit(f.ctx, "no-such-room", first); !errors.Is(err, waitingroom.ErrNoRoom) {
		t.Fatalf("append to an unknown room: %v, want ErrNoRoom", err)
	}
	// Past the bound the oldest go; numbering runs on, and a cursor older
	// than the oldest kept starts at it.
	for i := 6; i <= waitingroom.MaxAudit+2; i++ {
		if _, err := f.s.AppendAudit(f.ctx, f.room, waitingroom.AuditEntry{At: at(10), Who: "x", Action: waitingroom.AuditPatch}); err != nil {
			t.Fatal(err)
		}
	}
	all := f.audit(0, waitingroom.MaxAudit+10)
	if len(all) != waitingroom.MaxAudit || all[0].Seq != 3 || all[len(all)-1].Seq != waitingroom.MaxAudit+2 {
		t.Fatalf("bounded trail: %d entries, %d..%d; want %d, 3..%d", len(all), all[0].Seq, all[len(all)-1].Seq,
			waitingroom.MaxAudit, waitingroom.MaxAudit+2)
	}
	if got := seqs(f.audit(1, 1)); fmt.Sprint(got) != "[3]" {
		t.Fatalf("cursor before the oldest kept: %v, want [3]", got)
	}
}
