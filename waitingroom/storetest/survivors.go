package storetest

import (
	"errors"
	"fmt"
	"testing"
	"time"

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
	f.init(waitingroom.Recall{}) // re-created blank by a node that knew nothing
	f.init(waitingroom.Recall{Overrides: []byte(`{"paused":true}`), OverridesVersion: 3})
	data, v, err := f.s.Overrides(f.ctx, f.room)
	if err != nil || string(data) != `{"paused":true}` || v != 3 {
		t.Fatalf("overrides after a seed of v3: %q v%d %v", data, v, err)
	}
	f.init(waitingroom.Recall{Overrides: []byte(`{"paused":false}`), OverridesVersion: 2})
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
	g.init(waitingroom.Recall{Whole: true, Overrides: []byte(`{"sold_out":true}`), OverridesVersion: 7})
	if data, v, _ := g.s.Overrides(g.ctx, g.room); string(data) != `{"sold_out":true}` || v != 7 {
		t.Fatalf("overrides of a room created by a seed: %q v%d", data, v)
	}
}

// testForgottenPlaces: below the watermark, a claim without a live session is
// refused as finished; at or above it the line works as before. A restored
// admission whose every place was claimed refuses more claims.
func testForgottenPlaces(t *testing.T, h Harness) {
	f, lim := lineOf(t, h, 20)
	f.advance(at(1), lim) // admits places 0-9
	f.claim(visitor(2), 2, at(2), lim)
	f.init(waitingroom.Recall{Forgotten: 5})
	if s := f.snap(at(2)); s.Forgotten != 5 {
		t.Fatalf("forgotten %d, want 5", s.Forgotten)
	}
	f.init(waitingroom.Recall{Forgotten: 3})
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
	g.init(waitingroom.Recall{
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
	f.init(waitingroom.Recall{SettleUntil: at(10)})
	lim := limits()
	if _, err := f.s.Join(f.ctx, f.room, "early", at(5), lim); !errors.Is(err, waitingroom.ErrSettling) {
		t.Fatalf("join while settling: %v, want ErrSettling", err)
	}
	if s := f.snap(at(5)); !s.SettleUntil.Equal(at(10)) || !s.Blank || s.Seq != 0 {
		t.Fatalf("settling room: until %v blank %v seq %d", s.SettleUntil, s.Blank, s.Seq)
	}
	// Returning fans raise the keys and serving.
	f.init(waitingroom.Recall{Counters: waitingroom.Counters{Seq: 84, Serving: 74, Admitted: 74}, Forgotten: 74})
	f.init(waitingroom.Recall{SettleUntil: at(100)}) // the room exists: ignored
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
	f.init(waitingroom.Recall{})
	whole := waitingroom.Recall{
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
	f.init(waitingroom.Recall{Sessions: ses})
	f.init(waitingroom.Recall{Sessions: ses[:1]})
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
	err := f.s.Init(f.ctx, f.room, waitingroom.Recall{Counters: waitingroom.Counters{Seq: 9}, RaiseOnly: true})
	if !errors.Is(err, waitingroom.ErrNoRoom) {
		t.Fatalf("raise-only seed of a missing room: %v, want ErrNoRoom", err)
	}
	if _, err := f.s.Snapshot(f.ctx, f.room, t0, 0); !errors.Is(err, waitingroom.ErrNoRoom) {
		t.Fatalf("snapshot after a refused raise-only seed: %v, want ErrNoRoom (nothing created)", err)
	}
	f.init(waitingroom.Recall{})
	f.init(waitingroom.Recall{Counters: waitingroom.Counters{Seq: 9}, RaiseOnly: true})
	if s := f.snap(t0); s.Seq != 9 {
		t.Fatalf("raise-only seed of an existing room: seq %d, want 9", s.Seq)
	}
}

// reseeded creates a room as a re-seed after a loss does: held slots standing
// for the sessions the store lost, until holdUntil.
func reseeded(t *testing.T, h Harness, held int, holdUntil time.Time) *fixture {
	f := &fixture{t: t, s: h.New(t), room: roomName(t), ctx: t.Context()}
	f.init(waitingroom.Recall{
		Whole:    true,
		Counters: waitingroom.Counters{Seq: 40, Serving: 30, Admitted: 30, Claimed: 30},
		Held:     held, HeldUntil: holdUntil, LostAt: t0,
	})
	return f
}

func (f *fixture) reclaim(v string, ends, now time.Time, lim waitingroom.Limits) waitingroom.ClaimResult {
	f.t.Helper()
	res, err := f.s.Reclaim(f.ctx, f.room, v, ends, now, lim)
	if err != nil {
		f.t.Fatalf("reclaim %s: %v", v, err)
	}
	return res
}

// testReclaimTakesHeldSlots: a session from before the loss takes over one of
// the held slots, to its pass's end, and is then a live session like any
// other (reclaiming again returns it); the room's count of sessions does not
// grow. The snapshot says when the room was lost.
func testReclaimTakesHeldSlots(t *testing.T, h Harness) {
	lim := limits()
	lim.Cap = 3
	f := reseeded(t, h, 3, at(60))
	if s := f.snap(at(1)); s.Active != 3 || !s.LostAt.Equal(t0) {
		t.Fatalf("after the re-seed: active %d lost at %v, want 3 and %v", s.Active, s.LostAt, t0)
	}
	ends := at(300)
	for i := range 3 {
		res := f.reclaim(visitor(i), ends, at(2), lim)
		if res.Status != waitingroom.Claimed || !res.Expires.Equal(ends) {
			t.Fatalf("reclaim %d: %v until %v, want claimed until %v", i, res.Status, res.Expires, ends)
		}
	}
	if s := f.snap(at(2)); s.Active != 3 {
		t.Fatalf("three reclaims of three held slots: %d active, want 3", s.Active)
	}
	if res := f.reclaim(visitor(1), ends, at(3), lim); res.Status != waitingroom.Claimed || !res.Expires.Equal(ends) {
		t.Fatalf("reclaiming a live session: %v until %v", res.Status, res.Expires)
	}
	// A fourth: no held slot, no free one.
	if res := f.reclaim(visitor(3), ends, at(3), lim); res.Status != waitingroom.Full {
		t.Fatalf("a reclaim over the cap: %v, want full", res.Status)
	}
	if s := f.snap(at(3)); s.Active > lim.Cap || s.Returning != 1 {
		t.Fatalf("%d active, %d returning, want at most the cap of %d and 1", s.Active, s.Returning, lim.Cap)
	}
	// The session, once over, is not taken over again.
	if err := f.s.Release(f.ctx, f.room, visitor(0), "p0", ends, at(4), lim); err != nil {
		t.Fatal(err)
	}
	if res := f.reclaim(visitor(0), ends, at(5), lim); res.Status != waitingroom.Finished {
		t.Fatalf("reclaim after release: %v, want finished", res.Status)
	}
	if res := f.reclaim(visitor(9), at(5), at(5), lim); res.Status != waitingroom.Finished {
		t.Fatalf("reclaim of a pass at its end: %v, want finished", res.Status)
	}
}

// testReclaimAfterTheHold: once the held slots' time is up they free for the
// line; a session from before the loss coming back then gets a free slot
// if there is one, waits at the front otherwise (and is held while the room
// admits nobody), never above the cap.
func testReclaimAfterTheHold(t *testing.T, h Harness) {
	lim := limits()
	lim.Cap = 2
	f := reseeded(t, h, 2, at(60))
	if s := f.snap(at(61)); s.Active != 0 {
		t.Fatalf("held slots after their hold: %d active, want 0", s.Active)
	}
	ends := at(600)
	if res := f.reclaim("late", ends, at(62), lim); res.Status != waitingroom.Claimed || !res.Expires.Equal(ends) {
		t.Fatalf("reclaim into a free slot: %v until %v", res.Status, res.Expires)
	}
	if res := f.claim(visitor(30), 30, at(62), lim); res.Status != waitingroom.NotYet {
		t.Fatalf("claim: %v", res.Status)
	}
	f.advance(at(63), lim)
	if res := f.claim(visitor(30), 30, at(63), lim); res.Status != waitingroom.Claimed {
		t.Fatalf("claim of the place admitted: %v, %+v", res.Status, f.snap(at(63)))
	}
	if res := f.reclaim("later", ends, at(64), lim); res.Status != waitingroom.Full {
		t.Fatalf("reclaim with every slot taken: %v, want full", res.Status)
	}
	closed := lim
	closed.Open = false
	if res := f.reclaim("later", ends, at(65), closed); res.Status != waitingroom.Held {
		t.Fatalf("reclaim while the room admits nobody: %v, want held", res.Status)
	}
	if s := f.snap(at(65)); s.Active > lim.Cap {
		t.Fatalf("cap exceeded: %d active", s.Active)
	}
}

// testReleaseGivesUpAHeldSlot: revoking a session the store lost gives up one
// of the slots held for it, so the line moves at once; revoking a session
// the store holds does not touch them.
func testReleaseGivesUpAHeldSlot(t *testing.T, h Harness) {
	lim := limits()
	lim.Cap = 3
	f := reseeded(t, h, 3, at(600))
	f.reclaim("known", at(300), at(1), lim)
	if err := f.s.Release(f.ctx, f.room, "known", "pk", at(300), at(2), lim); err != nil {
		t.Fatal(err)
	}
	if s := f.snap(at(2)); s.Active != 2 {
		t.Fatalf("after releasing a reclaimed session: %d active, want the 2 held", s.Active)
	}
	for i := range 2 {
		if err := f.s.Release(f.ctx, f.room, visitor(i), fmt.Sprintf("p%d", i), at(300), at(3), lim); err != nil {
			t.Fatal(err)
		}
	}
	s := f.snap(at(3))
	if s.Active != 0 {
		t.Fatalf("after revoking the two sessions the store lost: %d active, want 0", s.Active)
	}
	if len(s.Revocations) != 3 {
		t.Fatalf("%d revocations, want 3", len(s.Revocations))
	}
	f.advance(at(4), lim)
	if s := f.snap(at(4)); s.Serving == 30 {
		t.Fatal("the line did not move once the held slots were given up")
	}
}

// testReseedMarginJudgedByBeats: a re-seed's margin of order keys is judged
// by its beats from the start, though the room has no history of beats yet:
// the line passes its unseen places without a slot (they are skipped) and
// admits one seen since the loss; the places before the margin, which fans
// held before the loss, count as live until a whole timeout of beats is in.
func testReseedMarginJudgedByBeats(t *testing.T, h Harness) {
	f := &fixture{t: t, s: h.New(t), room: roomName(t), ctx: t.Context()}
	f.init(waitingroom.Recall{
		Whole:      true,
		Counters:   waitingroom.Counters{Seq: 40, Serving: 30, Admitted: 30, Claimed: 30},
		MarginFrom: 35,
		LostAt:     t0,
	})
	if s := f.snap(at(0)); s.Margin != [2]uint64{35, 40} || !s.InMargin(35) || s.InMargin(40) || s.InMargin(34) {
		t.Fatalf("margin %v, want [35, 40)", s.Margin)
	}
	lim := liveLimits()
	f.beat(waitingroom.Beats{Places: []uint64{37}}, at(1), lim)
	res := f.join("after", at(1), lim) // key 40, behind the margin
	if res.Key != 40 {
		t.Fatalf("first key after the re-seed %d, want 40", res.Key)
	}
	f.advanceEach(2, 6, lim)
	s := f.snap(at(6))
	// 30-34 and 40 are live (no history to judge them); of the margin,
	// only 37 was seen.
	if s.Serving != 41 || s.Skipped != 4 || s.Admitted != 30+7 {
		t.Fatalf("after the line passed the margin: serving %d, skipped %d, admitted %d; want 41, 4 and 37", s.Serving, s.Skipped, s.Admitted)
	}
	if res := f.claim(visitor(37), 37, at(6), lim); res.Status != waitingroom.Claimed {
		t.Fatalf("claim of the margin's place seen since the loss: %v", res.Status)
	}
}
