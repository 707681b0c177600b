package waitingroom

import (
	"sync"
	"time"
)

// MaxSpentSeeds bounds the seeds a node remembers as answered, per room. It
// takes this many right answers within one seed lifetime (over 3,000 places a
// second, each paid for in hashes) to reach it; beyond it answers are refused
// with ErrChallengeBusy until older seeds expire, rather than forgetting a
// seed that could then buy a second place.
const MaxSpentSeeds = 1 << 20

// spentGeneration is how long a generation of spent seeds is kept before it
// is dropped whole: a seed's lifetime, plus the clock skew between nodes that
// checkAnswer allows, so that every seed in a dropped generation has expired.
const spentGeneration = SeedLifetime + seedSkew

// spentSeeds is the set of seeds this node took an answer for. It is two
// generations of a map: seeds are added to the current one, and once it is a
// generation old it becomes the previous one and the previous one is
// dropped. A seed spent before the previous generation began expired at the
// latest one generation after it was spent, so dropping it lets no replay in
// (checkAnswer refuses the seed as expired), and memory stays within
// MaxSpentSeeds entries of a 12-byte key.
type spentSeeds struct {
	mu       sync.Mutex
	cur      map[seedID]struct{}
	prev     map[seedID]struct{}
	began    time.Time // when cur began
	capacity int       // MaxSpentSeeds; tests make it smaller
}

// spend marks id as answered at now, or says why it cannot be: it was
// answered before, or the set is full.
func (s *spentSeeds) spend(id seedID, now time.Time) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if age := now.Sub(s.began); s.cur == nil || age >= spentGeneration {
		s.prev, s.cur, s.began = s.cur, make(map[seedID]struct{}), now
		if age >= 2*spentGeneration {
			s.prev = nil // everything in it expired a generation ago
		}
	}
	if _, ok := s.cur[id]; ok {
		return ErrSeedSpent
	}
	if _, ok := s.prev[id]; ok {
		return ErrSeedSpent
	}
	limit := s.capacity
	if limit == 0 {
		limit = MaxSpentSeeds
	}
	if len(s.cur)+len(s.prev) >= limit {
		return ErrChallengeBusy
	}
	s.cur[id] = struct{}{}
	return nil
}

// forget takes back a spend whose join made no place.
func (s *spentSeeds) forget(id seedID) {
	s.mu.Lock()
	defer s.mu.Unlock()
	delete(s.cur, id)
	delete(s.prev, id)
}

// len is how many seeds are remembered.
func (s *spentSeeds) len() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return len(s.cur) + len(s.prev)
}
