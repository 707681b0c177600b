package waitingroom

import (
	"errors"
	"runtime"
	"testing"
	"time"
)

// TestSpentSeedsKeptUntilExpiredThenDropped: a seed answered on this node
// stays spent until it expires (so it cannot buy a second place), and the set
// lets go of it then, so memory follows the rate of answers rather than their
// total.
func TestSpentSeedsKeptUntilExpiredThenDropped(t *testing.T) {
	var s spentSeeds
	t0 := time.Date(2026, 6, 1, 10, 0, 0, 0, time.UTC)
	a, b := seedID{1}, seedID{2}
	aExp, bExp := t0.Add(SeedLifetime), t0.Add(SeedLifetime+time.Minute)
	if err := s.spend(a, aExp, t0); err != nil {
		t.Fatal(err)
	}
	for _, at := range []time.Duration{0, time.Second, SeedLifetime - time.Second} {
		if err := s.spend(a, aExp, t0.Add(at)); !errors.Is(err, ErrSeedSpent) {
			t.Fatalf("replayed %v after: %v", at, err)
		}
	}
	if err := s.spend(b, bExp, t0.Add(time.Minute)); err != nil {
		t.Fatal(err)
	}
	// Once a's seed expired (checkAnswer refuses it before the set is
	// asked), a is gone within a slot and b, which expires later, is kept.
	gone := aExp.Add(spentSlot)
	if err := s.spend(seedID{3}, t0.Add(2*SeedLifetime), gone); err != nil {
		t.Fatal(err)
	}
	if err := s.spend(b, bExp, gone); !errors.Is(err, ErrSeedSpent) {
		t.Fatalf("b before its expiry: %v", err)
	}
	if n := s.len(); n != 2 {
		t.Fatalf("%d seeds kept, want b and the newest", n)
	}
	// A long silence drops everything that expired meanwhile.
	if err := s.spend(seedID{4}, t0.Add(time.Hour+SeedLifetime), t0.Add(time.Hour)); err != nil || s.len() != 1 {
		t.Fatalf("after a silence: %v, %d kept", err, s.len())
	}
}

// TestSpentSeedsRefuseWhenFull: at capacity, answers are refused as busy
// rather than an older seed forgotten; a forgotten spend (its join failed)
// frees its room; and the set takes answers again as soon as its oldest seeds
// expire (within a slot of the oldest's expiry), never later than a seed's
// lifetime after it filled.
func TestSpentSeedsRefuseWhenFull(t *testing.T) {
	s := spentSeeds{capacity: 3}
	t0 := time.Date(2026, 6, 1, 10, 0, 0, 0, time.UTC)
	for i := range 3 {
		if err := s.spend(seedID{byte(i)}, t0.Add(time.Duration(i+1)*spentSlot-time.Second), t0); err != nil {
			t.Fatal(err)
		}
	}
	if err := s.spend(seedID{9}, t0.Add(SeedLifetime), t0); !errors.Is(err, ErrChallengeBusy) {
		t.Fatalf("full: %v", err)
	}
	if err := s.spend(seedID{0}, t0.Add(spentSlot-time.Second), t0); !errors.Is(err, ErrSeedSpent) {
		t.Fatalf("full, a replay: %v, want it named as a replay", err)
	}
	s.forget(seedID{1})
	if err := s.spend(seedID{9}, t0.Add(SeedLifetime), t0); err != nil {
		t.Fatalf("after a forget: %v", err)
	}
	if err := s.spend(seedID{10}, t0.Add(SeedLifetime), t0.Add(spentSlot-2*time.Second)); !errors.Is(err, ErrChallengeBusy) {
		t.Fatalf("full, before the oldest expired: %v", err)
	}
	// The oldest seed expires a slot after the fill, less a second: the set
	// takes one more once that slot is over.
	if err := s.spend(seedID{10}, t0.Add(SeedLifetime), t0.Add(spentSlot)); err != nil {
		t.Fatalf("once the oldest expired: %v", err)
	}
}

// TestSpentSeedsAcceptAgainWithinALifetimeOfAFill measures what docs/endpoints.md
// promises of a full set: filled by seeds of every age, it accepts again as
// they expire, the first at most one seed lifetime after the fill.
func TestSpentSeedsAcceptAgainWithinALifetimeOfAFill(t *testing.T) {
	const capacity = 600
	s := spentSeeds{capacity: capacity}
	t0 := time.Date(2026, 6, 1, 10, 0, 0, 0, time.UTC)
	// Seeds handed out over the last lifetime, all answered now.
	for i := range capacity {
		issued := t0.Add(-SeedLifetime + time.Duration(i)*SeedLifetime/capacity)
		if err := s.spend(seedID{byte(i), byte(i >> 8)}, issued.Add(SeedLifetime), t0); err != nil {
			t.Fatal(err)
		}
	}
	var waited time.Duration
	for ; waited <= SeedLifetime; waited += time.Second {
		if s.spend(seedID{0xff, 0xff}, t0.Add(waited+SeedLifetime), t0.Add(waited)) == nil {
			break
		}
	}
	if waited > SeedLifetime {
		t.Fatalf("a full set refused answers for over a seed's lifetime (%v)", SeedLifetime)
	}
	t.Logf("a full set took an answer again %v after it filled", waited)
}

// BenchmarkSpentSeedMemory reports the heap a remembered seed costs.
func BenchmarkSpentSeedMemory(b *testing.B) {
	const n = 1 << 18
	t0 := time.Date(2026, 6, 1, 10, 0, 0, 0, time.UTC)
	for b.Loop() {
		runtime.GC()
		var before, after runtime.MemStats
		runtime.ReadMemStats(&before)
		var s spentSeeds
		for i := range n {
			var id seedID
			id[0], id[1], id[2] = byte(i), byte(i>>8), byte(i>>16)
			_ = s.spend(id, t0.Add(SeedLifetime), t0)
		}
		runtime.GC()
		runtime.ReadMemStats(&after)
		b.ReportMetric(float64(after.HeapAlloc-before.HeapAlloc)/n, "B/seed")
		runtime.KeepAlive(&s)
	}
}
