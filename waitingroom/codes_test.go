package waitingroom_test

import (
	"context"
	"encoding/json"
	"errors"
	"net/netip"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/foyer-dev/foyer/waitingroom"
)

// laneSpy is a store that remembers the joiners it was asked to place.
type laneSpy struct {
	waitingroom.Store
	mu      sync.Mutex
	joiners []waitingroom.Joiner
}

func (s *laneSpy) JoinMany(ctx context.Context, room string, js []waitingroom.Joiner, now time.Time, lim waitingroom.Limits) ([]waitingroom.JoinResult, error) {
	s.mu.Lock()
	s.joiners = append(s.joiners, js...)
	s.mu.Unlock()
	return s.Store.JoinMany(ctx, room, js, now, lim)
}

// codeRoom is a room whose codes are for presale and members, with a place
// taken so that newcomers wait, and the codes of batch added.
func codeRoom(t *testing.T, s waitingroom.Settings, batch ...waitingroom.NewCode) (*roomEnv, *waitingroom.Room, *laneSpy) {
	t.Helper()
	e := newEnv(t)
	spy := &laneSpy{Store: e.store}
	e.store = spy
	if !s.Lanes.On() {
		s.Lanes = mustLanes(t, "presale=1 members=1")
	}
	s.TotalActiveUsers, s.NewUsersPerMinute = 1, 60
	r := e.node("codes", s)
	if len(batch) > 0 {
		if _, err := r.AddCodes(e.ctx, batch, 1); err != nil {
			t.Fatal(err)
		}
	}
	return e, r, spy
}

var codeFan = netip.MustParseAddr("198.51.100.7")

func (e *roomEnv) withCode(r *waitingroom.Room, code, ticket string) (waitingroom.Decision, error) {
	return r.Admit(e.ctx, waitingroom.Arrival{Kind: waitingroom.RequestPage, Client: codeFan, Code: code, Ticket: ticket})
}

func usesOf(t *testing.T, e *roomEnv, r *waitingroom.Room) map[string]int {
	t.Helper()
	list, err := r.CodeUses(e.ctx)
	if err != nil {
		t.Fatal(err)
	}
	m := map[string]int{}
	for _, u := range list {
		m[u.Lane] += u.Used
	}
	return m
}

// TestCodeJoinsItsLane: a code typed in either case, with spaces, makes a
// place whose Joiner carries the code's lane to the store's join, and counts
// one use; the batch is in the audit trail by lane and count, never a code.
func TestCodeJoinsItsLane(t *testing.T) {
	e, r, spy := codeRoom(t, waitingroom.Settings{},
		waitingroom.NewCode{Code: "ABCD-1234", Lane: "presale", MaxUses: 2},
		waitingroom.NewCode{Code: "MEMBER-77", Lane: "members", MaxUses: 1})
	d, err := e.withCode(r, "  abcd-1234 ", "")
	if err != nil {
		t.Fatal(err)
	}
	if d.Ticket.Room == "" || d.Transition.Event != waitingroom.EventCodeAccepted || d.Transition.To != waitingroom.TicketWaiting {
		t.Fatalf("decision %+v, want a place on code accepted", d)
	}
	last := spy.joiners[len(spy.joiners)-1]
	if last.Lane != "presale" || last.Visitor != d.Ticket.Visitor.String() {
		t.Fatalf("the store was asked to join %+v, want the ticket's visitor in lane presale", last)
	}
	if u := usesOf(t, e, r); u["presale"] != 1 || u["members"] != 0 {
		t.Fatalf("uses %v, want one in presale", u)
	}
	trail, err := r.AuditTrail(e.ctx, 0, 10)
	if err != nil || len(trail) != 1 {
		t.Fatalf("audit trail %+v %v, want the batch", trail, err)
	}
	entry := trail[0]
	if entry.Action != waitingroom.AuditCodes || entry.Summary != "batch of 1 code for lane members; batch of 1 code for lane presale" {
		t.Fatalf("audit entry %+v", entry)
	}
	raw, _ := json.Marshal(trail)
	for _, code := range []string{"ABCD", "abcd", "MEMBER-77"} {
		if strings.Contains(string(raw), code) {
			t.Fatalf("the audit trail names a code: %s", raw)
		}
	}
}

// TestSingleUseCodeGivesOnePlace: the second try of a single-use code is
// refused as used up, with no place and no cookie, and a wrong code as
// wrong: neither says which lane any code is for.
func TestSingleUseCodeGivesOnePlace(t *testing.T) {
	e, r, _ := codeRoom(t, waitingroom.Settings{}, waitingroom.NewCode{Code: "ONCE-ONLY", Lane: "presale", MaxUses: 1})
	if _, err := e.withCode(r, "once-only", ""); err != nil {
		t.Fatal(err)
	}
	for code, want := range map[string]waitingroom.CodeStatus{"ONCE-ONLY": waitingroom.CodeUsedUp, "NOPE-0000": waitingroom.CodeWrong} {
		d, err := e.withCode(r, code, "")
		var ce *waitingroom.CodeRefusedError
		if !errors.As(err, &ce) || ce.Status != want || !errors.Is(err, waitingroom.ErrCodeRefused) || d.SetTicket {
			t.Fatalf("%s: %+v %v, want refused as %s", code, d, err, want)
		}
		if strings.Contains(err.Error(), "presale") || strings.Contains(err.Error(), code) {
			t.Fatalf("the refusal %q names a lane or the code", err)
		}
	}
	st := r.CodeAttempts()
	if st.Accepted.Load() != 1 || st.UsedUp.Load() != 1 || st.Wrong.Load() != 1 {
		t.Fatalf("attempts: accepted %d used up %d wrong %d", st.Accepted.Load(), st.UsedUp.Load(), st.Wrong.Load())
	}
	for _, bad := range []string{"", "   ", "ab", "no spaces in codes", strings.Repeat("A", 65)} {
		if _, err := e.withCode(r, bad, ""); err == nil && bad != "" {
			t.Fatalf("%q: accepted", bad)
		} else if bad != "" && !errors.Is(err, waitingroom.ErrCodeEmpty) && !errors.Is(err, waitingroom.ErrCodeInvalid) {
			t.Fatalf("%q: %v, want empty or invalid", bad, err)
		}
	}
}

// TestCodeWithAPlaceIsNotUsed: a fan who holds a place and sends a code
// (a reload of a ?code= link, say) keeps their place, and the code its use.
func TestCodeWithAPlaceIsNotUsed(t *testing.T) {
	e, r, _ := codeRoom(t, waitingroom.Settings{}, waitingroom.NewCode{Code: "KEEP-MINE", Lane: "members", MaxUses: 5})
	if _, err := e.withCode(r, "", ""); err != nil { // someone else, taking the only slot
		t.Fatal(err)
	}
	first, err := e.withCode(r, "KEEP-MINE", "")
	if err != nil || first.Status.State != waitingroom.StateQueued {
		t.Fatalf("with a code: %+v %v, want a place in line", first, err)
	}
	again, err := e.withCode(r, "KEEP-MINE", r.SealTicket(first.Ticket))
	if err != nil {
		t.Fatal(err)
	}
	if again.Ticket.Key != first.Ticket.Key || again.Ticket.Visitor != first.Ticket.Visitor ||
		again.Transition.From != waitingroom.TicketWaiting || again.Transition.Event != waitingroom.EventCode {
		t.Fatalf("the fan's place changed: %+v (%v), was %+v", again.Ticket, again.Transition, first.Ticket)
	}
	if u := usesOf(t, e, r); u["members"] != 1 {
		t.Fatalf("uses %v, want the one that made the place", u)
	}
}

// failingJoins is a store whose next joins fail, as a store that went away
// between a code's redemption and the place would.
type failingJoins struct {
	waitingroom.Store
	fail atomic.Int32
}

func (s *failingJoins) JoinMany(ctx context.Context, room string, js []waitingroom.Joiner, now time.Time, lim waitingroom.Limits) ([]waitingroom.JoinResult, error) {
	if s.fail.Add(-1) >= 0 {
		return nil, errors.New("connection reset")
	}
	return s.Store.JoinMany(ctx, room, js, now, lim)
}

// TestCodeUseReturnedWhenNoPlaceIsMade: a single-use code whose use was
// counted for a fan whose place the store then failed to make is given
// back: the fan's retry with the same code gets the place, and the code is
// then used once.
func TestCodeUseReturnedWhenNoPlaceIsMade(t *testing.T) {
	e := newEnv(t)
	store := &failingJoins{Store: e.store}
	e.store = store
	r := e.node("codes", waitingroom.Settings{Lanes: mustLanes(t, "presale=1"), TotalActiveUsers: 1, NewUsersPerMinute: 60})
	if _, err := r.AddCodes(e.ctx, []waitingroom.NewCode{{Code: "ONLY-ONCE", Lane: "presale", MaxUses: 1}}, 1); err != nil {
		t.Fatal(err)
	}
	store.fail.Store(1)
	if d, err := e.withCode(r, "ONLY-ONCE", ""); err == nil || d.SetTicket {
		t.Fatalf("with the store failing the join: %+v %v, want an error and no place", d, err)
	}
	if u := usesOf(t, e, r); u["presale"] != 0 {
		t.Fatalf("uses after the failed join: %v, want the use given back", u)
	}
	if n := r.CodeAttempts().Returned.Load(); n != 1 {
		t.Fatalf("%d attempts counted as returned, want 1", n)
	}
	// The store answers again: the node's next refresh sees it.
	if err := r.Tick(e.ctx); err != nil {
		t.Fatal(err)
	}
	d, err := e.withCode(r, "ONLY-ONCE", "")
	if err != nil || !d.SetTicket {
		t.Fatalf("the retry: %+v %v, want a place", d.Status, err)
	}
	if u := usesOf(t, e, r); u["presale"] != 1 {
		t.Fatalf("uses after the retry: %v, want 1", u)
	}
}

// TestCodesRequired: an invite-only room gives a newcomer without a code no
// place and asks for one; with a code, the fan gets their place. When a
// presale phase requires codes, the page says when the sale opens to
// everyone (the phase's end), and at that instant newcomers get places.
func TestCodesRequired(t *testing.T) {
	e, r, _ := codeRoom(t, waitingroom.Settings{CodesRequired: true}, waitingroom.NewCode{Code: "INVITED1", Lane: "presale", MaxUses: 1})
	d, err := e.withCode(r, "", "")
	if err != nil {
		t.Fatal(err)
	}
	if d.Status.State != waitingroom.StateCodeRequired || d.SetTicket || d.Pass != "" || d.Status.OpensAt != nil ||
		d.Transition.Event != waitingroom.EventCodeRequired || d.Transition.Action != waitingroom.ActionAskCode {
		t.Fatalf("no code: %+v, want asked for a code, no place", d)
	}
	if d, err := e.withCode(r, "invited1", ""); err != nil || !d.SetTicket {
		t.Fatalf("with a code: %+v %v", d, err)
	}
	// The room is public; a presale phase until opens requires codes.
	now := e.clock.Now()
	opens := now.Add(time.Hour).Truncate(time.Second)
	presale := waitingroom.NewPhases(waitingroom.ScheduledPhase{Name: "presale", Start: now.Add(-time.Minute), End: opens,
		Settings: waitingroom.OverridesOf(waitingroom.Settings{CodesRequired: true}, "codes_required")})
	o := waitingroom.OverridesOf(waitingroom.Settings{CodesRequired: false, Phases: presale}, "codes_required", "phases")
	if _, err := r.Patch(e.ctx, o); err != nil {
		t.Fatal(err)
	}
	if d, err := e.withCode(r, "", ""); err != nil || d.Status.State != waitingroom.StateCodeRequired || d.Status.OpensAt == nil || !d.Status.OpensAt.Equal(opens) {
		t.Fatalf("in the presale: %+v %v, want asked for a code, told it opens at %v", d.Status, err, opens)
	}
	e.clock.Advance(opens.Sub(e.clock.Now()))
	if d, err := e.withCode(r, "", ""); err != nil || !d.SetTicket {
		t.Fatalf("at the presale's end, before any tick: %+v %v, want a place", d.Status, err)
	}
}

// TestCodeGuessingBoundedByJoinLimit: every try, right or wrong, takes from
// the network's join_limit allowance: under 5/m a guesser gets five tries
// a minute, each wrong one counted, the rest refused with Retry-After
// before any code is looked at; a right code within them still works.
func TestCodeGuessingBoundedByJoinLimit(t *testing.T) {
	e, r, _ := codeRoom(t, waitingroom.Settings{JoinLimit: waitingroom.JoinLimit{N: 5, Per: time.Minute}},
		waitingroom.NewCode{Code: "RIGHT-ONE", Lane: "presale", MaxUses: 1})
	var limited int
	for i := range 40 {
		_, err := e.withCode(r, "GUESS-"+string(rune('A'+i%26))+string(rune('A'+i/26)), "")
		var le *waitingroom.JoinLimitedError
		switch {
		case errors.As(err, &le):
			limited++
			if le.RetryAfter <= 0 {
				t.Fatalf("try %d: no Retry-After", i)
			}
		case errors.Is(err, waitingroom.ErrCodeRefused):
		default:
			t.Fatalf("try %d: %v", i, err)
		}
	}
	st := r.CodeAttempts()
	if st.Wrong.Load() != 5 || st.Limited.Load() != 35 || limited != 35 {
		t.Fatalf("wrong %d limited %d, want 5 wrong tries and 35 refused", st.Wrong.Load(), st.Limited.Load())
	}
	if _, err := e.withCode(r, "RIGHT-ONE", ""); !errors.Is(err, waitingroom.ErrJoinLimited) {
		t.Fatalf("a right code over the limit: %v, want join_limit", err)
	}
	e.clock.Advance(12 * time.Second)
	if d, err := e.withCode(r, "RIGHT-ONE", ""); err != nil || !d.SetTicket {
		t.Fatalf("a right code once the allowance is back: %+v %v", d, err)
	}
}

// TestCodeBatchRefusals: each bad batch is refused whole, saying what is
// wrong and where, and adds nothing.
func TestCodeBatchRefusals(t *testing.T) {
	e, r, _ := codeRoom(t, waitingroom.Settings{})
	good := waitingroom.NewCode{Code: "GOOD-CODE", Lane: "presale", MaxUses: 1}
	big := make([]waitingroom.NewCode, waitingroom.MaxCodeBatch+1)
	for i := range big {
		big[i] = waitingroom.NewCode{Code: waitingroom.GenerateCode(), Lane: "presale", MaxUses: 1}
	}
	for _, tc := range []struct {
		name  string
		batch []waitingroom.NewCode
		want  error
		line  string
	}{
		{"no codes", nil, waitingroom.ErrCodeBatch, ""},
		{"oversized", big, waitingroom.ErrCodeBatchSize, ""},
		{"unknown lane", []waitingroom.NewCode{good, {Code: "OTHER-ONE", Lane: "vip", MaxUses: 1}}, waitingroom.ErrUnknownLane, "line 2"},
		{"empty code", []waitingroom.NewCode{{Code: " ", Lane: "presale", MaxUses: 1}}, waitingroom.ErrCodeEmpty, "line 1"},
		{"not a code", []waitingroom.NewCode{{Code: "a b", Lane: "presale", MaxUses: 1}}, waitingroom.ErrCodeInvalid, "line 1"},
		{"no uses", []waitingroom.NewCode{{Code: "ZERO-USES", Lane: "presale", MaxUses: 0}}, waitingroom.ErrCodeBatch, "line 1"},
		{"twice in the batch", []waitingroom.NewCode{good, {Code: "good-code", Lane: "members", MaxUses: 1}}, waitingroom.ErrCodeExists, "line 2"},
	} {
		_, err := r.AddCodes(e.ctx, tc.batch, 1)
		if !errors.Is(err, tc.want) || !strings.Contains(err.Error(), tc.line) {
			t.Errorf("%s: %v, want %v at %q", tc.name, err, tc.want, tc.line)
		}
	}
	if _, err := r.AddCodes(e.ctx, []waitingroom.NewCode{good}, 1); err != nil {
		t.Fatal(err)
	}
	if _, err := r.AddCodes(e.ctx, []waitingroom.NewCode{{Code: "NEW-ONE1", Lane: "presale", MaxUses: 1}, good}, 1); !errors.Is(err, waitingroom.ErrCodeExists) {
		t.Fatalf("a batch with a stored code: %v", err)
	}
	if list, _ := r.CodeUses(e.ctx); len(list) != 1 {
		t.Fatalf("codes stored: %+v, want the good one alone", list)
	}
}

// TestCodesSurviveKeyRotation: codes added under the previous signing key
// are still redeemed once the next one signs.
func TestCodesSurviveKeyRotation(t *testing.T) {
	e, before, _ := codeRoom(t, waitingroom.Settings{}, waitingroom.NewCode{Code: "OLD-KEY-CODE", Lane: "presale", MaxUses: 1})
	_ = before
	next := mustKey(t)
	r, err := waitingroom.NewRoom(waitingroom.Config{ID: "codes", Store: e.store, Key: next, Previous: []*waitingroom.SigningKey{e.key},
		Settings: waitingroom.Settings{Lanes: mustLanes(t, "presale=1"), TotalActiveUsers: 1, NewUsersPerMinute: 60}, Now: e.clock.Now})
	if err != nil {
		t.Fatal(err)
	}
	if err := r.Start(e.ctx); err != nil {
		t.Fatal(err)
	}
	if d, err := e.withCode(r, "old-key-code", ""); err != nil || !d.SetTicket {
		t.Fatalf("a code from before the rotation: %+v %v", d, err)
	}
}

func mustLanes(t testing.TB, spec string) waitingroom.Lanes {
	t.Helper()
	l, err := waitingroom.ParseLanes(spec)
	if err != nil {
		t.Fatal(err)
	}
	return l
}
