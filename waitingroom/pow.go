package waitingroom

import (
	"context"
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/binary"
	"hash"
	"math/bits"
	"net/netip"
	"time"

	"github.com/foyer-dev/foyer/waitingroom/clientlimit"
)

// The proof of work (docs/bots.md, "Bots and abuse"). A seed is stateless: it says
// when it expires and how many bits it asks for, and carries a MAC, keyed by
// a secret derived from the room's signing key, over those, a random
// identifier, the room and the client's address. Any node holding the key
// checks it without the store, and a seed issued to one address is worth
// nothing from another. A seed buys one place for the room: the store
// records it in the join that makes the place, for every node sharing the
// store (Joiner.Seed), and each node also remembers the seeds it took an
// answer for until they expire (spentSeeds), which refuses a replay to the
// same node without a store call.

// SeedLifetime is how long a seed can be answered. A phone needs a second or
// two; a page left in a background tab may be throttled for longer, and gets
// a fresh seed on its next try.
const SeedLifetime = 5 * time.Minute

// seedSkew is how far another node's clock may run ahead of this one's: a
// seed claiming to expire later than SeedLifetime plus this from now was not
// issued by a node of this room.
const seedSkew = 30 * time.Second

const (
	seedVersion = 1
	seedIDSize  = 12
	seedMACSize = 16
	// seedSize is version, bits, expiry (Unix seconds), identifier and MAC:
	// short enough that seed and a nonce of up to 17 digits are one
	// SHA-256 block, which keeps a solver in a page fast.
	seedSize = 1 + 1 + 8 + seedIDSize + seedMACSize
	// maxNonceDigits bounds the nonce: 10^32 tries is more than anyone does.
	maxNonceDigits = 32
)

var seedEncoding = base64.RawURLEncoding

// seedID identifies a seed in the spent set.
type seedID [seedIDSize]byte

// NewChallenge returns the status that asks a newcomer from client to solve
// the room's puzzle, and true; or false when the room asks nothing of
// newcomers now. Admit hands it out; this is for tools and tests.
func (r *Room) NewChallenge(client netip.Addr) (Status, bool) { return r.newChallenge(client) }

// newChallenge returns the status that asks a newcomer from client to solve
// the room's puzzle, and true; or false when the room asks nothing of
// newcomers now: the challenge is off, or no place would be made (sold out,
// closed, not open yet), which a join says. Nothing is stored: the seed is
// checked from what it carries when the answer comes.
func (r *Room) newChallenge(client netip.Addr) (Status, bool) {
	now := r.now()
	v := r.view.Load()
	s := v.settings
	if !s.Challenge.On() || s.SoldOut || s.QueueingMethod == Reject || s.QueueingMethod == Passthrough {
		return Status{}, false
	}
	if p := s.PhaseAt(now); p == NotYetOpen || p == Ended {
		return Status{}, false
	}
	var id seedID
	_, _ = rand.Read(id[:]) // crypto/rand never fails on supported platforms
	seed := r.keys.Current().sealSeed(r.id, ClientNetwork(client), s.Challenge.PoWBits, now.Add(SeedLifetime), id)
	r.stats.Challenges.Add(1)
	return Status{
		Room:           r.id,
		Title:          s.Title,
		State:          StateChallenge,
		RefreshSeconds: minRefresh,
		Waiting:        v.waiting(),
		Reconnecting:   !v.healthy,
		Challenge: &ChallengeOffer{
			Algorithm: PoWAlgorithm,
			Seed:      seedEncoding.EncodeToString(seed),
			Bits:      s.Challenge.PoWBits,
		},
	}, true
}

// JoinWithAnswer checks a newcomer's answer to a seed and, when it is right
// and the seed was not answered on this node before, joins them, as Admit
// does for a RequestJoin with no ticket and no account. A refused answer is
// one of the Err* above and makes no place; checking it costs an HMAC per key
// of the room at most (one, unless a rotation is under way) and one SHA-256,
// and no store call.
func (r *Room) JoinWithAnswer(ctx context.Context, client netip.Addr, seed, nonce string) (Visit, error) {
	return r.answer(ctx, &arrival{client: client}, Answer{Seed: seed, Nonce: nonce})
}

// checkAnswer verifies seed and nonce for client at now, in the order that
// spends the least on a bad answer: form, MAC, expiry, then the hash.
func (r *Room) checkAnswer(client, seed, nonce string, now time.Time) (seedID, time.Time, error) {
	var id seedID
	var expires time.Time
	if len(nonce) == 0 || len(nonce) > maxNonceDigits || seedEncoding.EncodedLen(seedSize) != len(seed) {
		return id, expires, ErrAnswerMalformed
	}
	for i := 0; i < len(nonce); i++ {
		if nonce[i] < '0' || nonce[i] > '9' {
			return id, expires, ErrAnswerMalformed
		}
	}
	var raw [seedSize]byte
	if n, err := seedEncoding.Decode(raw[:], []byte(seed)); err != nil || n != seedSize || raw[0] != seedVersion {
		return id, expires, ErrAnswerMalformed
	}
	if !r.keys.verifySeed(raw[:], r.id, client) {
		return id, expires, ErrSeedInvalid
	}
	need := int(raw[1])
	expires = time.Unix(int64(binary.BigEndian.Uint64(raw[2:10])), 0)
	if !now.Before(expires) {
		return id, expires, ErrSeedExpired
	}
	if expires.After(now.Add(SeedLifetime + seedSkew)) {
		return id, expires, ErrSeedInvalid // not a lifetime any node of ours gives
	}
	if need < r.settings().Challenge.PoWBits {
		// Handed out before the difficulty was raised: a fan solves a new
		// seed at today's difficulty, or a stock of easy seeds would
		// outlast the raise.
		return id, expires, ErrSeedOutdated
	}
	if LeadingZeroBits(raw[:], nonce) < need {
		return id, expires, ErrWrongNonce
	}
	copy(id[:], raw[10:10+seedIDSize])
	return id, expires, nil
}

// LeadingZeroBits counts the zero bits at the start of SHA-256(seed || nonce).
func LeadingZeroBits(seed []byte, nonce string) int {
	var buf [seedSize + maxNonceDigits]byte
	msg := append(append(buf[:0], seed...), nonce...)
	sum := sha256.Sum256(msg)
	n := 0
	for _, b := range sum {
		if b != 0 {
			return n + bits.LeadingZeros8(b)
		}
		n += 8
	}
	return n
}

// sealSeed makes a seed: version, bits, expiry, id, and the MAC over them
// and the room and client they are for.
func (k *SigningKey) sealSeed(room, client string, bits int, expires time.Time, id seedID) []byte {
	out := make([]byte, 0, seedSize)
	out = append(out, seedVersion, byte(bits))
	out = binary.BigEndian.AppendUint64(out, uint64(expires.Unix()))
	out = append(out, id[:]...)
	return append(out, k.seedMAC(out, room, client)...)
}

// seedMAC is the MAC of a seed's first bytes for room and client. Keyed
// HMAC states are pooled, as for tickets: keying one costs as much again as
// the MAC.
func (k *SigningKey) seedMAC(head []byte, room, client string) []byte {
	m, _ := k.seedMACs.Get().(hash.Hash)
	if m == nil {
		m = hmac.New(sha256.New, k.seedKey)
	}
	m.Reset()
	m.Write(head)
	m.Write([]byte{byte(len(room))})
	m.Write([]byte(room))
	m.Write([]byte(client))
	out := m.Sum(make([]byte, 0, sha256.Size))[:seedMACSize]
	k.seedMACs.Put(m)
	return out
}

// verifySeed checks a seed's MAC with the signing key, then with the others:
// a seed handed out just before a key rotation is still good.
func (kr *Keyring) verifySeed(raw []byte, room, client string) bool {
	head, mac := raw[:seedSize-seedMACSize], raw[seedSize-seedMACSize:]
	if hmac.Equal(mac, kr.current.seedMAC(head, room, client)) {
		return true
	}
	for _, k := range kr.others {
		if hmac.Equal(mac, k.seedMAC(head, room, client)) {
			return true
		}
	}
	return false
}

// ClientNetwork is the network a client's address counts as, for the seeds
// it is handed and for join_limit alike: an IPv4 address alone, or the /64 an
// IPv6 address is in (one subscriber's network, whose devices may change
// their own address at any time). An invalid address is ::/64, shared by all
// such.
func ClientNetwork(addr netip.Addr) string { return clientlimit.KeyOf(addr).String() }
