package waitingroom

import (
	"crypto/sha256"
	"encoding/base64"
	"encoding/binary"
	"hash/maphash"
	"sync"
	"time"

	"github.com/foyer-dev/foyer/waitingroom/pass"
)

// DefaultIssuer is the "iss" of passes when the operator names no other.
const DefaultIssuer = pass.DefaultIssuer

// Pass is an admission pass's claims. The type lives in waitingroom/pass, which
// origins import without the admission code; the room's API names it here so
// that its many callers read as before.
type Pass = pass.Claims

// SessionPassID is the pass id of the session a visitor holds in room until
// expires. A room hands out one session per visitor, and every pass issued for
// it (to the fan, and to anyone who claims with a copy of their ticket) carries
// this id, so that revoking one pass refuses them all. It is derived rather
// than kept: the store knows each session's end, so a claim on any node, or
// after a store restarted empty was re-seeded from passes (whose "exp" keeps
// the end to the second), names the same id without a field per session.
// Anyone holding a pass can recompute it from "aud", "sub" and "exp"; that
// gives nothing, since a pass is only honoured with the room's signature.
func SessionPassID(room, visitor string, expires time.Time) string {
	h := sha256.New()
	h.Write([]byte("foyer-session-pass-v1\x00"))
	h.Write([]byte(room))
	h.Write([]byte{0})
	h.Write([]byte(visitor))
	h.Write(binary.BigEndian.AppendUint64([]byte{0}, uint64(expires.Unix())))
	var sum [sha256.Size]byte
	return base64.RawURLEncoding.EncodeToString(h.Sum(sum[:0])[:16])
}

// IssuePass signs p with the key. issuer becomes the "iss" claim.
func (k *SigningKey) IssuePass(p Pass, issuer string) (string, error) {
	return k.signer.Sign(p, issuer)
}

// passCache remembers passes whose signature was already checked, so that an
// admitted visitor's every request costs a map lookup instead of an EdDSA verify
// (which costs about a third of a whole proxied request). Entries die with their
// pass; the cache is bounded and sheds arbitrary entries when full, which only
// costs a re-verify.
type passCache struct {
	seed     maphash.Seed
	shards   [passShards]passShard
	perShard int
}

const passShards = 32

type passShard struct {
	mu sync.RWMutex
	m  map[string]Pass
}

func newPassCache(capacity int) *passCache {
	c := &passCache{seed: maphash.MakeSeed(), perShard: max(64, capacity/passShards)}
	for i := range c.shards {
		c.shards[i].m = make(map[string]Pass)
	}
	return c
}

func (c *passCache) shard(token string) *passShard {
	return &c.shards[maphash.String(c.seed, token)%passShards]
}

func (c *passCache) get(token string, now time.Time) (Pass, bool) {
	s := c.shard(token)
	s.mu.RLock()
	p, ok := s.m[token]
	s.mu.RUnlock()
	if !ok || !now.Before(p.ExpiresAt) {
		return Pass{}, false
	}
	return p, true
}

func (c *passCache) put(token string, p Pass, now time.Time) {
	s := c.shard(token)
	s.mu.Lock()
	defer s.mu.Unlock()
	if len(s.m) >= c.perShard {
		// Shed the expired first; if that frees nothing, drop a quarter at random
		// (map order is random enough for a cache).
		drop := len(s.m) / 4
		for k, v := range s.m {
			if !now.Before(v.ExpiresAt) {
				delete(s.m, k)
			} else if drop > 0 {
				delete(s.m, k)
				drop--
			}
		}
	}
	s.m[token] = p
}
