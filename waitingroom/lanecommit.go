package waitingroom

import (
	"context"
	"maps"
	"strings"
	"time"
)

// The commitment to each phase's lane weights (docs/fairness.md, "Priority
// lanes"), made as the draw's seed is: the store keeps the first time each
// phase's commitment (LaneCommitment of its weights) was made, on whichever
// node made it, so a commitment made before the phase's start stays dated
// before it, and weights changed after it carry a commitment dated after
// it, which the lane check reports. Nodes commit on their ticks, never on a
// fan's request.

// PhaseLaneWeights are the lanes' weights in force in phase ph of s: the
// room's lanes with the phase's weights, or the room's where it sets none.
func (s Settings) PhaseLaneWeights(ph ScheduledPhase) Lanes {
	room := s.RoomLanes()
	if ph.Settings.Has("lanes") {
		return ph.Settings.Values().Lanes.weighed(room)
	}
	return room
}

// laneCommitKey keys a phase's commitment in the room's cache.
func laneCommitKey(phase, commitment string) string { return phase + ":" + commitment }

// syncLaneCommits commits every phase's lane weights not yet committed by
// this node: before the phase's start when the room runs, at once (and so
// dated late) when the phase was configured after it started.
func (r *Room) syncLaneCommits(ctx context.Context, now time.Time) error {
	s := r.settings().Unphased()
	if s.Phases.Len() == 0 || !s.RoomLanes().On() {
		return nil
	}
	for _, ph := range s.Phases.List() {
		c := LaneCommitment(s.PhaseLaneWeights(ph).String())
		key := laneCommitKey(ph.Name, c)
		r.mu.Lock()
		_, done := r.laneCommits[key]
		r.mu.Unlock()
		if done {
			continue
		}
		at, err := r.store.CommitLanes(ctx, r.id, ph.Name, c, now)
		if err != nil {
			return err
		}
		r.mu.Lock()
		if r.laneCommits == nil {
			r.laneCommits = map[string]time.Time{}
		}
		r.laneCommits[key] = at
		r.mu.Unlock()
	}
	return nil
}

// restoreLaneCommits puts back, after a loss of the store, the phases' lane
// commitments this node knows with the times they were first made: the
// store keeps the first time of each, so a node that starts afresh and
// commits them again is told the original time, not the time since the
// loss.
func (r *Room) restoreLaneCommits(ctx context.Context) error {
	for key, at := range r.laneCommitTimes() {
		phase, c, _ := strings.Cut(key, ":")
		if _, err := r.store.CommitLanes(ctx, r.id, phase, c, at); err != nil {
			return err
		}
	}
	return nil
}

// laneCommitTimes are the commitments this node knows, by laneCommitKey.
func (r *Room) laneCommitTimes() map[string]time.Time {
	r.mu.Lock()
	defer r.mu.Unlock()
	return maps.Clone(r.laneCommits)
}

// checkLanesKept refuses a change of the lanes' weights in force in a
// running phase: they were committed before it started (docs/fairness.md,
// "Priority lanes").
func checkLanesKept(before, after Settings, now time.Time) error {
	cur := before.Phases.active(now)
	if cur == nil {
		return nil
	}
	if b, a := before.At(now).LanesInForce(), after.At(now).LanesInForce(); b != a {
		return settingErr("lanes", "phase %q is running, and its lanes' weights %s were committed before it started: "+
			"they cannot change until it ends (the change would make them %s)", cur.Name, b, a)
	}
	return nil
}

// phaseLaneCommitments publishes each phase's weights with their commitment
// and the time this node knows it was made (nil before it is).
func phaseLaneCommitments(s Settings, commits map[string]time.Time) []PhaseLaneCommitment {
	s = s.Unphased()
	if s.Phases.Len() == 0 || !s.RoomLanes().On() {
		return nil
	}
	var out []PhaseLaneCommitment
	for _, ph := range s.Phases.List() {
		w := s.PhaseLaneWeights(ph).String()
		p := PhaseLaneCommitment{Name: ph.Name, Start: ph.Start.UTC(), End: ph.End.UTC(), Weights: w, Commitment: LaneCommitment(w)}
		if at, ok := commits[laneCommitKey(ph.Name, p.Commitment)]; ok {
			at = at.UTC()
			p.CommittedAt = &at
		}
		out = append(out, p)
	}
	return out
}

// PhaseLaneCommitment is one phase's lane weights as the draw endpoint
// publishes them before the phase starts.
type PhaseLaneCommitment struct {
	Name        string     `json:"name"`
	Start       time.Time  `json:"start"`
	End         time.Time  `json:"end"`
	Weights     string     `json:"weights"`
	Commitment  string     `json:"commitment"`
	CommittedAt *time.Time `json:"committed_at,omitempty"`
}
