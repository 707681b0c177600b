package storetest

import (
	"sync"
	"testing"
	"time"

	"github.com/foyer-dev/foyer/waitingroom"
)

// One session per visitor. A ticket may be copied to many clients; each copy
// that claims must be handed the one session of its visitor, with the same
// end, from whichever node, so that every pass of it carries the same id
// (waitingroom.SessionPassID of room, visitor and end) and one revocation
// refuses them all.

// testOneSessionPerVisitor: copies of one ticket claiming at once through two
// handles all get the same session; it takes one slot and one claim of its
// admission.
func testOneSessionPerVisitor(t *testing.T, h Harness) {
	f := newFixture(t, h)
	a, b := f.s, f.s
	if h.Pair != nil {
		a, b = h.Pair(t)
	}
	f.fill(5, t0)
	lim := limits()
	f.advance(at(1), lim) // admits places 0-4
	const copies = 16
	res := make([]waitingroom.ClaimResult, copies)
	var wg sync.WaitGroup
	for i := range copies {
		s := a
		if i%2 == 1 {
			s = b
		}
		wg.Go(func() {
			// Each copy asks a little later: the end must still be the first's.
			r, err := s.Claim(f.ctx, f.room, visitor(2), 2, at(2).Add(time.Duration(i)*time.Millisecond), lim)
			if err != nil {
				t.Error(err)
			}
			res[i] = r
		})
	}
	wg.Wait()
	var end time.Time
	for i, r := range res {
		if r.Status != waitingroom.Claimed {
			t.Fatalf("copy %d: %v, want claimed", i, r.Status)
		}
		if end.IsZero() {
			end = r.Expires
		}
		if !r.Expires.Equal(end) {
			t.Fatalf("copy %d was given a session until %v, another until %v: one visitor, one session", i, r.Expires, end)
		}
	}
	s := f.snap(at(3))
	if s.Active != 1 || s.Claimed != 1 || s.Pending != 4 {
		t.Fatalf("after %d claims of one ticket: active %d claimed %d pending %d, want 1, 1 and 4", copies, s.Active, s.Claimed, s.Pending)
	}
	// Later claims, through either handle, still name the same end.
	for i, s := range []waitingroom.Store{a, b} {
		r, err := s.Claim(f.ctx, f.room, visitor(2), 2, at(200), lim)
		if err != nil || r.Status != waitingroom.Claimed || !r.Expires.Equal(end) {
			t.Fatalf("claim through handle %d later: %+v %v, want the session until %v", i, r, err, end)
		}
	}
}

// testReleaseEndsTheSession: once the session is released, a claim with a
// copy of its ticket, through either handle, is refused as finished, and the
// revocation of its pass is recorded once for every node to read.
func testReleaseEndsTheSession(t *testing.T, h Harness) {
	f := newFixture(t, h)
	a, b := f.s, f.s
	if h.Pair != nil {
		a, b = h.Pair(t)
	}
	f.fill(3, t0)
	lim := limits()
	f.advance(at(1), lim)
	ses := f.claim(visitor(0), 0, at(2), lim)
	id := waitingroom.SessionPassID(f.room, visitor(0), ses.Expires)
	if err := a.Release(f.ctx, f.room, visitor(0), id, ses.Expires, at(3), lim); err != nil {
		t.Fatal(err)
	}
	for i, s := range []waitingroom.Store{a, b} {
		if r, err := s.Claim(f.ctx, f.room, visitor(0), 0, at(4), lim); err != nil || r.Status != waitingroom.Finished {
			t.Fatalf("claim with a copy of the ticket through handle %d after the release: %+v %v, want finished", i, r, err)
		}
	}
	snap, err := b.Snapshot(f.ctx, f.room, at(4), 0)
	if err != nil {
		t.Fatal(err)
	}
	if snap.Active != 0 || len(snap.Revocations) != 1 || snap.Revocations[0].PassID != id {
		t.Fatalf("after the release: active %d revocations %+v, want 0 and the session's pass %s", snap.Active, snap.Revocations, id)
	}
}

// testSessionEndSurvivesLoss: after the store lost its data, a session
// announced back from its pass (whose end is kept to the second) is the one a
// copy of the ticket claims, and its pass id is the one the first pass had.
func testSessionEndSurvivesLoss(t *testing.T, h Harness) {
	if h.Wipe == nil {
		t.Skip("backend cannot lose its data")
	}
	f := newFixture(t, h)
	f.fill(3, t0)
	lim := limits()
	f.advance(at(1), lim)
	ses := f.claim(visitor(1), 1, at(2.25), lim) // ends at a fraction of a second
	id := waitingroom.SessionPassID(f.room, visitor(1), ses.Expires)
	h.Wipe(t, f.s, f.room)
	passEnd := ses.Expires.Truncate(time.Second) // a JWT's "exp"
	f.init(waitingroom.Seed{
		Whole:     true,
		Counters:  waitingroom.Counters{Seq: 3, Serving: 3, Admitted: 3, Claimed: 1},
		Forgotten: 3,
		Sessions:  []waitingroom.HeldSession{{Visitor: visitor(1), Until: passEnd, Forget: passEnd.Add(lim.Retention)}},
	})
	r := f.claim(visitor(1), 1, at(5), lim)
	if r.Status != waitingroom.Claimed || r.Expires.Unix() != ses.Expires.Unix() {
		t.Fatalf("claim after the loss: %+v, want the announced session until %v", r, passEnd)
	}
	if got := waitingroom.SessionPassID(f.room, visitor(1), r.Expires); got != id {
		t.Fatalf("pass id after the loss %s, before %s", got, id)
	}
	if s := f.snap(at(5)); s.Active != 1 {
		t.Fatalf("%d sessions after the copy claimed, want the one announced", s.Active)
	}
}
