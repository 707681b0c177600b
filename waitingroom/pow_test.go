package waitingroom_test

import (
	"context"
	"crypto/sha256"
	"encoding/base64"
	"errors"
	"math/bits"
	"net/netip"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/foyer-dev/foyer/waitingroom"
	"github.com/foyer-dev/foyer/waitingroom/memstore"
)

// solve finds the first nonce that solves a seed, as any client would.
func solve(t testing.TB, seed string, need int) string {
	t.Helper()
	raw, err := base64.RawURLEncoding.DecodeString(seed)
	if err != nil {
		t.Fatal(err)
	}
	buf := make([]byte, 0, len(raw)+20)
	for i := 0; ; i++ {
		buf = strconv.AppendInt(append(buf[:0], raw...), int64(i), 10)
		sum := sha256.Sum256(buf)
		if zeros(sum) >= need {
			return strconv.Itoa(i)
		}
	}
}

func zeros(sum [32]byte) int {
	n := 0
	for _, b := range sum {
		if b != 0 {
			return n + bits.LeadingZeros8(b)
		}
		n += 8
	}
	return n
}

func powSettings(bitsNeeded int) waitingroom.Settings {
	return waitingroom.Settings{TotalActiveUsers: 1, NewUsersPerMinute: 60, Challenge: waitingroom.Challenge{PoWBits: bitsNeeded}}
}

func TestParseChallenge(t *testing.T) {
	for in, want := range map[string]waitingroom.Challenge{
		"off": {}, "pow": {PoWBits: waitingroom.DefaultPoWBits}, "pow 20": {PoWBits: 20}, "  pow   9 ": {PoWBits: 9},
	} {
		if got, err := waitingroom.ParseChallenge(in); err != nil || got != want {
			t.Errorf("%q: %+v %v, want %+v", in, got, err, want)
		}
	}
	for _, in := range []string{"", "pow x", "pow 20 21", "captcha", "on", "pow20"} {
		if _, err := waitingroom.ParseChallenge(in); err == nil {
			t.Errorf("%q: accepted", in)
		}
	}
	for _, n := range []int{waitingroom.MinPoWBits - 1, waitingroom.MaxPoWBits + 1, -3} {
		s := waitingroom.Settings{Challenge: waitingroom.Challenge{PoWBits: n}}.WithDefaults()
		if err := s.Validate(); err == nil {
			t.Errorf("pow %d: valid", n)
		}
	}
}

// TestChallengeMakesNoPlaceUntilAnswered: newcomers of a room asking for a
// proof of work get a seed and no place; the store sees nothing until a
// right answer, which makes exactly one place.
func TestChallengeMakesNoPlaceUntilAnswered(t *testing.T) {
	e := newEnv(t)
	r := e.node("pow", powSettings(10))
	for range 100 {
		st, ok := r.NewChallenge(netip.MustParseAddr("192.0.2.1"))
		if !ok || st.State != waitingroom.StateChallenge || st.Challenge.Bits != 10 || st.Challenge.Algorithm != waitingroom.PoWAlgorithm {
			t.Fatalf("newcomer: %+v %v", st, ok)
		}
	}
	if seq := e.snapshot(r).Seq; seq != 0 {
		t.Fatalf("%d places made by challenges", seq)
	}
	st, _ := r.NewChallenge(netip.MustParseAddr("192.0.2.1"))
	vis, err := r.JoinWithAnswer(e.ctx, netip.MustParseAddr("192.0.2.1"), st.Challenge.Seed, solve(t, st.Challenge.Seed, 10))
	if err != nil || vis.Pass == "" {
		t.Fatalf("right answer in an empty room: %+v %v, want let in", vis.Status, err)
	}
	if seq := e.snapshot(r).Seq; seq != 1 {
		t.Fatalf("%d places after one answer", seq)
	}
}

func (e *roomEnv) snapshot(r *waitingroom.Room) waitingroom.Snapshot {
	e.t.Helper()
	snap, err := e.store.Snapshot(e.ctx, r.ID(), e.clock.Now(), 0)
	if err != nil {
		e.t.Fatal(err)
	}
	return snap
}

// TestChallengeOnlyWhereAPlaceWouldBeMade: sold out, closed, not yet open
// and passthrough rooms ask nothing (Join says what there is to say), and a
// room without the setting never asks.
func TestChallengeOnlyWhereAPlaceWouldBeMade(t *testing.T) {
	e := newEnv(t)
	future := e.clock.Now().Add(time.Hour)
	for name, s := range map[string]waitingroom.Settings{
		"off":         {},
		"sold out":    {SoldOut: true, Challenge: waitingroom.Challenge{PoWBits: 10}},
		"reject":      {QueueingMethod: waitingroom.Reject, Challenge: waitingroom.Challenge{PoWBits: 10}},
		"passthrough": {QueueingMethod: waitingroom.Passthrough, Challenge: waitingroom.Challenge{PoWBits: 10}},
		"not open":    {PrequeueStart: future, EventStart: future.Add(time.Hour), Challenge: waitingroom.Challenge{PoWBits: 10}},
	} {
		if st, ok := e.node("pow-"+strconv.Itoa(len(name)), s).NewChallenge(netip.MustParseAddr("192.0.2.1")); ok {
			t.Errorf("%s: challenged: %+v", name, st)
		}
	}
}

// TestAnswersRefused: each wrong answer is refused with its error, and
// none makes a place.
func TestAnswersRefused(t *testing.T) {
	e := newEnv(t)
	r := e.node("pow", powSettings(12))
	other := e.node("pow-other", powSettings(12))
	st, _ := r.NewChallenge(netip.MustParseAddr("192.0.2.1"))
	seed := st.Challenge.Seed
	good := solve(t, seed, 12)
	wrong := ""
	for i := 0; wrong == ""; i++ {
		if n := strconv.Itoa(i); n != good {
			raw, _ := base64.RawURLEncoding.DecodeString(seed)
			if zeros(sha256.Sum256(append(raw, n...))) < 12 {
				wrong = n
			}
		}
	}
	for _, tc := range []struct {
		name, client, seed, nonce string
		room                      *waitingroom.Room
		want                      error
	}{
		{"wrong nonce", "192.0.2.1", seed, wrong, r, waitingroom.ErrWrongNonce},
		{"other address", "192.0.2.2", seed, good, r, waitingroom.ErrSeedInvalid},
		{"other room", "192.0.2.1", seed, good, other, waitingroom.ErrSeedInvalid},
		{"empty nonce", "192.0.2.1", seed, "", r, waitingroom.ErrAnswerMalformed},
		{"signed nonce", "192.0.2.1", seed, "-1", r, waitingroom.ErrAnswerMalformed},
		{"seed too short", "192.0.2.1", seed[:20], good, r, waitingroom.ErrAnswerMalformed},
		{"seed padded", "192.0.2.1", seed + "=", good, r, waitingroom.ErrAnswerMalformed},
	} {
		if _, err := tc.room.JoinWithAnswer(e.ctx, netip.MustParseAddr(tc.client), tc.seed, tc.nonce); !errors.Is(err, tc.want) {
			t.Errorf("%s: %v, want %v", tc.name, err, tc.want)
		}
	}
	if seq := e.snapshot(r).Seq; seq != 0 {
		t.Fatalf("%d places made by refused answers", seq)
	}
	if _, err := r.JoinWithAnswer(e.ctx, netip.MustParseAddr("192.0.2.1"), seed, good); err != nil {
		t.Fatal(err)
	}
	if _, err := r.JoinWithAnswer(e.ctx, netip.MustParseAddr("192.0.2.1"), seed, good); !errors.Is(err, waitingroom.ErrSeedSpent) {
		t.Fatalf("replayed: %v", err)
	}

	// Lifetime, on the room's clock.
	st, _ = r.NewChallenge(netip.MustParseAddr("192.0.2.1"))
	nonce := solve(t, st.Challenge.Seed, 12)
	e.clock.Advance(waitingroom.SeedLifetime)
	if _, err := r.JoinWithAnswer(e.ctx, netip.MustParseAddr("192.0.2.1"), st.Challenge.Seed, nonce); !errors.Is(err, waitingroom.ErrSeedExpired) {
		t.Fatalf("a seed at the end of its lifetime: %v", err)
	}
	if seq := e.snapshot(r).Seq; seq != 1 {
		t.Fatalf("%d places, want the one right answer's", seq)
	}
}

// TestSeedBoundToTheIPv6Subnet: an IPv6 client may answer from another
// address of its /64 (devices rotate their own), not from another /64.
func TestSeedBoundToTheIPv6Subnet(t *testing.T) {
	e := newEnv(t)
	r := e.node("pow", powSettings(8))
	st, _ := r.NewChallenge(netip.MustParseAddr("2001:db8:1:2::10"))
	nonce := solve(t, st.Challenge.Seed, 8)
	if _, err := r.JoinWithAnswer(e.ctx, netip.MustParseAddr("2001:db8:1:3::10"), st.Challenge.Seed, nonce); !errors.Is(err, waitingroom.ErrSeedInvalid) {
		t.Fatalf("another /64: %v", err)
	}
	if _, err := r.JoinWithAnswer(e.ctx, netip.MustParseAddr("2001:db8:1:2:aaaa::1"), st.Challenge.Seed, nonce); err != nil {
		t.Fatalf("the same /64: %v", err)
	}
	st, _ = r.NewChallenge(netip.MustParseAddr("::ffff:192.0.2.9"))
	if _, err := r.JoinWithAnswer(e.ctx, netip.MustParseAddr("192.0.2.9"), st.Challenge.Seed, solve(t, st.Challenge.Seed, 8)); err != nil {
		t.Fatalf("an IPv4-mapped address is its IPv4 address: %v", err)
	}
}

// TestSeedSurvivesKeyRotation: a seed handed out by a node with the old key
// is answered on a node that signs with the new one and still trusts the old.
func TestSeedSurvivesKeyRotation(t *testing.T) {
	e := newEnv(t)
	old := e.node("pow", powSettings(8))
	st, _ := old.NewChallenge(netip.MustParseAddr("192.0.2.1"))
	newKey := mustKey(t)
	rotated, err := waitingroom.NewRoom(waitingroom.Config{ID: "pow", Settings: powSettings(8), Store: e.store, Key: newKey, Previous: []*waitingroom.SigningKey{e.key}, Now: e.clock.Now})
	if err != nil {
		t.Fatal(err)
	}
	if err := rotated.Start(e.ctx); err != nil {
		t.Fatal(err)
	}
	if _, err := rotated.JoinWithAnswer(e.ctx, netip.MustParseAddr("192.0.2.1"), st.Challenge.Seed, solve(t, st.Challenge.Seed, 8)); err != nil {
		t.Fatalf("a seed of the previous key: %v", err)
	}
}

// TestOneSeedOnePlaceUnderContention: fifty clients at the same address
// answer the same seed at once; exactly one gets a place.
func TestOneSeedOnePlaceUnderContention(t *testing.T) {
	e := newEnv(t)
	r := e.node("pow", powSettings(8))
	st, _ := r.NewChallenge(netip.MustParseAddr("192.0.2.1"))
	nonce := solve(t, st.Challenge.Seed, 8)
	var ok, spent atomic.Int32
	var wg sync.WaitGroup
	start := make(chan struct{})
	for range 50 {
		wg.Go(func() {
			<-start
			_, err := r.JoinWithAnswer(context.Background(), netip.MustParseAddr("192.0.2.1"), st.Challenge.Seed, nonce)
			switch {
			case err == nil:
				ok.Add(1)
			case errors.Is(err, waitingroom.ErrSeedSpent):
				spent.Add(1)
			default:
				t.Error(err)
			}
		})
	}
	close(start)
	wg.Wait()
	if ok.Load() != 1 || spent.Load() != 49 || e.snapshot(r).Seq != 1 {
		t.Fatalf("%d places and %d refusals (seq %d), want 1 and 49", ok.Load(), spent.Load(), e.snapshot(r).Seq)
	}
}

// BenchmarkPoWVerify is what a node pays to check a right answer (MAC,
// SHA-256, the spent set; not the join), against opening a ticket, which a
// status poll pays, in the same run.
func BenchmarkPoWVerify(b *testing.B) {
	key, err := waitingroom.GenerateSigningKey()
	if err != nil {
		b.Fatal(err)
	}
	clk := newClock()
	r, err := waitingroom.NewRoom(waitingroom.Config{ID: "pow", Settings: powSettings(8), Store: memstore.New(), Key: key, Now: clk.Now})
	if err != nil {
		b.Fatal(err)
	}
	type answer struct{ seed, nonce string }
	answers := make([]answer, 4096)
	for i := range answers {
		st, _ := r.NewChallenge(netip.MustParseAddr("192.0.2.1"))
		answers[i] = answer{st.Challenge.Seed, solve(b, st.Challenge.Seed, 8)}
	}
	ticket := key.SealTicket(waitingroom.Ticket{Room: "pow", Visitor: waitingroom.NewVisitorID(), Joined: clk.Now(), Seen: clk.Now()})
	// Blocks of each alternate, so that both see the same machine: the
	// figure is the ratio, and the time of each beside it.
	const block = 256
	var verify, open time.Duration
	n := 0
	for b.Loop() {
		t0 := time.Now()
		for range block {
			if _, err := key.OpenTicket(ticket, "pow", clk.Now(), time.Hour); err != nil {
				b.Fatal(err)
			}
		}
		t1 := time.Now()
		for j := range block {
			a := answers[(n*block+j)%len(answers)]
			if err := r.CheckAnswer(netip.MustParseAddr("192.0.2.1"), a.seed, a.nonce); err != nil {
				b.Fatal(err)
			}
		}
		open += t1.Sub(t0)
		verify += time.Since(t1)
		n++
	}
	b.ReportMetric(float64(verify.Nanoseconds())/float64(n*block), "ns/verify")
	b.ReportMetric(float64(open.Nanoseconds())/float64(n*block), "ns/open-ticket")
	b.ReportMetric(float64(verify)/float64(open), "verify/open-ticket")
}

// BenchmarkPoWSolve is what a client pays for one place at the default bits,
// in Go on one core: a bot's cost.
func BenchmarkPoWSolve(b *testing.B) {
	key, _ := waitingroom.GenerateSigningKey()
	r, err := waitingroom.NewRoom(waitingroom.Config{ID: "pow", Settings: powSettings(waitingroom.DefaultPoWBits), Store: memstore.New(), Key: key})
	if err != nil {
		b.Fatal(err)
	}
	for b.Loop() {
		st, _ := r.NewChallenge(netip.MustParseAddr("192.0.2.1"))
		solve(b, st.Challenge.Seed, waitingroom.DefaultPoWBits)
	}
}

// TestSpentTicketGetsThePuzzle: a visitor whose session ended comes back
// with their ticket; in a room asking for a proof of work the poll hands
// them a seed for their address, not a free new place.
func TestSpentTicketGetsThePuzzle(t *testing.T) {
	e := newEnv(t)
	r := e.node("pow", powSettings(8))
	st, _ := r.NewChallenge(netip.MustParseAddr("192.0.2.1"))
	vis, err := r.JoinWithAnswer(e.ctx, netip.MustParseAddr("192.0.2.1"), st.Challenge.Seed, solve(t, st.Challenge.Seed, 8))
	if err != nil || vis.Pass == "" {
		t.Fatalf("%+v %v", vis.Status, err)
	}
	if err := r.Revoke(e.ctx, vis.Admission); err != nil {
		t.Fatal(err)
	}
	spent := vis.Ticket
	spent.Claimed = true
	fan := waitingroom.Arrival{Client: netip.MustParseAddr("192.0.2.1")}
	for _, tk := range []waitingroom.Ticket{spent, vis.Ticket} {
		again, err := r.PollAs(e.ctx, fan, tk)
		if err != nil || again.Status.State != waitingroom.StateChallenge || again.Ticket.Room != "" || !again.Rejoined {
			t.Fatalf("spent ticket: %+v %v, want the puzzle and no ticket", again, err)
		}
		if _, err := r.JoinWithAnswer(e.ctx, netip.MustParseAddr("192.0.2.2"), again.Status.Challenge.Seed, solve(t, again.Status.Challenge.Seed, 8)); !errors.Is(err, waitingroom.ErrSeedInvalid) {
			t.Fatalf("the seed answered from another address: %v", err)
		}
	}
	if seq := e.snapshot(r).Seq; seq != 1 {
		t.Fatalf("%d places, want the first only", seq)
	}
}

// TestRightAnswersSpendTheJoinLimit: with both defences on, a right answer
// makes a place and so spends the address's join allowance; over it the
// answer is refused as a limited join, no place is made, and the same seed
// is still good once the allowance is back. Handing out seeds spends nothing.
func TestRightAnswersSpendTheJoinLimit(t *testing.T) {
	e := newEnv(t)
	s := powSettings(8)
	s.TotalActiveUsers = 100
	s.JoinLimit = waitingroom.JoinLimit{N: 1, Per: time.Minute, Burst: 1}
	r := e.node("pow-limited", s)
	var seeds []string
	for range 3 {
		st, ok := r.NewChallenge(netip.MustParseAddr("192.0.2.7"))
		if !ok {
			t.Fatal("no challenge")
		}
		seeds = append(seeds, st.Challenge.Seed)
	}
	if _, err := r.JoinWithAnswer(e.ctx, netip.MustParseAddr("192.0.2.7"), seeds[0], solve(t, seeds[0], 8)); err != nil {
		t.Fatalf("first right answer: %v", err)
	}
	_, err := r.JoinWithAnswer(e.ctx, netip.MustParseAddr("192.0.2.7"), seeds[1], solve(t, seeds[1], 8))
	var limited *waitingroom.JoinLimitedError
	if !errors.As(err, &limited) {
		t.Fatalf("second right answer within the minute: %v, want a limited join", err)
	}
	if seq := e.snapshot(r).Seq; seq != 1 {
		t.Fatalf("%d places, want 1", seq)
	}
	e.clock.Advance(time.Minute)
	if _, err := r.JoinWithAnswer(e.ctx, netip.MustParseAddr("192.0.2.7"), seeds[1], solve(t, seeds[1], 8)); err != nil {
		t.Fatalf("the refused seed once the allowance is back: %v", err)
	}
}

// TestSeedBelowTheRaisedDifficultyIsRefused: raising the difficulty applies to
// the seeds already handed out: a stock of easy seeds fetched before the raise
// buys nothing after it, while a seed at the new difficulty (or above) is
// taken.
func TestSeedBelowTheRaisedDifficultyIsRefused(t *testing.T) {
	e := newEnv(t)
	r := e.node("pow-raise", powSettings(8))
	client := netip.MustParseAddr("192.0.2.1")
	easy, _ := r.NewChallenge(client)
	if _, err := r.Patch(e.ctx, waitingroom.OverridesOf(waitingroom.Settings{Challenge: waitingroom.Challenge{PoWBits: 12}}, "challenge")); err != nil {
		t.Fatal(err)
	}
	if _, err := r.JoinWithAnswer(e.ctx, client, easy.Challenge.Seed, solve(t, easy.Challenge.Seed, 8)); !errors.Is(err, waitingroom.ErrSeedOutdated) {
		t.Fatalf("a seed of 8 bits after the raise to 12: %v, want ErrSeedOutdated", err)
	}
	hard, _ := r.NewChallenge(client)
	if hard.Challenge.Bits != 12 {
		t.Fatalf("seed after the raise asks %d bits, want 12", hard.Challenge.Bits)
	}
	if _, err := r.JoinWithAnswer(e.ctx, client, hard.Challenge.Seed, solve(t, hard.Challenge.Seed, 12)); err != nil {
		t.Fatalf("a seed at the new difficulty: %v", err)
	}
}
