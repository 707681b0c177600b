package waitingroom

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"testing"
)

func TestDrawIsABijection(t *testing.T) {
	seed := bytes.Repeat([]byte{7}, DrawSeedSize)
	for _, n := range []uint64{0, 1, 2, 3, 4, 5, 7, 8, 9, 100, 127, 128, 129, 1000, 4097} {
		d := NewDraw(seed, n)
		seen := make([]bool, n)
		for i := range n {
			p := d.Place(i)
			if p >= n {
				t.Fatalf("n=%d: index %d placed at %d, outside [0, n)", n, i, p)
			}
			if seen[p] {
				t.Fatalf("n=%d: place %d given twice", n, p)
			}
			seen[p] = true
		}
		if got := d.Place(n + 5); got != n+5 {
			t.Fatalf("n=%d: index after the draw moved to %d", n, got)
		}
	}
}

func TestDrawIsDeterministicAndKeyed(t *testing.T) {
	a, b := NewDrawSeed(), NewDrawSeed()
	const n = 500
	d1, d2, other := NewDraw(a, n), NewDraw(a, n), NewDraw(b, n)
	same, moved := 0, 0
	for i := range uint64(n) {
		if d1.Place(i) != d2.Place(i) {
			t.Fatalf("same seed, index %d: %d vs %d", i, d1.Place(i), d2.Place(i))
		}
		if d1.Place(i) == other.Place(i) {
			same++
		}
		if d1.Place(i) != i {
			moved++
		}
	}
	// A random permutation of 500 fixes about one point; allow plenty of slack.
	if same > 25 {
		t.Fatalf("two seeds agree on %d of %d places: the seed does not drive the draw", same, n)
	}
	if moved < n-25 {
		t.Fatalf("only %d of %d indexes moved: the draw barely shuffles", moved, n)
	}
}

// TestDrawKnownAnswer pins the published algorithm: anyone recomputing places
// from a revealed seed must get exactly these.
func TestDrawKnownAnswer(t *testing.T) {
	seed, _ := hex.DecodeString("000102030405060708090a0b0c0d0e0f101112131415161718191a1b1c1d1e1f")
	d := NewDraw(seed, 10)
	var got []uint64
	for i := range uint64(10) {
		got = append(got, d.Place(i))
	}
	// Computed from the algorithm's description by an independent implementation.
	want := []uint64{1, 9, 7, 5, 0, 6, 8, 3, 2, 4}
	for i := range want {
		if got[i] != want[i] {
			t.Fatalf("places for seed 00..1f, n=10: got %v, want %v", got, want)
		}
	}
	big := NewDraw(seed, 1000)
	for i, want := range map[uint64]uint64{0: 95, 1: 654, 999: 570} {
		if got := big.Place(i); got != want {
			t.Fatalf("n=1000, index %d: got %d, want %d", i, got, want)
		}
	}
}

func TestDrawCommitment(t *testing.T) {
	seed := NewDrawSeed()
	sum := sha256.Sum256(seed)
	if DrawCommitment(seed) != hex.EncodeToString(sum[:]) {
		t.Fatal("commitment is not the SHA-256 of the seed")
	}
}

// TestEpochSeedKnownAnswer pins the derivation of the random method's seeds,
// computed from its description by an independent implementation.
func TestEpochSeedKnownAnswer(t *testing.T) {
	seed, _ := hex.DecodeString("000102030405060708090a0b0c0d0e0f101112131415161718191a1b1c1d1e1f")
	for number, want := range map[uint64]string{
		1: "e7a1726512382f0582e28d17dc5ef2ab46ff4cba608a3bd4e27f2e7c0d84e838",
		7: "baea28ff1ba7adf7218ec9a8d25df088797921e3aae3e3839fce0e62f398fbcc",
	} {
		if got := hex.EncodeToString(EpochSeed(seed, number)); got != want {
			t.Fatalf("epoch %d seed %s, want %s", number, got, want)
		}
	}
}
