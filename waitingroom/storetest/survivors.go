package storetest

import (
	"errors"
	"testing"

	"github.com/foyer-dev/foyer/waitingroom"
)

// What a seed restores beyond the line: overrides with their version, the
// forgotten places, the settling of a room re-created knowing nothing, and
// sessions known from passes.

// testOverridesReseeded: a seed's overrides come back with their version; a
// lower version never replaces a higher one; a room re-created blank takes a
// newer version even though it exists.
func testOverridesReseeded(t *testing.T, h Harness) {
	f := &fixture{t: t, s: h.New(t), room: roomName(t), ctx: t.Context()}
	f.init(waitingroom.Seed{}) // re-created blank by a node that knew nothing
	f.init(waitingroom.Seed{Overrides: []byte(`{"paused":true}`), OverridesVersion: 3})
	data, v, err := f.s.Overrides(f.ctx, f.room)
	if err != nil || string(data) != `{"paused":true}` || v != 3 {
		t.Fatalf("overrides after a seed of v3: %q v%d %v", data, v, err)
	}
	f.init(waitingroom.Seed{Overrides: []byte(`{"paused":false}`), OverridesVersion: 2})
	if data, v, _ = f.s.Overrides(f.ctx, f.room); string(data) != `{"paused":true}` || v != 3 {
		t.Fatalf("a seed of v2 replaced v3: %q v%d", data, v)
	}
	if s := f.snap(t0); s.Version != 3 {
		t.Fatalf("snapshot version %d, want 3", s.Version)
	}
	// Saving goes on from the restored version.
	if nv, err := f.s.SaveOverrides(f.ctx, f.room, []byte(`{"paused":false}`), 3); err != nil || nv != 4 {
		t.Fatalf("save after the restore: v%d %v, want v4", nv, err)
	}
	// A room created by a seed carrying overrides has them from the start.
	g := &fixture{t: t, s: f.s, room: roomName(t), ctx: t.Context()}
	g.init(waitingroom.Seed{Whole: true, Overrides: []byte(`{"sold_out":true}`), OverridesVersion: 7})
	if data, v, _ := g.s.Overrides(g.ctx, g.room); string(data) != `{"sold_out":true}` || v != 7 {
		t.Fatalf("overrides of a room created by a seed: %q v%d", data, v)
	}
}

// testForgottenPlaces: below the watermark, a claim without a live session is
// refused as finished; at or above it the line works as before. A restored
// admission whose every place was claimed refuses more claims.
func testForgottenPlaces(t *testing.T, h Harness) {
	f := newFixture(t, h)
	f.fill(20, t0)
	lim := limits()
	f.advance(at(1), lim) // admits places 0-9
	f.claim(visitor(2), 2, at(2), lim)
	f.init(waitingroom.Seed{Forgotten: 5})
	if s := f.snap(at(2)); s.Forgotten != 5 {
		t.Fatalf("forgotten %d, want 5", s.Forgotten)
	}
	f.init(waitingroom.Seed{Forgotten: 3})
	if s := f.snap(at(2)); s.Forgotten != 5 {
		t.Fatalf("forgotten lowered to %d", s.Forgotten)
	}
	if res := f.claim(visitor(2), 2, at(3), lim); res.Status != waitingroom.Claimed {
		t.Fatalf("live session below the watermark: %v, want its session", res.Status)
	}
	if res := f.claim(visitor(3), 3, at(3), lim); res.Status != waitingroom.Finished {
		t.Fatalf("claim below the watermark: %v, want finished", res.Status)
	}
	if res := f.claim(visitor(7), 7, at(3), lim); res.Status != waitingroom.Claimed {
		t.Fatalf("claim above the watermark: %v, want claimed", res.Status)
	}
	if res := f.claim(visitor(15), 15, at(3), lim); res.Status != waitingroom.NotYet {
		t.Fatalf("claim beyond serving: %v, want not yet", res.Status)
	}

	g := &fixture{t: t, s: f.s, room: roomName(t), ctx: t.Context()}
	g.init(waitingroom.Seed{
		Whole:    true,
		Counters: waitingroom.Counters{Seq: 10, Serving: 4, Admitted: 4, Claimed: 2},
		Held:     2, HeldUntil: at(600),
		Batches: []waitingroom.Batch{{Start: 0, Count: 2, Claimed: 2, At: at(1)}, {Start: 2, Count: 2, Claimed: 0, At: at(1)}},
	})
	if res := g.claim("again", 1, at(2), lim); res.Status != waitingroom.Finished {
		t.Fatalf("claim from a restored admission claimed in full: %v, want finished", res.Status)
	}
	if res := g.claim("due", 3, at(2), lim); res.Status != waitingroom.Claimed {
		t.Fatalf("claim from a restored admission with places left: %v, want claimed", res.Status)
	}
}

// testSettling: a room created settling hands out no key and admits nobody
// until the deadline; seeds meanwhile raise its keys and serving; then it
// goes on above them. The deadline is for a room the seed creates only.
func testSettling(t *testing.T, h Harness) {
	f := &fixture{t: t, s: h.New(t), room: roomName(t), ctx: t.Context()}
	f.init(waitingroom.Seed{SettleUntil: at(10)})
	lim := limits()
	if _, err := f.s.Join(f.ctx, f.room, "early", at(5), lim); !errors.Is(err, waitingroom.ErrSettling) {
		t.Fatalf("join while settling: %v, want ErrSettling", err)
	}
	if s := f.snap(at(5)); !s.SettleUntil.Equal(at(10)) || !s.Blank || s.Seq != 0 {
		t.Fatalf("settling room: until %v blank %v seq %d", s.SettleUntil, s.Blank, s.Seq)
	}
	// Returning fans raise the keys and serving.
	f.init(waitingroom.Seed{Counters: waitingroom.Counters{Seq: 84, Serving: 74, Admitted: 74}, Forgotten: 74})
	f.init(waitingroom.Seed{SettleUntil: at(100)}) // the room exists: ignored
	f.advance(at(6), lim)
	if s := f.snap(at(6)); s.Serving != 74 || s.Seq != 84 || !s.SettleUntil.Equal(at(10)) {
		t.Fatalf("after the announcements: serving %d seq %d until %v, want 74, 84 and 10s", s.Serving, s.Seq, s.SettleUntil)
	}
	for sec := 11; sec <= 12; sec++ {
		f.advance(at(float64(sec)), lim)
	}
	if s := f.snap(at(12)); s.Serving == 74 {
		t.Fatalf("serving still %d after the room settled", s.Serving)
	}
	if res := f.join("late", at(12), lim); res.Key != 84 {
		t.Fatalf("first key after settling %d, want 84", res.Key)
	}
}

// testBlankTakesWholeSeed: a room created blank takes the held slots and
// admissions of the first whole seed, and no later one's.
func testBlankTakesWholeSeed(t *testing.T, h Harness) {
	f := &fixture{t: t, s: h.New(t), room: roomName(t), ctx: t.Context()}
	f.init(waitingroom.Seed{})
	whole := waitingroom.Seed{
		Whole:    true,
		Counters: waitingroom.Counters{Seq: 30, Serving: 20, Admitted: 20, Claimed: 17},
		Held:     3, HeldUntil: at(600),
		Batches: []waitingroom.Batch{{Start: 18, Count: 2, Claimed: 0, At: at(0)}},
	}
	f.init(whole)
	s := f.snap(at(1))
	if s.Blank || s.Active != 3 || s.Serving != 20 || len(s.Batches) != 1 || !s.Batches[0].Restored {
		t.Fatalf("blank room after a whole seed: blank %v active %d serving %d batches %+v", s.Blank, s.Active, s.Serving, s.Batches)
	}
	f.init(whole)
	if s := f.snap(at(1)); s.Active != 3 || len(s.Batches) != 1 {
		t.Fatalf("a second whole seed added held slots or admissions: active %d batches %d", s.Active, len(s.Batches))
	}
}

// testSessionsAnnounced: sessions known from passes take slots until their
// end, once each, and mark their visitors finished.
func testSessionsAnnounced(t *testing.T, h Harness) {
	f := newFixture(t, h)
	lim := limits()
	lim.Cap = 2
	f.fill(3, t0)
	ses := []waitingroom.HeldSession{
		{Visitor: "old-a", Until: at(60), Forget: at(600)},
		{Visitor: "old-b", Until: at(30), Forget: at(600)},
	}
	f.init(waitingroom.Seed{Sessions: ses})
	f.init(waitingroom.Seed{Sessions: ses[:1]})
	if s := f.snap(at(1)); s.Active != 2 {
		t.Fatalf("%d active after announcing 2 sessions twice, want 2", s.Active)
	}
	f.advance(at(1), lim)
	if s := f.snap(at(1)); s.Serving != 0 {
		t.Fatalf("admitted %d with every slot held by announced sessions", s.Serving)
	}
	if res := f.claim("old-a", 0, at(2), lim); res.Status != waitingroom.Claimed || !res.Expires.Equal(at(60)) {
		t.Fatalf("claim by an announced session: %v until %v, want its session until 60s", res.Status, res.Expires)
	}
	f.advance(at(31), lim) // old-b's session ended: one slot frees
	if s := f.snap(at(31)); s.Active != 1 || s.Serving != 1 {
		t.Fatalf("after an announced session ended: active %d serving %d, want 1 and 1", s.Active, s.Serving)
	}
	if res := f.claim("old-b", 0, at(32), lim); res.Status != waitingroom.Finished {
		t.Fatalf("claim by a visitor whose announced session ended: %v, want finished", res.Status)
	}
}

// testRaiseOnly: a raise-only seed never creates a room; on one that exists
// it raises as any seed does.
func testRaiseOnly(t *testing.T, h Harness) {
	f := &fixture{t: t, s: h.New(t), room: roomName(t), ctx: t.Context()}
	err := f.s.Init(f.ctx, f.room, waitingroom.Seed{Counters: waitingroom.Counters{Seq: 9}, RaiseOnly: true})
	if !errors.Is(err, waitingroom.ErrNoRoom) {
		t.Fatalf("raise-only seed of a missing room: %v, want ErrNoRoom", err)
	}
	if _, err := f.s.Snapshot(f.ctx, f.room, t0, 0); !errors.Is(err, waitingroom.ErrNoRoom) {
		t.Fatalf("snapshot after a refused raise-only seed: %v, want ErrNoRoom (nothing created)", err)
	}
	f.init(waitingroom.Seed{})
	f.init(waitingroom.Seed{Counters: waitingroom.Counters{Seq: 9}, RaiseOnly: true})
	if s := f.snap(t0); s.Seq != 9 {
		t.Fatalf("raise-only seed of an existing room: seq %d, want 9", s.Seq)
	}
}
