package waitingroom

import (
	"sync"
	"time"
)

// MaxSpentSeeds bounds the seeds a node remembers as answered, per room. It
// takes this many right answers within one seed lifetime (over 3,000 places a
// second, each paid for in hashes) to reach it; beyond it answers are refused
// with ErrChallengeBusy until the oldest seeds expire, rather than forgetting
// a seed that could then buy a second place.
const MaxSpentSeeds = 1 << 20

// spentSlot is how finely the spent set files seeds by when they expire: a
// slot is dropped whole once its last second has passed, so a seed is kept
// at most this long past its expiry.
const spentSlot = 30 * time.Second

// spentSeeds is the set of seeds this node took an answer for, each kept
// until its seed expires. It is the first, free filter: the store keeps the
// seeds that bought a place for every node sharing it (Joiner.Seed), in the
// join's own round trip. Here a seed is kept until it expires: after it checkAnswer refuses the seed as expired
// before the set is asked, so dropping it lets no replay in. Seeds are filed
// in slots by when they expire, and a slot is dropped whole once all of its
// seeds have, so a full set takes answers again as its oldest seeds expire
// (within spentSlot of the oldest's expiry; docs/bots.md, "Bots and abuse"), and
// memory stays one map entry of a 12-byte key per seed.
type spentSeeds struct {
	mu    sync.Mutex
	slots map[int64]map[seedID]struct{} // by expiry, in spentSlot units
	n     int
	// capacity is MaxSpentSeeds; tests make it smaller.
	capacity int
}

// spend marks id, whose seed expires at expires, as answered at now, or says
// why it cannot be: it was answered before, or the set is full.
func (s *spentSeeds) spend(id seedID, expires, now time.Time) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.prune(now)
	for _, slot := range s.slots {
		if _, ok := slot[id]; ok {
			return ErrSeedSpent
		}
	}
	limit := s.capacity
	if limit == 0 {
		limit = MaxSpentSeeds
	}
	if s.n >= limit {
		return ErrChallengeBusy
	}
	if s.slots == nil {
		s.slots = make(map[int64]map[seedID]struct{})
	}
	k := expires.Unix() / int64(spentSlot/time.Second)
	slot := s.slots[k]
	if slot == nil {
		slot = make(map[seedID]struct{})
		s.slots[k] = slot
	}
	slot[id] = struct{}{}
	s.n++
	return nil
}

// prune drops the slots whose every seed expired by now. There are a dozen
// slots at most (a seed's lifetime and the skew allowed, in spentSlot units).
func (s *spentSeeds) prune(now time.Time) {
	width := int64(spentSlot / time.Second)
	for k, slot := range s.slots {
		if (k+1)*width <= now.Unix() {
			s.n -= len(slot)
			delete(s.slots, k)
		}
	}
}

// forget takes back a spend whose join made no place.
func (s *spentSeeds) forget(id seedID) {
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, slot := range s.slots {
		if _, ok := slot[id]; ok {
			delete(slot, id)
			s.n--
		}
	}
}

// len is how many seeds are remembered.
func (s *spentSeeds) len() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.n
}
