package waitingroom

import (
	"encoding/hex"
	"time"
)

// DrawInfo is what the room publishes about its fair draw: before the start, the
// commitment to a seed; once the draw is made, the seed itself and the number of
// registrations it covered, with which anyone can check the commitment and
// recompute every place.
type DrawInfo struct {
	Room        string     `json:"room"`
	Enabled     bool       `json:"enabled"`
	Algorithm   string     `json:"algorithm,omitempty"`
	Commitment  string     `json:"commitment,omitempty"`
	CommittedAt *time.Time `json:"committed_at,omitempty"`
	// PrequeueStart and EventStart frame the registration window, so a reader can
	// see that the commitment came before the first registration.
	PrequeueStart *time.Time `json:"prequeue_start,omitempty"`
	EventStart    *time.Time `json:"event_start,omitempty"`
	Closed        bool       `json:"closed"`
	Seed          string     `json:"seed,omitempty"`
	Size          *uint64    `json:"size,omitempty"`
}

// DrawInfo describes the room's draw as this node knows it.
func (r *Room) DrawInfo() DrawInfo {
	s := r.settings()
	info := DrawInfo{Room: r.id, Enabled: s.ShuffleAtEventStart}
	if !info.Enabled {
		return info
	}
	info.Algorithm = DrawAlgorithm
	if !s.PrequeueStart.IsZero() {
		p := s.PrequeueStart
		info.PrequeueStart = &p
	}
	e := s.EventStart
	info.EventStart = &e
	r.mu.Lock()
	seed, at, d := r.seed, r.seedAt, r.draw
	r.mu.Unlock()
	if seed == nil {
		return info
	}
	info.Commitment = DrawCommitment(seed)
	info.CommittedAt = &at
	if d != nil {
		info.Closed = true
		info.Seed = hex.EncodeToString(seed)
		n := d.Size()
		info.Size = &n
	}
	return info
}
