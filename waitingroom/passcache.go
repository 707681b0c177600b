package waitingroom

import (
	"hash/maphash"
	"sync"
	"time"
)

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

// revocations is the set of pass IDs that must be refused before they expire.
type revocations struct {
	mu sync.RWMutex
	m  map[string]time.Time
}

func (r *revocations) add(id string, until time.Time) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.m == nil {
		r.m = make(map[string]time.Time)
	}
	r.m[id] = until
}

func (r *revocations) has(id string) bool {
	r.mu.RLock()
	_, ok := r.m[id]
	r.mu.RUnlock()
	return ok
}

func (r *revocations) prune(now time.Time) {
	r.mu.Lock()
	defer r.mu.Unlock()
	for id, until := range r.m {
		if !now.Before(until) {
			delete(r.m, id)
		}
	}
}
