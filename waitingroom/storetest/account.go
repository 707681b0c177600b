package storetest

import (
	"errors"
	"sync"
	"testing"
	"time"

	"github.com/foyer-dev/foyer/waitingroom"
)

// accountTests check one place per account (waitingroom.Store.JoinAccount).
var accountTests = []suiteTest{
	{"AccountHoldsOnePlace", testAccountOnePlace},
	{"AccountSecondBrowserSharesSession", testAccountSharesSession},
	{"AccountSpentPlaceRejoins", testAccountSpent},
	{"AccountPlaceLastsTicketLifetime", testAccountFresh},
	{"AccountSettlingHoldsNewcomers", testAccountSettling},
	{"AccountUnknownRoom", testAccountUnknownRoom},
	{"AccountWipedJoinsAfterEarlierTickets", testAccountWiped},
	{"ConcurrentAccountJoinsOnePlace", testAccountConcurrent},
}

func (f *fixture) account(name string, v string, spent *uint64, now time.Time, lim waitingroom.Limits) waitingroom.AccountPlace {
	f.t.Helper()
	req := waitingroom.AccountJoin{Account: waitingroom.NewAccountKey(f.room, name), Joiner: waitingroom.Joiner{Visitor: v}}
	if spent != nil {
		req.Spent, req.HasSpent = *spent, true
	}
	res, err := f.s.JoinAccount(f.ctx, f.room, req, now, lim)
	if err != nil {
		f.t.Fatalf("JoinAccount(%s): %v", name, err)
	}
	return res
}

func newVisitor() string { return waitingroom.NewVisitorID().String() }

// waitingLine makes a room where newcomers wait: place 0 walks in and holds
// the only slot.
func waitingLine(t *testing.T, h Harness) (*fixture, waitingroom.Limits) {
	f := newFixture(t, h)
	lim := limits()
	lim.Cap = 1
	f.join(visitor(0), t0, lim)
	return f, lim
}

func testAccountOnePlace(t *testing.T, h Harness) {
	f, lim := waitingLine(t, h)
	v1, v2 := newVisitor(), newVisitor()
	first := f.account("alice", v1, nil, at(1), lim)
	if first.Existing || first.Key != 1 || first.Admitted || first.Visitor.String() != v1 {
		t.Fatalf("alice's first join: %+v, want a new place 1 held by %s", first, v1)
	}
	if !first.Joined.Equal(at(1).Truncate(time.Second)) {
		t.Fatalf("joined %v, want %v", first.Joined, at(1))
	}
	again := f.account("alice", v2, nil, at(5), lim)
	if !again.Existing || again.Key != first.Key || again.Visitor != first.Visitor || !again.Joined.Equal(first.Joined) {
		t.Fatalf("alice's second browser: %+v, want her place %d held by %s since %v", again, first.Key, v1, first.Joined)
	}
	bob := f.account("bob", newVisitor(), nil, at(6), lim)
	if bob.Existing || bob.Key != 2 {
		t.Fatalf("bob: %+v, want a new place 2 (alice's second browser took no key)", bob)
	}
	if anon := f.join(newVisitor(), at(7), lim); anon.Key != 3 {
		t.Fatalf("a visitor without an account: key %d, want 3", anon.Key)
	}
}

func testAccountSharesSession(t *testing.T, h Harness) {
	f := newFixture(t, h)
	lim := limits()
	v1 := newVisitor()
	first := f.account("alice", v1, nil, t0, lim)
	if !first.Admitted || first.Existing {
		t.Fatalf("alice in an empty room: %+v, want admitted on the spot", first)
	}
	again := f.account("alice", newVisitor(), nil, at(2), lim)
	if !again.Existing || again.Admitted || again.Key != first.Key || again.Visitor.String() != v1 {
		t.Fatalf("alice's second browser: %+v, want her admitted place, not a new admission", again)
	}
	// The second browser claims as the first one's visitor: the same session.
	if c := f.claim(again.Visitor.String(), again.Key, at(3), lim); c.Status != waitingroom.Claimed || !c.Expires.Equal(first.Expires) {
		t.Fatalf("second browser's claim: %+v, want the live session until %v", c, first.Expires)
	}
	if s := f.snap(at(3)); s.Active != 1 || s.Seq != 1 {
		t.Fatalf("after two browsers: %d active, seq %d; want 1 and 1", s.Active, s.Seq)
	}
}

func testAccountSpent(t *testing.T, h Harness) {
	f, lim := waitingLine(t, h)
	first := f.account("alice", newVisitor(), nil, at(1), lim)
	// An old ticket of another place (say from before she signed in) does
	// not spend her place.
	other := first.Key + 100
	if p := f.account("alice", newVisitor(), &other, at(2), lim); !p.Existing || p.Key != first.Key {
		t.Fatalf("with a ticket of another place: %+v, want her place %d", p, first.Key)
	}
	// Her ticket for the place is spent (session over, or turn passed): she
	// joins anew, at the back, as a new visitor.
	v := newVisitor()
	next := f.account("alice", v, &first.Key, at(3), lim)
	if next.Existing || next.Key <= first.Key || next.Visitor.String() != v {
		t.Fatalf("after her place was spent: %+v, want a new place after %d held by %s", next, first.Key, v)
	}
	// Her other browser, still holding the spent place, finds the new one.
	if p := f.account("alice", newVisitor(), &first.Key, at(4), lim); !p.Existing || p.Key != next.Key || p.Visitor != next.Visitor {
		t.Fatalf("other browser with the spent ticket: %+v, want the new place %d", p, next.Key)
	}
}

func testAccountFresh(t *testing.T, h Harness) {
	f, lim := waitingLine(t, h)
	lim.Retention = time.Hour
	first := f.account("alice", newVisitor(), nil, at(1), lim)
	if p := f.account("alice", newVisitor(), nil, at(1).Add(time.Hour-time.Second), lim); !p.Existing || p.Key != first.Key {
		t.Fatalf("a second before the ticket lifetime: %+v, want her place", p)
	}
	// A place is the account's for a ticket's lifetime: no longer can it be
	// banked for the account's later browsers.
	if p := f.account("alice", newVisitor(), nil, at(1).Add(time.Hour), lim); p.Existing || p.Key <= first.Key {
		t.Fatalf("a ticket lifetime later: %+v, want a new place", p)
	}
}

func testAccountSettling(t *testing.T, h Harness) {
	f := newFixture(t, h)
	f.room += "-settling"
	f.init(waitingroom.Recall{Counters: waitingroom.Counters{Seq: 10, Serving: 5}, SettleUntil: at(10)})
	req := waitingroom.AccountJoin{Account: waitingroom.NewAccountKey(f.room, "alice"), Joiner: waitingroom.Joiner{Visitor: newVisitor()}}
	if _, err := f.s.JoinAccount(f.ctx, f.room, req, at(5), limits()); !errors.Is(err, waitingroom.ErrSettling) {
		t.Fatalf("account join while settling: %v, want ErrSettling", err)
	}
	if p := f.account("alice", newVisitor(), nil, at(10), limits()); p.Existing || p.Key != 10 {
		t.Fatalf("after settling: %+v, want a new place 10 (none handed out meanwhile)", p)
	}
}

func testAccountUnknownRoom(t *testing.T, h Harness) {
	s := h.New(t)
	room := roomName(t)
	req := waitingroom.AccountJoin{Account: waitingroom.NewAccountKey(room, "alice"), Joiner: waitingroom.Joiner{Visitor: newVisitor()}}
	if _, err := s.JoinAccount(t.Context(), room, req, t0, limits()); !errors.Is(err, waitingroom.ErrNoRoom) {
		t.Fatalf("account join in an unknown room: %v, want ErrNoRoom", err)
	}
}

// testAccountWiped: a store that lost its data lost the accounts' places too
// (docs/configuration.md, "The account block"): the account gets a new place, and like every
// join after a loss it goes behind every ticket issued before it.
func testAccountWiped(t *testing.T, h Harness) {
	needsWipe(t, h)
	f, lim := waitingLine(t, h)
	first := f.account("alice", newVisitor(), nil, at(1), lim)
	h.Wipe(t, f.s, f.room)
	f.init(waitingroom.Recall{Counters: waitingroom.Counters{Seq: first.Key + 1}, Whole: true})
	if p := f.account("alice", newVisitor(), nil, at(2), lim); p.Existing || p.Key <= first.Key {
		t.Fatalf("after the wipe: %+v, want a new place behind %d", p, first.Key)
	}
}

// testAccountConcurrent: browsers of one account joining at once get one
// place between them, and take one key.
func testAccountConcurrent(t *testing.T, h Harness) {
	f, lim := waitingLine(t, h)
	const browsers = 16
	got := make([]waitingroom.AccountPlace, browsers)
	errs := make([]error, browsers)
	var wg sync.WaitGroup
	for i := range browsers {
		wg.Go(func() {
			req := waitingroom.AccountJoin{Account: waitingroom.NewAccountKey(f.room, "alice"), Joiner: waitingroom.Joiner{Visitor: newVisitor()}}
			got[i], errs[i] = f.s.JoinAccount(f.ctx, f.room, req, at(1), lim)
		})
	}
	wg.Wait()
	news := 0
	for i := range browsers {
		if errs[i] != nil {
			t.Fatalf("browser %d: %v", i, errs[i])
		}
		if got[i].Key != got[0].Key || got[i].Visitor != got[0].Visitor {
			t.Fatalf("browser %d: place %d of %s; browser 0: %d of %s", i, got[i].Key, got[i].Visitor, got[0].Key, got[0].Visitor)
		}
		if !got[i].Existing {
			news++
		}
	}
	if news != 1 {
		t.Fatalf("%d browsers took a new place, want 1", news)
	}
	if next := f.join(newVisitor(), at(2), lim); next.Key != got[0].Key+1 {
		t.Fatalf("next key %d, want %d: the account took more than one", next.Key, got[0].Key+1)
	}
}
