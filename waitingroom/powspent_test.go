package waitingroom

import (
	"errors"
	"runtime"
	"testing"
	"time"
)

// TestSpentSeedsKeptUntilExpiredThenDropped: a seed answered on this node
// stays spent for at least its lifetime (so it cannot buy a second place),
// and the set lets go of it within two generations, so memory follows the
// rate of answers rather than their total.
func TestSpentSeedsKeptUntilExpiredThenDropped(t *testing.T) {
	var s spentSeeds
	t0 := time.Date(2026, 6, 1, 10, 0, 0, 0, time.UTC)
	a, b := seedID{1}, seedID{2}
	if err := s.spend(a, t0); err != nil {
		t.Fatal(err)
	}
	for _, at := range []time.Duration{0, time.Second, SeedLifetime, spentGeneration + time.Second, 2*spentGeneration - time.Second} {
		if err := s.spend(a, t0.Add(at)); !errors.Is(err, ErrSeedSpent) {
			t.Fatalf("replayed %v after: %v", at, err)
		}
	}
	if err := s.spend(b, t0.Add(spentGeneration+2*time.Second)); err != nil {
		t.Fatal(err)
	}
	// Two generations on, a is gone (its seed expired long ago: checkAnswer
	// refuses it before the set is asked) and b, spent later, is kept.
	later := t0.Add(2*spentGeneration + 3*time.Second)
	if err := s.spend(seedID{3}, later); err != nil {
		t.Fatal(err)
	}
	if err := s.spend(b, later); !errors.Is(err, ErrSeedSpent) {
		t.Fatalf("b one generation on: %v", err)
	}
	if n := s.len(); n != 2 {
		t.Fatalf("%d seeds kept, want b and the newest", n)
	}
	// A long silence drops both generations.
	if err := s.spend(seedID{4}, later.Add(3*spentGeneration)); err != nil || s.len() != 1 {
		t.Fatalf("after a silence: %v, %d kept", err, s.len())
	}
}

// TestSpentSeedsRefuseWhenFull: at capacity, answers are refused as busy
// rather than an older seed forgotten; a forgotten spend (its join failed)
// frees its room.
func TestSpentSeedsRefuseWhenFull(t *testing.T) {
	s := spentSeeds{capacity: 3}
	t0 := time.Date(2026, 6, 1, 10, 0, 0, 0, time.UTC)
	for i := range 3 {
		if err := s.spend(seedID{byte(i)}, t0); err != nil {
			t.Fatal(err)
		}
	}
	if err := s.spend(seedID{9}, t0); !errors.Is(err, ErrChallengeBusy) {
		t.Fatalf("full: %v", err)
	}
	if err := s.spend(seedID{0}, t0); !errors.Is(err, ErrSeedSpent) {
		t.Fatalf("full, a replay: %v, want it named as a replay", err)
	}
	s.forget(seedID{1})
	if err := s.spend(seedID{9}, t0); err != nil {
		t.Fatalf("after a forget: %v", err)
	}
	if err := s.spend(seedID{10}, t0.Add(2*spentGeneration)); err != nil {
		t.Fatalf("once the old ones expired: %v", err)
	}
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
			_ = s.spend(id, t0)
		}
		runtime.GC()
		runtime.ReadMemStats(&after)
		b.ReportMetric(float64(after.HeapAlloc-before.HeapAlloc)/n, "B/seed")
		runtime.KeepAlive(&s)
	}
}
