package waitingroom_test

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"fmt"
	"os"
	"strings"
	"testing"

	"github.com/foyer-dev/foyer/waitingroom"
)

// docPlace is the permutation as docs/PROTOCOL.md writes it, step by step,
// apart from draw.go: a verifier written from the document must agree with
// the room, for every size and index the tests try. trace, when not nil,
// receives one line per round, as the document's trace shows them.
func docPlace(seed []byte, n, i uint64, trace *strings.Builder) uint64 {
	if n <= 1 || i >= n {
		return i
	}
	b := uint64(0) // bitlen(n-1): the number of binary digits of n-1
	for v := n - 1; v > 0; v >>= 1 {
		b++
	}
	h := max(1, (b+1)/2)
	mask := uint64(1)<<h - 1
	x := i
	for pass := 1; ; pass++ {
		l, r := x>>h, x&mask
		if trace != nil {
			fmt.Fprintf(trace, "pass %d: x = %d, L = %d, R = %d\n", pass, x, l, r)
		}
		for round := range 8 {
			msg := []byte("foyer-draw-v1")
			msg = binary.BigEndian.AppendUint64(msg, n)
			msg = append(msg, byte(round))
			msg = binary.BigEndian.AppendUint64(msg, r)
			mac := hmac.New(sha256.New, seed)
			mac.Write(msg)
			f := binary.BigEndian.Uint64(mac.Sum(nil)[:8])
			l, r = r, l^(f&mask)
			if trace != nil {
				fmt.Fprintf(trace, "  round %d: message %x, F = %016x, L = %d, R = %d\n", round, msg, f, l, r)
			}
		}
		x = l<<h | r
		if trace != nil {
			fmt.Fprintf(trace, "  result (L << %d) | R = %d", h, x)
		}
		if x < n {
			if trace != nil {
				fmt.Fprintf(trace, " < n: the place\n")
			}
			return x
		}
		if trace != nil {
			fmt.Fprintf(trace, " >= n: walk again from it\n")
		}
	}
}

// docEpochSeed is the epoch seed as the document writes it.
func docEpochSeed(seed []byte, epoch uint64) []byte {
	mac := hmac.New(sha256.New, seed)
	mac.Write(binary.BigEndian.AppendUint64([]byte("foyer-epoch-v1"), epoch))
	return mac.Sum(nil)
}

// TestDocumentedPermutationIsTheRooms compares the document's permutation with
// the room's over every index of many sizes, around each power of two (where
// the half width changes) and with many seeds.
func TestDocumentedPermutationIsTheRooms(t *testing.T) {
	for s := range 4 {
		seed := make([]byte, waitingroom.DrawSeedSize)
		sum := sha256.Sum256([]byte{byte(s)})
		copy(seed, sum[:])
		sizes := []uint64{0, 1, 2, 3, 5, 6, 10, 100, 257, 1000}
		for p := uint(2); p <= 12; p++ {
			sizes = append(sizes, 1<<p-1, 1<<p, 1<<p+1)
		}
		for _, n := range sizes {
			d := waitingroom.NewDraw(seed, n)
			for i := range n + 2 {
				if got, want := docPlace(seed, n, i, nil), d.Place(i); got != want {
					t.Fatalf("seed %x, n %d, index %d: the document gives %d, the room %d", seed, n, i, got, want)
				}
			}
		}
		for _, n := range []uint64{1 << 20, 2_000_001, 1 << 33, 1<<63 + 12345} {
			d := waitingroom.NewDraw(seed, n)
			for _, i := range []uint64{0, 1, n / 2, n - 1} {
				if got, want := docPlace(seed, n, i, nil), d.Place(i); got != want {
					t.Fatalf("seed %x, n %d, index %d: the document gives %d, the room %d", seed, n, i, got, want)
				}
			}
		}
		for _, e := range []uint64{1, 2, 64, 1 << 40} {
			if got, want := hex.EncodeToString(docEpochSeed(seed, e)), hex.EncodeToString(waitingroom.EpochSeed(seed, e)); got != want {
				t.Fatalf("epoch %d seed: the document gives %s, the room %s", e, got, want)
			}
		}
	}
}

const (
	vectorsBegin = "<!-- vectors:begin -->"
	vectorsEnd   = "<!-- vectors:end -->"
)

// vectorsMarkdown is the document's test vectors, each computed twice: by
// the document's steps and by the room.
func vectorsMarkdown(t *testing.T) string {
	t.Helper()
	seq, _ := hex.DecodeString(exampleSeedText)
	ff := make([]byte, waitingroom.DrawSeedSize)
	for i := range ff {
		ff[i] = 0xff
	}
	var b strings.Builder
	b.WriteString("Seeds: **S0** = `" + exampleSeedText + "` (the bytes 0x00 to 0x1f), **S1** = `" + hex.EncodeToString(ff) + "` (32 bytes 0xff).\n\n")
	b.WriteString("| seed | commitment = SHA-256(seed) |\n|---|---|\n")
	for _, s := range []struct {
		name string
		seed []byte
	}{{"S0", seq}, {"S1", ff}} {
		fmt.Fprintf(&b, "| %s | `%s` |\n", s.name, waitingroom.DrawCommitment(s.seed))
	}
	b.WriteString("\nEpoch seeds, HMAC-SHA256(seed, \"foyer-epoch-v1\" ‖ uint64be(epoch)):\n\n| seed | epoch | epoch seed |\n|---|---|---|\n")
	for _, e := range []uint64{1, 2, 7} {
		got := hex.EncodeToString(waitingroom.EpochSeed(seq, e))
		if got != hex.EncodeToString(docEpochSeed(seq, e)) {
			t.Fatalf("epoch %d: the document and the room differ", e)
		}
		fmt.Fprintf(&b, "| S0 | %d | `%s` |\n", e, got)
	}
	b.WriteString("\nPlaces, P(seed, n, i):\n\n| seed | n | h | index i | place |\n|---|---|---|---|---|\n")
	row := func(name string, seed []byte, n uint64, idx ...uint64) {
		h := uint64(0)
		if n > 1 {
			for v := n - 1; v > 0; v >>= 1 {
				h++
			}
			h = max(1, (h+1)/2)
		}
		hs := "–"
		if n > 1 {
			hs = fmt.Sprint(h)
		}
		d := waitingroom.NewDraw(seed, n)
		for _, i := range idx {
			p := d.Place(i)
			if p != docPlace(seed, n, i, nil) {
				t.Fatalf("%s n %d i %d: the document and the room differ", name, n, i)
			}
			fmt.Fprintf(&b, "| %s | %d | %s | %d | %d |\n", name, n, hs, i, p)
		}
	}
	row("S0", seq, 0, 0, 5)
	row("S0", seq, 1, 0, 1)
	row("S0", seq, 2, 0, 1)
	row("S0", seq, 10, 0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10)
	row("S0", seq, 1000, 0, 1, 999)
	row("S0", seq, 1_000_000, 0, 123_456, 999_999)
	row("S0", seq, 1<<32+7, 0, 1<<32+6)
	row("S1", ff, 7, 0, 1, 2, 3, 4, 5, 6)
	row("S1", ff, 50_000, 0, 4711, 49_999)
	e1 := waitingroom.EpochSeed(seq, 1)
	fmt.Fprintf(&b, "\nWith the epoch seed of S0's epoch 1 as the seed, for an epoch of n = 3 (the worked example's):\n\n| n | index i | place |\n|---|---|---|\n")
	for i := range uint64(3) {
		fmt.Fprintf(&b, "| 3 | %d | %d |\n", i, waitingroom.NewDraw(e1, 3).Place(i))
	}
	// The trace of the first index of S0, n = 10 that needs a second pass.
	for i := range uint64(10) {
		var tr strings.Builder
		p := docPlace(seq, 10, i, &tr)
		if !strings.Contains(tr.String(), "walk again") {
			continue
		}
		if p != waitingroom.NewDraw(seq, 10).Place(i) {
			t.Fatal("the trace and the room differ")
		}
		fmt.Fprintf(&b, "\nA trace of S0, n = 10, index %d (bitlen(9) = 4, h = 2, mask = 3; each message in hex, 30 bytes), "+
			"whose first pass lands outside [0, 10) and walks again:\n\n```text\n%s```\n", i, tr.String())
		break
	}
	return b.String()
}

// TestProtocolVectors fails when the document's test vectors differ from
// what both the document's steps and the room compute; -update-docs
// rewrites them.
func TestProtocolVectors(t *testing.T) {
	old, err := os.ReadFile(protocolDoc)
	if err != nil {
		t.Fatal(err)
	}
	doc := string(old)
	i, j := strings.Index(doc, vectorsBegin), strings.Index(doc, vectorsEnd)
	if i < 0 || j < i {
		t.Fatalf("%s has no %s ... %s markers", protocolDoc, vectorsBegin, vectorsEnd)
	}
	doc = doc[:i+len(vectorsBegin)] + "\n" + vectorsMarkdown(t) + doc[j:]
	if doc == string(old) {
		return
	}
	if *updateDocs {
		if err := os.WriteFile(protocolDoc, []byte(doc), 0o644); err != nil {
			t.Fatal(err)
		}
		t.Log("docs/PROTOCOL.md: test vectors rewritten")
		return
	}
	t.Errorf("docs/PROTOCOL.md's test vectors are stale: run `go test ./waitingroom/ -run '^TestProtocolVectors$' -update-docs` and commit it")
}
