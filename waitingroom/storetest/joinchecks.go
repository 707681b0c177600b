package storetest

import (
	"errors"
	"testing"
	"time"

	"github.com/foyer-dev/foyer/waitingroom"
)

// joinCheckTests check what a join is weighed by before its place is made
// (waitingroom.Joiner): join_limit per client network and one place per seed,
// counted for every handle on the store, in the join's own call.
var joinCheckTests = []suiteTest{
	{"JoinLimitAcrossHandles", testJoinLimitAcrossHandles},
	{"JoinLimitWithinABatch", testJoinLimitWithinABatch},
	{"SeedBuysOnePlace", testSeedBuysOnePlace},
	{"RefusedJoinSpendsNothing", testRefusedJoinSpendsNothing},
	{"SettlingSpendsNoAllowance", testSettlingSpendsNoAllowance},
	{"AccountJoinWeighed", testAccountJoinWeighed},
}

const (
	netA = "203.0.113.7"
	netB = "2001:db8:1:2::/64"
)

// limitedLine is a room where newcomers wait (place 0 holds the only slot)
// under join_limit 3/m: a place every 20 s, 3 at once.
func limitedLine(t *testing.T, h Harness) (*fixture, waitingroom.Limits) {
	f, lim := waitingLine(t, h)
	lim.JoinLimit = waitingroom.JoinLimit{N: 3, Per: time.Minute}
	return f, lim
}

// joinAs joins one joiner through s and fails the test on an error.
func (f *fixture) joinAs(s waitingroom.Store, j waitingroom.Joiner, now time.Time, lim waitingroom.Limits) waitingroom.JoinResult {
	f.t.Helper()
	res, err := s.JoinMany(f.ctx, f.room, []waitingroom.Joiner{j}, now, lim)
	if err != nil {
		f.t.Fatalf("JoinMany(%+v): %v", j, err)
	}
	return res[0]
}

func refusedJoin(res waitingroom.JoinResult, why waitingroom.Refusal) bool {
	return res.Refused == why && res.Key == 0 && !res.Admitted
}

// testJoinLimitAcrossHandles: one network joining through two handles (two
// nodes) gets its burst once, not once per handle; a refusal gives no key
// and says when the next place comes; another network is not held back.
func testJoinLimitAcrossHandles(t *testing.T, h Harness) {
	f, lim := limitedLine(t, h)
	a, b := f.pair(h)
	handles := []waitingroom.Store{a, b}
	placed := 0
	for i := range 6 {
		res := f.joinAs(handles[i%2], waitingroom.Joiner{Visitor: visitor(100 + i), Client: netA}, at(1), lim)
		switch {
		case res.Refused == waitingroom.NotRefused:
			if want := uint64(1 + placed); res.Key != want {
				t.Fatalf("join %d: key %d, want %d", i, res.Key, want)
			}
			placed++
		case refusedJoin(res, waitingroom.RefusedJoinLimit):
			if res.RetryAfter != 20*time.Second {
				t.Fatalf("join %d refused, next place in %v, want 20s", i, res.RetryAfter)
			}
		default:
			t.Fatalf("join %d: %+v", i, res)
		}
	}
	if placed != 3 {
		t.Fatalf("6 joins of one network through two handles: %d places, want its burst of 3", placed)
	}
	if s := f.snap(at(1)); s.Seq != 4 {
		t.Fatalf("seq %d, want 4: a refused join takes no key", s.Seq)
	}
	if res := f.joinAs(b, waitingroom.Joiner{Visitor: visitor(200), Client: netB}, at(1), lim); res.Refused != waitingroom.NotRefused || res.Key != 4 {
		t.Fatalf("another network: %+v, want place 4", res)
	}
	// 15 s on: still 5 s short of the next place.
	if res := f.joinAs(a, waitingroom.Joiner{Visitor: visitor(201), Client: netA}, at(16), lim); !refusedJoin(res, waitingroom.RefusedJoinLimit) || res.RetryAfter != 5*time.Second {
		t.Fatalf("at 16s: %+v, want refused for 5s more", res)
	}
	if res := f.joinAs(b, waitingroom.Joiner{Visitor: visitor(202), Client: netA}, at(21), lim); res.Refused != waitingroom.NotRefused || res.Key != 5 {
		t.Fatalf("at 21s: %+v, want place 5", res)
	}
	if res := f.joinAs(a, waitingroom.Joiner{Visitor: visitor(203), Client: netA}, at(21), lim); !refusedJoin(res, waitingroom.RefusedJoinLimit) {
		t.Fatalf("a second at 21s: %+v, want refused", res)
	}
	// Unweighed joins (Client "", or no limit) are never refused.
	open := lim
	open.JoinLimit = waitingroom.JoinLimit{}
	if res := f.joinAs(a, waitingroom.Joiner{Visitor: visitor(204), Client: netA}, at(21), open); res.Refused != waitingroom.NotRefused {
		t.Fatalf("with no limit: %+v", res)
	}
	if res := f.joinAs(a, waitingroom.Joiner{Visitor: visitor(205)}, at(21), lim); res.Refused != waitingroom.NotRefused {
		t.Fatalf("no network: %+v", res)
	}
}

// testJoinLimitWithinABatch: a batch is weighed joiner by joiner, in order;
// the refused take no key, the others' keys run on in order, and the first
// ones are admitted on the spot as they would be alone.
func testJoinLimitWithinABatch(t *testing.T, h Harness) {
	f := newFixture(t, h)
	lim := limits()
	lim.JoinLimit = waitingroom.JoinLimit{N: 2, Per: time.Minute}
	f.advance(at(1), lim) // a second's rate budget: ten may walk in
	batch := []waitingroom.Joiner{
		{Visitor: "a1", Client: netA}, {Visitor: "a2", Client: netA}, {Visitor: "b1", Client: netB},
		{Visitor: "a3", Client: netA}, {Visitor: "x", Seed: "seed-x", SeedUntil: at(300)},
		{Visitor: "x2", Seed: "seed-x", SeedUntil: at(300)}, {Visitor: "a4", Client: netA}, {Visitor: "plain"},
	}
	res, err := f.s.JoinMany(f.ctx, f.room, batch, at(1), lim)
	if err != nil {
		t.Fatal(err)
	}
	want := []struct {
		why waitingroom.Refusal
		key uint64
	}{{0, 0}, {0, 1}, {0, 2}, {waitingroom.RefusedJoinLimit, 0}, {0, 3},
		{waitingroom.RefusedSeedSpent, 0}, {waitingroom.RefusedJoinLimit, 0}, {0, 4}}
	for i, w := range want {
		r := res[i]
		if r.Refused != w.why || r.Key != w.key || r.Admitted != (w.why == 0) {
			t.Fatalf("joiner %d (%+v): %+v, want %s with key %d", i, batch[i], r, w.why, w.key)
		}
	}
	if res[3].RetryAfter != 30*time.Second || res[6].RetryAfter != 30*time.Second {
		t.Fatalf("refused for %v and %v, want 30s", res[3].RetryAfter, res[6].RetryAfter)
	}
	if s := f.snap(at(1)); s.Seq != 5 || s.Admitted != 5 || s.Active != 5 {
		t.Fatalf("seq %d admitted %d active %d, want 5 each", s.Seq, s.Admitted, s.Active)
	}
}

// testSeedBuysOnePlace: a seed makes one place, through whichever handle,
// for as long as it is to be remembered.
func testSeedBuysOnePlace(t *testing.T, h Harness) {
	f, lim := waitingLine(t, h)
	a, b := f.pair(h)
	seed := waitingroom.Joiner{Visitor: "first", Seed: "c2VlZC1vbmU", SeedUntil: at(330)}
	if res := f.joinAs(a, seed, at(1), lim); res.Refused != waitingroom.NotRefused || res.Key != 1 {
		t.Fatalf("first answer: %+v, want place 1", res)
	}
	for i, s := range []waitingroom.Store{b, a, b} {
		again := seed
		again.Visitor = visitor(i)
		if res := f.joinAs(s, again, at(float64(2+100*i)), lim); !refusedJoin(res, waitingroom.RefusedSeedSpent) {
			t.Fatalf("answer %d again: %+v, want refused as spent", i+2, res)
		}
	}
	other := waitingroom.Joiner{Visitor: "other", Seed: "c2VlZC10d28", SeedUntil: at(330)}
	if res := f.joinAs(b, other, at(3), lim); res.Refused != waitingroom.NotRefused || res.Key != 2 {
		t.Fatalf("another seed: %+v, want place 2", res)
	}
	if s := f.snap(at(3)); s.Seq != 3 {
		t.Fatalf("seq %d, want 3", s.Seq)
	}
}

// testRefusedJoinSpendsNothing: a joiner refused by join_limit leaves its
// seed unspent, so the same answer makes a place once the network may.
func testRefusedJoinSpendsNothing(t *testing.T, h Harness) {
	f, lim := limitedLine(t, h)
	lim.JoinLimit.N, lim.JoinLimit.Burst = 1, 1 // one a minute
	if res := f.joinAs(f.s, waitingroom.Joiner{Visitor: "v1", Client: netA}, at(1), lim); res.Refused != waitingroom.NotRefused {
		t.Fatalf("first: %+v", res)
	}
	j := waitingroom.Joiner{Visitor: "v2", Client: netA, Seed: "c2VlZC10aHJlZQ", SeedUntil: at(330)}
	res := f.joinAs(f.s, j, at(2), lim)
	if !refusedJoin(res, waitingroom.RefusedJoinLimit) || res.RetryAfter != 59*time.Second {
		t.Fatalf("over the limit with a seed: %+v, want refused for 59s", res)
	}
	if res := f.joinAs(f.s, j, at(61), lim); res.Refused != waitingroom.NotRefused || res.Key != 2 {
		t.Fatalf("the same answer once allowed: %+v, want place 2", res)
	}
}

// testSettlingSpendsNoAllowance: a join refused because the room settles
// (ErrSettling) takes none of the network's allowance and spends no seed.
func testSettlingSpendsNoAllowance(t *testing.T, h Harness) {
	f := &fixture{t: t, s: h.New(t), room: roomName(t), ctx: t.Context()}
	f.init(waitingroom.Recall{SettleUntil: at(10)})
	lim := limits()
	lim.Open = false
	lim.JoinLimit = waitingroom.JoinLimit{N: 2, Per: time.Hour}
	for i := range 5 {
		j := []waitingroom.Joiner{{Visitor: visitor(i), Client: netA, Seed: "c2VlZC1mb3Vy", SeedUntil: at(330)}}
		if _, err := f.s.JoinMany(f.ctx, f.room, j, at(5), lim); !errors.Is(err, waitingroom.ErrSettling) {
			t.Fatalf("join %d while settling: %v, want ErrSettling", i, err)
		}
	}
	if res := f.joinAs(f.s, waitingroom.Joiner{Visitor: "s", Client: netA, Seed: "c2VlZC1mb3Vy", SeedUntil: at(330)}, at(11), lim); res.Refused != waitingroom.NotRefused {
		t.Fatalf("after settling, with the seed tried while it settled: %+v, want a place", res)
	}
	if res := f.joinAs(f.s, waitingroom.Joiner{Visitor: "t", Client: netA}, at(11), lim); res.Refused != waitingroom.NotRefused {
		t.Fatalf("second after settling: %+v, want the rest of the burst", res)
	}
	if res := f.joinAs(f.s, waitingroom.Joiner{Visitor: "u", Client: netA}, at(11), lim); !refusedJoin(res, waitingroom.RefusedJoinLimit) {
		t.Fatalf("third after settling: %+v, want refused", res)
	}
}

// testAccountJoinWeighed: an account's new place is weighed as a join is,
// and a refused one records nothing; the place an account holds already is
// returned unweighed.
func testAccountJoinWeighed(t *testing.T, h Harness) {
	f, lim := limitedLine(t, h)
	lim.JoinLimit.N, lim.JoinLimit.Burst = 1, 1
	join := func(name string, j waitingroom.Joiner, now time.Time) waitingroom.AccountPlace {
		t.Helper()
		res, err := f.s.JoinAccount(f.ctx, f.room, waitingroom.AccountJoin{Account: waitingroom.NewAccountKey(f.room, name), Joiner: j}, now, lim)
		if err != nil {
			t.Fatal(err)
		}
		return res
	}
	alice := join("alice", waitingroom.Joiner{Visitor: newVisitor(), Client: netA, Seed: "c2VlZC1maXZl", SeedUntil: at(330)}, at(1))
	if alice.Refused != waitingroom.NotRefused || alice.Existing || alice.Key != 1 {
		t.Fatalf("alice: %+v, want new place 1", alice)
	}
	if again := join("alice", waitingroom.Joiner{Visitor: newVisitor(), Client: netA}, at(2)); again.Refused != waitingroom.NotRefused || !again.Existing || again.Key != 1 {
		t.Fatalf("alice again, over the limit: %+v, want her place 1 as it is", again)
	}
	bob := join("bob", waitingroom.Joiner{Visitor: newVisitor(), Client: netA}, at(2))
	if bob.Refused != waitingroom.RefusedJoinLimit || bob.Existing || bob.Key != 0 || bob.RetryAfter != 59*time.Second {
		t.Fatalf("bob, over the limit: %+v, want refused for 59s", bob)
	}
	carol := join("carol", waitingroom.Joiner{Visitor: newVisitor(), Client: netB, Seed: "c2VlZC1maXZl", SeedUntil: at(330)}, at(3))
	if carol.Refused != waitingroom.RefusedSeedSpent || carol.Key != 0 {
		t.Fatalf("carol with alice's seed: %+v, want refused as spent", carol)
	}
	bob = join("bob", waitingroom.Joiner{Visitor: newVisitor(), Client: netA}, at(61))
	if bob.Refused != waitingroom.NotRefused || bob.Existing || bob.Key != 2 {
		t.Fatalf("bob once allowed: %+v, want new place 2 (the refusal recorded nothing)", bob)
	}
}
