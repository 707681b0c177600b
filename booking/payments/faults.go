package payments

import (
	"crypto/sha256"
	"encoding/binary"
	"math"
	"sync"
)

// Faults are test and rehearsal faults of the Fake, all off in the zero
// value: a share of payments meet an outage of their own, as the ones a
// provider's partial outage hits (docs/rehearsal.md, "An origin that fails
// 2% of checkouts").
type Faults struct {
	// FailShare is the share of payments, 0 to 1, whose creation fails with
	// ErrUnavailable. Which ones is decided by the idempotency key alone, so
	// a retry of the same payment meets the same fate.
	FailShare float64
	// FailAttempts is how many creation attempts of such a payment fail
	// before one goes through (0 or 1: the first only).
	FailAttempts int
}

// faultState counts the attempts of the payments the faults hit. It holds
// one entry per payment hit, a FailShare of the payments created.
type faultState struct {
	cfg      Faults
	mu       sync.Mutex
	attempts map[string]int
}

func newFaultState(cfg Faults) *faultState {
	return &faultState{cfg: cfg, attempts: map[string]int{}}
}

// fails reports whether this creation attempt of the payment with key is
// one the faults fail.
func (s *faultState) fails(key string) bool {
	if s.cfg.FailShare <= 0 || !chosen(key, s.cfg.FailShare) {
		return false
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	n := s.attempts[key]
	if n >= max(1, s.cfg.FailAttempts) {
		return false
	}
	s.attempts[key] = n + 1
	return true
}

// chosen reports whether key falls in the share: the first 8 bytes of its
// SHA-256 as a fraction of 2^64.
func chosen(key string, share float64) bool {
	sum := sha256.Sum256([]byte(key))
	return float64(binary.BigEndian.Uint64(sum[:8])) < share*math.Exp2(64)
}
