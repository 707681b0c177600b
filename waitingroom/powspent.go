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

// spentSeeds is the set of seeds this node took an answer for, each kept
// until the second its seed expires: after it checkAnswer refuses the seed as
// expired before the set is asked, so dropping it lets no replay in. Seeds
// are filed by the second they expire, so a full set takes answers again as
// soon as its oldest seeds expire (README, "Bots and abuse"), and pruning
// costs what expired, never a walk of the whole set.
type spentSeeds struct {
	mu      sync.Mutex
	seen    map[seedID]int64   // the seed's expiry, Unix seconds
	expires map[int64][]seedID // the seeds expiring in each second
	pruned  int64              // every second before it is pruned
	// capacity is MaxSpentSeeds; tests make it smaller.
	capacity int
}

// spend marks id, whose seed expires at expires, as answered at now, or says
// why it cannot be: it was answered before, or the set is full.
func (s *spentSeeds) spend(id seedID, expires, now time.Time) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.prune(now.Unix())
	if _, ok := s.seen[id]; ok {
		return ErrSeedSpent
	}
	limit := s.capacity
	if limit == 0 {
		limit = MaxSpentSeeds
	}
	if len(s.seen) >= limit {
		return ErrChallengeBusy
	}
	if s.seen == nil {
		s.seen, s.expires = make(map[seedID]int64), make(map[int64][]seedID)
	}
	at := expires.Unix()
	s.seen[id] = at
	s.expires[at] = append(s.expires[at], id)
	return nil
}

// prune drops the seeds that expired by now (Unix seconds): a seed is
// refused as expired from its expiry second on.
func (s *spentSeeds) prune(now int64) {
	if s.pruned == 0 || now-s.pruned > int64((SeedLifetime+seedSkew)/time.Second) {
		// The first call, or a silence longer than any seed lives: walk
		// the buckets there are rather than every second since.
		for at, ids := range s.expires {
			if at <= now {
				s.drop(at, ids)
			}
		}
		s.pruned = now + 1
		return
	}
	for ; s.pruned <= now; s.pruned++ {
		if ids, ok := s.expires[s.pruned]; ok {
			s.drop(s.pruned, ids)
		}
	}
}

func (s *spentSeeds) drop(at int64, ids []seedID) {
	for _, id := range ids {
		if s.seen[id] == at {
			delete(s.seen, id)
		}
	}
	delete(s.expires, at)
}

// forget takes back a spend whose join made no place. Its entry in the
// expiry buckets stays until that second, and matches nothing.
func (s *spentSeeds) forget(id seedID) {
	s.mu.Lock()
	defer s.mu.Unlock()
	delete(s.seen, id)
}

// len is how many seeds are remembered.
func (s *spentSeeds) len() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return len(s.seen)
}
