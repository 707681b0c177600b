package waitingroom

import (
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"fmt"
	"io"
	"math/bits"
)

// DrawAlgorithm names the keyed permutation below, so that anyone can recompute
// their place from the published seed, the draw size and their draw index (their
// order key). docs/PROTOCOL.md is its specification for outsiders, with test
// vectors that TestProtocolVectors keeps true; what follows is a summary.
//
// For a draw of size n > 1: let h = max(1, ceil(bitlen(n-1) / 2)) and mask = 2^h - 1.
// Split x into L = x >> h and R = x & mask. For r = 0..7:
// F = first 8 bytes, big-endian, of HMAC-SHA256(key = seed,
// message = "foyer-draw-v1" || uint64be(n) || byte(r) || uint64be(R)), and
// (L, R) = (R, L xor (F & mask)). The result is (L << h) | R. While the result is
// n or more, apply the rounds again to it (cycle walking), which keeps the map a
// bijection on [0, n). A draw of size 0 or 1 maps every index to itself.
//
// The pre-queue's draw uses the committed seed itself. The random queueing
// method draws everyone waiting again and again: epoch e >= 1, over the order
// keys [start, start+n), uses the seed HMAC-SHA256(key = committed seed,
// message = "foyer-epoch-v1" || uint64be(e)), and places key k at
// start + place(k - start).
//
// The seed is 32 raw bytes (published as hex): the commitment is SHA-256 of
// those bytes, and they (not their hex text) are the HMAC key. Places count
// from 0 (place 0 goes first); a fan's draw_index is their order key, the
// number they were given on joining, which the draw maps to their place.
const DrawAlgorithm = "feistel-hmac-sha256-v1"

// EpochSeed derives the seed of a rolling draw of the random method from the
// room's committed seed.
func EpochSeed(seed []byte, number uint64) []byte {
	mac := hmac.New(sha256.New, seed)
	mac.Write([]byte("foyer-epoch-v1"))
	var n [8]byte
	binary.BigEndian.PutUint64(n[:], number)
	mac.Write(n[:])
	return mac.Sum(nil)
}

const drawRounds = 8

var drawLabel = []byte("foyer-draw-v1")

// DrawSeedSize is the size of a draw seed in bytes.
const DrawSeedSize = 32

// NewDrawSeed returns a fresh random seed.
func NewDrawSeed() []byte {
	seed := make([]byte, DrawSeedSize)
	if _, err := rand.Read(seed); err != nil {
		panic(err) // crypto/rand never fails on supported platforms
	}
	return seed
}

// newDrawSeed is the seed this node proposes for a draw: from the room's
// seed source when it was given one.
func (r *Room) newDrawSeed() []byte {
	if r.seedSource == nil {
		return NewDrawSeed()
	}
	seed := make([]byte, DrawSeedSize)
	if _, err := io.ReadFull(r.seedSource, seed); err != nil {
		panic(fmt.Sprintf("waitingroom: the room's seed source failed: %v", err))
	}
	return seed
}

// DrawCommitment is the published SHA-256 of the seed, hex encoded. Publishing it
// before the pre-queue opens binds the room to the seed it will reveal.
func DrawCommitment(seed []byte) string {
	sum := sha256.Sum256(seed)
	return hex.EncodeToString(sum[:])
}

// Draw is a keyed permutation of [0, Size): the fair draw of a pre-queue.
type Draw struct {
	seed []byte
	size uint64
	half uint
	mask uint64
}

// NewDraw prepares the permutation for a seed and a size.
func NewDraw(seed []byte, size uint64) *Draw {
	d := &Draw{seed: append([]byte(nil), seed...), size: size}
	if size > 1 {
		d.half = max(1, (uint(bits.Len64(size-1))+1)/2)
		d.mask = 1<<d.half - 1
	}
	return d
}

// Size is the number of registrations the draw covers.
func (d *Draw) Size() uint64 { return d.size }

// Place maps a registration index in [0, Size) to its place in line. Indexes
// outside the draw are returned unchanged: they arrived after it and queue FIFO.
func (d *Draw) Place(index uint64) uint64 {
	if d.size <= 1 || index >= d.size {
		return index
	}
	mac := hmac.New(sha256.New, d.seed)
	x := d.encrypt(mac, index)
	for x >= d.size {
		x = d.encrypt(mac, x)
	}
	return x
}

func (d *Draw) encrypt(mac hashWriter, x uint64) uint64 {
	l, r := x>>d.half, x&d.mask
	var msg [len("foyer-draw-v1") + 8 + 1 + 8]byte
	copy(msg[:], drawLabel)
	binary.BigEndian.PutUint64(msg[len(drawLabel):], d.size)
	var sum [sha256.Size]byte
	for round := range drawRounds {
		msg[len(drawLabel)+8] = byte(round)
		binary.BigEndian.PutUint64(msg[len(drawLabel)+9:], r)
		mac.Reset()
		mac.Write(msg[:])
		f := binary.BigEndian.Uint64(mac.Sum(sum[:0])[:8])
		l, r = r, l^(f&d.mask)
	}
	return l<<d.half | r
}

type hashWriter interface {
	Reset()
	Write([]byte) (int, error)
	Sum([]byte) []byte
}
