package waitingroom

import (
	"encoding/hex"
	"time"
)

// DrawInfo is what the room publishes about its draws: before the start, the
// commitment to a seed; once the pre-queue's draw is made, the seed itself and
// the number of registrations it covered, with which anyone can check the
// commitment and recompute every place. A room with the random queueing method
// also lists its latest rolling draws; their seeds derive from the committed
// one, which it reveals when the room closes (or at the pre-queue's draw, which
// needs it).
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
	// Closed: the pre-queue's draw was made; Size is how many it covered.
	Closed bool    `json:"closed"`
	Seed   string  `json:"seed,omitempty"`
	Size   *uint64 `json:"size,omitempty"`
	// Epochs are the random method's latest draws, oldest first.
	Epochs []Epoch `json:"epochs,omitempty"`
}

// DrawInfo describes the room's draws as this node knows them.
func (r *Room) DrawInfo() DrawInfo {
	v := r.view.Load()
	s := v.settings
	info := DrawInfo{Room: r.id, Enabled: s.drawn() || len(v.snap.Epochs) > 0}
	if !info.Enabled {
		return info
	}
	info.Algorithm = DrawAlgorithm
	if !s.PrequeueStart.IsZero() {
		p := s.PrequeueStart
		info.PrequeueStart = &p
	}
	if !s.EventStart.IsZero() {
		e := s.EventStart
		info.EventStart = &e
	}
	info.Epochs = v.snap.Epochs
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
		n := d.Size()
		info.Size = &n
	}
	if d != nil || (len(v.snap.Epochs) > 0 && s.PhaseAt(r.now()) == Ended) {
		info.Seed = hex.EncodeToString(seed)
	}
	return info
}
