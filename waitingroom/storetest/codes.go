package storetest

import (
	"errors"
	"testing"
	"time"

	"github.com/foyer-dev/foyer/waitingroom"
)

// codeTests check the store's access codes (waitingroom.CodeKeeper): batches
// stored all or none, uses counted once across handles, a single-use code
// raced by many redeemed once, and every try weighed on join_limit.
var codeTests = []suiteTest{
	{"CodesAddedAllOrNone", testCodesAllOrNone},
	{"CodeUsesCounted", testCodeUsesCounted},
	{"CodeFoundUnderAnyID", testCodeFoundUnderAnyID},
	{"SingleUseCodeRacedOnce", testSingleUseCodeRaced},
	{"CodeTriesWeighedOnJoinLimit", testCodeTriesWeighed},
	{"RedeemInUnknownRoom", testRedeemInUnknownRoom},
	{"CodeUseReturned", testCodeUseReturned},
}

func (f *fixture) addCodes(s waitingroom.Store, codes ...waitingroom.CodeEntry) {
	f.t.Helper()
	if err := s.AddCodes(f.ctx, f.room, codes); err != nil {
		f.t.Fatalf("AddCodes: %v", err)
	}
}

func (f *fixture) redeem(s waitingroom.Store, client string, now time.Time, lim waitingroom.Limits, ids ...string) waitingroom.CodeResult {
	f.t.Helper()
	res, err := s.RedeemCode(f.ctx, f.room, waitingroom.CodeAttempt{IDs: ids, Client: client}, now, lim)
	if err != nil {
		f.t.Fatalf("RedeemCode(%v): %v", ids, err)
	}
	return res
}

func (f *fixture) uses() map[string]waitingroom.CodeUse {
	f.t.Helper()
	list, err := f.s.CodeUses(f.ctx, f.room)
	if err != nil {
		f.t.Fatalf("CodeUses: %v", err)
	}
	m := make(map[string]waitingroom.CodeUse, len(list))
	for _, u := range list {
		m[u.ID] = u
	}
	return m
}

func code(id, lane string, n int) waitingroom.CodeEntry {
	return waitingroom.CodeEntry{ID: id, Lane: lane, MaxUses: n}
}

// testCodesAllOrNone: a batch with one code stored already stores none of
// its codes; the list says each code's lane, uses allowed and used, by lane.
func testCodesAllOrNone(t *testing.T, h Harness) {
	f := newFixture(t, h)
	f.addCodes(f.s, code("idA", "presale", 1), code("idB", "members", 3))
	err := f.s.AddCodes(f.ctx, f.room, []waitingroom.CodeEntry{code("idC", "presale", 1), code("idA", "presale", 2)})
	if !errors.Is(err, waitingroom.ErrCodeExists) {
		t.Fatalf("a batch repeating a stored code: %v, want ErrCodeExists", err)
	}
	list, err := f.s.CodeUses(f.ctx, f.room)
	if err != nil {
		t.Fatal(err)
	}
	want := []waitingroom.CodeUse{{CodeEntry: code("idB", "members", 3)}, {CodeEntry: code("idA", "presale", 1)}}
	if len(list) != 2 || list[0] != want[0] || list[1] != want[1] {
		t.Fatalf("codes = %+v, want %+v (idC not stored)", list, want)
	}
}

// testCodeUsesCounted: each use is counted through either handle, up to the
// code's uses; past them the code is used up, and a code never stored is
// wrong.
func testCodeUsesCounted(t *testing.T, h Harness) {
	f := newFixture(t, h)
	a, b := f.pair(h)
	lim := limits()
	f.addCodes(a, code("multi", "members", 3))
	for i, s := range []waitingroom.Store{a, b, a} {
		if res := f.redeem(s, "", at(float64(i)), lim, "multi"); res.Status != waitingroom.CodeAccepted || res.Lane != "members" {
			t.Fatalf("use %d: %+v, want accepted in members", i+1, res)
		}
	}
	if res := f.redeem(b, "", at(4), lim, "multi"); res.Status != waitingroom.CodeUsedUp || res.Lane != "" {
		t.Fatalf("fourth use: %+v, want used up, no lane", res)
	}
	if res := f.redeem(a, "", at(5), lim, "nope"); res.Status != waitingroom.CodeWrong || res.Lane != "" {
		t.Fatalf("unknown code: %+v, want wrong", res)
	}
	if u := f.uses()["multi"]; u.Used != 3 || u.MaxUses != 3 {
		t.Fatalf("uses = %+v, want 3 of 3", u)
	}
}

// testCodeFoundUnderAnyID: a try names the code's ID under each key of the
// ring; the one stored is used, and counted once.
func testCodeFoundUnderAnyID(t *testing.T, h Harness) {
	f := newFixture(t, h)
	f.addCodes(f.s, code("old-key-id", "presale", 2))
	if res := f.redeem(f.s, "", at(1), limits(), "current-key-id", "old-key-id"); res.Status != waitingroom.CodeAccepted {
		t.Fatalf("code under the previous key's ID: %+v", res)
	}
	if u := f.uses()["old-key-id"]; u.Used != 1 {
		t.Fatalf("uses = %+v, want 1", u)
	}
}

// testSingleUseCodeRaced: many tries of one single-use code at once, through
// two handles, give exactly one acceptance.
func testSingleUseCodeRaced(t *testing.T, h Harness) {
	f := newFixture(t, h)
	a, b := f.pair(h)
	f.addCodes(a, code("once", "presale", 1))
	const tries = 16
	results := make([]waitingroom.CodeResult, tries)
	errs := make([]error, tries)
	together(tries, a, b, func(i int, s waitingroom.Store) {
		results[i], errs[i] = s.RedeemCode(f.ctx, f.room, waitingroom.CodeAttempt{IDs: []string{"once"}}, at(1), limits())
	})
	accepted := 0
	for i, r := range results {
		if errs[i] != nil {
			t.Fatalf("try %d: %v", i, errs[i])
		}
		switch r.Status {
		case waitingroom.CodeAccepted:
			accepted++
		case waitingroom.CodeUsedUp:
		default:
			t.Fatalf("try %d: %+v", i, r)
		}
	}
	if accepted != 1 {
		t.Fatalf("%d tries accepted, want 1", accepted)
	}
	if u := f.uses()["once"]; u.Used != 1 {
		t.Fatalf("uses = %+v, want 1", u)
	}
}

// testCodeTriesWeighed: under join_limit 3/m every try, right or wrong,
// takes from the network's allowance, which joins share, on every handle;
// a try over it is refused without looking at the code (no use counted),
// and says when the next comes. Another network is not held back.
func testCodeTriesWeighed(t *testing.T, h Harness) {
	f, lim := limitedLine(t, h)
	a, b := f.pair(h)
	f.addCodes(a, code("good", "presale", 10))
	if res := f.redeem(a, netA, at(1), lim, "wrong"); res.Status != waitingroom.CodeWrong {
		t.Fatalf("wrong code: %+v", res)
	}
	if res := f.redeem(b, netA, at(1), lim, "good"); res.Status != waitingroom.CodeAccepted {
		t.Fatalf("right code: %+v", res)
	}
	if res := f.joinAs(a, waitingroom.Joiner{Visitor: newVisitor(), Client: netA}, at(1), lim); res.Refused != waitingroom.NotRefused {
		t.Fatalf("a join within the allowance: %+v", res)
	}
	res := f.redeem(b, netA, at(1), lim, "good")
	if res.Status != waitingroom.CodeLimited || res.RetryAfter != 20*time.Second {
		t.Fatalf("fourth try within the minute: %+v, want limited, retry after 20s", res)
	}
	if u := f.uses()["good"]; u.Used != 1 {
		t.Fatalf("uses = %+v, want 1: a limited try counts no use", u)
	}
	if res := f.redeem(a, netB, at(1), lim, "good"); res.Status != waitingroom.CodeAccepted {
		t.Fatalf("another network: %+v", res)
	}
	if res := f.redeem(a, netA, at(21), lim, "good"); res.Status != waitingroom.CodeAccepted {
		t.Fatalf("after the wait: %+v", res)
	}
}

// testRedeemInUnknownRoom: a try in a room the store has no record of fails
// with ErrNoRoom (the node re-seeds it), counting nothing.
func testRedeemInUnknownRoom(t *testing.T, h Harness) {
	f := newFixture(t, h)
	s := h.New(t)
	if err := s.AddCodes(f.ctx, "unknown-"+f.room, []waitingroom.CodeEntry{code("c", "presale", 1)}); err != nil {
		t.Fatal(err)
	}
	_, err := s.RedeemCode(f.ctx, "unknown-"+f.room, waitingroom.CodeAttempt{IDs: []string{"c"}}, at(1), limits())
	if !errors.Is(err, waitingroom.ErrNoRoom) {
		t.Fatalf("RedeemCode in an unknown room: %v, want ErrNoRoom", err)
	}
}

// testCodeUseReturned: a use given back (its place was not made) can be
// redeemed again, through either handle; giving back more uses than were
// taken never makes the count negative, nor lends the code extra uses.
func testCodeUseReturned(t *testing.T, h Harness) {
	f := newFixture(t, h)
	one, other := f.s, f.s
	if h.Pair != nil {
		one, other = h.Pair(t)
	}
	lim := limits()
	f.addCodes(one, code("once", "presale", 1))
	res := f.redeem(one, "", at(1), lim, "once")
	if res.Status != waitingroom.CodeAccepted || res.ID != "once" || res.Lane != "presale" {
		t.Fatalf("first redemption: %+v, want accepted under id once in presale", res)
	}
	if res := f.redeem(other, "", at(2), lim, "once"); res.Status != waitingroom.CodeUsedUp {
		t.Fatalf("second redemption: %v, want used up", res.Status)
	}
	for range 2 {
		if err := other.ReturnCodeUse(f.ctx, f.room, "once"); err != nil {
			t.Fatal(err)
		}
	}
	if u := f.uses()["once"]; u.Used != 0 {
		t.Fatalf("uses after giving back twice: %d, want 0", u.Used)
	}
	if res := f.redeem(other, "", at(3), lim, "once"); res.Status != waitingroom.CodeAccepted {
		t.Fatalf("redemption after the use came back: %v, want accepted", res.Status)
	}
	if res := f.redeem(one, "", at(4), lim, "once"); res.Status != waitingroom.CodeUsedUp {
		t.Fatalf("and again: %v, want used up (no extra use lent)", res.Status)
	}
	if err := one.ReturnCodeUse(f.ctx, f.room, "never-stored"); err != nil {
		t.Fatalf("giving back a use of a code never stored: %v", err)
	}
}
