package waitingroom

import (
	"sync"
	"time"
)

// expiringSet is a node's own set of keys that it forgets once each entry's
// forgetAt has passed: the revoked passes and the idled-out visitors, which
// the poll path reads on every status answer, and the passes signed again
// with the waitlist claim. Safe for concurrent use; the
// zero value is empty and ready.
type expiringSet[V interface{ forgetAt() time.Time }] struct {
	mu sync.RWMutex
	m  map[string]V
}

func (s *expiringSet[V]) put(key string, v V) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.m == nil {
		s.m = make(map[string]V)
	}
	s.m[key] = v
}

func (s *expiringSet[V]) get(key string) (V, bool) {
	s.mu.RLock()
	v, ok := s.m[key]
	s.mu.RUnlock()
	return v, ok
}

// has reports whether key is in the set.
func (s *expiringSet[V]) has(key string) bool {
	_, ok := s.get(key)
	return ok
}

// prune forgets the entries whose forgetAt is not after now.
func (s *expiringSet[V]) prune(now time.Time) {
	s.mu.Lock()
	defer s.mu.Unlock()
	for k, v := range s.m {
		if !now.Before(v.forgetAt()) {
			delete(s.m, k)
		}
	}
}
