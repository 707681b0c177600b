package waitingroom

import (
	"encoding/hex"
	"time"
)

// DrawInfo is what the room publishes about its draws at <path_prefix>/draw
// (docs/PROTOCOL.md, "The draw endpoint"): before the start, the commitment
// to a seed; once the pre-queue's draw is made, the seed itself and the number
// of order keys it covered, with which anyone can check the commitment and
// recompute every place. A room with the random queueing method also lists its
// latest rolling draws; their seeds derive from the committed one, which it
// reveals when the fairness report is published, at the sell-out or the
// close (or at the pre-queue's draw, which needs it).
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
	// Closed: the pre-queue's draw was made (not that the room has closed:
	// a random room without a pre-queue draw says false to the end);
	// DrawSize is how many order keys (0 to DrawSize-1) it covered, the name
	// the fairness report uses too.
	Closed   bool    `json:"closed"`
	Seed     string  `json:"seed,omitempty"`
	DrawSize *uint64 `json:"draw_size,omitempty"`
	// Size is DrawSize under the name this endpoint first gave it.
	//
	// Deprecated: read draw_size; size will be removed in a later release.
	Size *uint64 `json:"size,omitempty"`
	// Epochs are the random method's latest draws, oldest first.
	Epochs []DrawEpoch `json:"epochs,omitempty"`
	// Lanes are the priority lanes' weights (Lanes.String) and
	// LanesCommitment their commitment (LaneCommitment), published before
	// the room opens; the fairness report shows every split was made by
	// them (docs/fairness.md, "Priority lanes"). Absent without lanes.
	Lanes           string `json:"lanes,omitempty"`
	LanesCommitment string `json:"lanes_commitment,omitempty"`
	// LanePhases are the room's phases with the lanes' weights in force in
	// each and their commitment, made before the phase starts
	// (lanecommit.go); absent without lanes or phases.
	LanePhases []PhaseLaneCommitment `json:"lane_phases,omitempty"`
	// PhaseDraws are the draws of the phases' own pre-queues
	// (phasedraw.go): each phase's commitment before its pre-queue opens,
	// its seed and range once it started. Absent without them.
	PhaseDraws []PhaseDraw `json:"phase_draws,omitempty"`
}

// DrawEpoch is one rolling draw of the random method as the draw endpoint
// shows it, in the fairness report's words: epoch Epoch placed the order
// keys [Start, Start+Count) among the places [Start, Start+Count).
type DrawEpoch struct {
	Epoch uint64 `json:"epoch"`
	Start uint64 `json:"start"`
	Count uint64 `json:"count"`
	// Number and Size are Epoch and Count under the names this endpoint
	// first gave them.
	//
	// Deprecated: read epoch and count; these will be removed in a later release.
	Number uint64 `json:"number"`
	Size   uint64 `json:"size"`
}

// drawEpochs turns the store's epochs into their public form.
func drawEpochs(es []Epoch) []DrawEpoch {
	if len(es) == 0 {
		return nil
	}
	out := make([]DrawEpoch, len(es))
	for i, e := range es {
		out[i] = DrawEpoch{Epoch: e.Number, Start: e.Start, Count: e.Size, Number: e.Number, Size: e.Size}
	}
	return out
}

// DrawInfo describes the room's draws as this node knows them.
func (r *Room) DrawInfo() DrawInfo {
	v := r.view.Load()
	s := v.settings
	info := DrawInfo{Room: r.id, Enabled: v.draws()}
	if l := s.RoomLanes(); l.On() {
		// The room's own weights over all its lanes; a phase's are its own
		// (docs/fairness.md, "Priority lanes").
		info.Lanes = l.String()
		info.LanesCommitment = LaneCommitment(info.Lanes)
		info.LanePhases = phaseLaneCommitments(s, r.laneCommitTimes())
	}
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
	info.Epochs = drawEpochs(v.snap.Epochs)
	info.PhaseDraws = r.phaseDrawInfo(s, v.snap.PhaseRanges)
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
		info.DrawSize, info.Size = &n, &n
	}
	if d != nil || (len(v.snap.Epochs) > 0 && reportPublished(s, r.now())) {
		info.Seed = hex.EncodeToString(seed)
	}
	return info
}
