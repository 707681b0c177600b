package waitingroom

import (
	"context"
	"encoding/hex"
	"time"
)

// A phase's draw (docs/fairness.md, "A phase's draw"): a phase whose
// pre-queue ends in a draw (shuffle_at_start) has a seed of its own, fresh
// random, committed in the store before its pre-queue opens (the first
// write wins, whichever node makes it), and revealed once the store has
// closed the pre-queue's range of order keys, at the phase's start. Key k
// of the range [first, first+n) has the place first + p(k - first), p the
// draw's permutation (draw.go) of size n with the phase's seed itself, as
// the room's pre-queue draw uses the room's. The draw endpoint and the
// fairness report publish each phase's commitment, and once drawn its
// seed and range, from which anyone recomputes every place.

// PhaseDraw is one phase's draw as the draw endpoint and the fairness
// report publish it.
type PhaseDraw struct {
	Phase string `json:"phase"`
	// PrequeueStart and Start frame the registration window (absent when
	// the phase is no longer configured: its range still stands).
	PrequeueStart *time.Time `json:"prequeue_start,omitempty"`
	Start         time.Time  `json:"start"`
	// Commitment is SHA-256 of the seed (DrawCommitment), committed at
	// CommittedAt, which must be before PrequeueStart.
	Commitment  string     `json:"commitment,omitempty"`
	CommittedAt *time.Time `json:"committed_at,omitempty"`
	// Seed, FirstKey and DrawSize, once the phase started: the order keys
	// [FirstKey, FirstKey+DrawSize) were drawn with the seed.
	Seed     string  `json:"seed,omitempty"`
	FirstKey *uint64 `json:"first_key,omitempty"`
	DrawSize *uint64 `json:"draw_size,omitempty"`
}

// phaseSeed is a phase's committed seed as this node knows it.
type phaseSeed struct {
	seed []byte
	at   time.Time
}

// phaseDraw is a phase pre-queue the store recorded, with its permutation
// once it is drawn and this node knows the seed (nil otherwise).
type phaseDraw struct {
	PhaseRange
	draw *Draw
}

// phaseDrawSeeds are the phases that need a seed: those configured to draw,
// and those whose drawn range the store holds.
func phaseDrawSeeds(s Settings, ranges []PhaseRange) []string {
	var names []string
	seen := map[string]bool{}
	for _, ph := range s.Phases.configured().List() {
		if ph.ShuffleAtStart && !seen[ph.Name] {
			names, seen[ph.Name] = append(names, ph.Name), true
		}
	}
	for _, pr := range ranges {
		if pr.Draw && !seen[pr.Phase] {
			names, seen[pr.Phase] = append(names, pr.Phase), true
		}
	}
	return names
}

// syncPhaseDraws commits a seed for every phase that draws and has none
// known here yet (a node does it on its ticks, so the seed is in the
// store as soon as the phase is configured, before its pre-queue opens),
// and lines up the permutation of each range the store says was drawn.
func (r *Room) syncPhaseDraws(ctx context.Context, now time.Time, snap Snapshot) error {
	names := phaseDrawSeeds(r.settings(), snap.PhaseRanges)
	if len(names) == 0 && len(snap.PhaseRanges) == 0 {
		return nil
	}
	for _, name := range names {
		r.mu.Lock()
		_, ok := r.phaseSeeds[name]
		r.mu.Unlock()
		if ok {
			continue
		}
		seed, at, err := r.store.PhaseSeed(ctx, r.id, name, r.newDrawSeed(), now)
		if err != nil {
			return err
		}
		r.mu.Lock()
		if r.phaseSeeds == nil {
			r.phaseSeeds = map[string]phaseSeed{}
		}
		r.phaseSeeds[name] = phaseSeed{seed: seed, at: at}
		r.mu.Unlock()
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	out := make([]phaseDraw, 0, len(snap.PhaseRanges))
	for _, pr := range snap.PhaseRanges {
		pd := phaseDraw{PhaseRange: pr}
		if pr.Closed && pr.Draw {
			for _, h := range r.phaseDraws {
				if h.PhaseRange == pr && h.draw != nil {
					pd.draw = h.draw
				}
			}
			if ps, ok := r.phaseSeeds[pr.Phase]; ok && pd.draw == nil {
				pd.draw = NewDraw(ps.seed, pr.Count)
			}
		}
		out = append(out, pd)
	}
	r.phaseDraws = out
	return nil
}

// restorePhaseSeeds puts back, in a store that lost them, the phases'
// seeds this node knows, with their original commitment times.
func (r *Room) restorePhaseSeeds(ctx context.Context) error {
	r.mu.Lock()
	seeds := make(map[string]phaseSeed, len(r.phaseSeeds))
	for name, ps := range r.phaseSeeds {
		seeds[name] = ps
	}
	r.mu.Unlock()
	for name, ps := range seeds {
		if _, _, err := r.store.PhaseSeed(ctx, r.id, name, ps.seed, ps.at); err != nil {
			return err
		}
	}
	return nil
}

// phaseDrawInfo publishes each phase's draw: the configured phases that
// draw, then the drawn ranges of phases no longer configured. The seed is
// revealed only once the store closed the phase's range, at its start.
func (r *Room) phaseDrawInfo(s Settings, ranges []PhaseRange) []PhaseDraw {
	names := phaseDrawSeeds(s, ranges)
	if len(names) == 0 {
		return nil
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	out := make([]PhaseDraw, 0, len(names))
	for _, name := range names {
		pd := PhaseDraw{Phase: name}
		if ph, ok := s.Phases.configured().Find(name); ok {
			opens := ph.PrequeueStart.UTC()
			pd.PrequeueStart, pd.Start = &opens, ph.Start.UTC()
		}
		ps, seeded := r.phaseSeeds[name]
		if seeded {
			at := ps.at.UTC()
			pd.Commitment, pd.CommittedAt = DrawCommitment(ps.seed), &at
		}
		for _, pr := range ranges {
			if pr.Phase != name {
				continue
			}
			pd.Start = pr.Starts.UTC()
			if pr.Closed && pr.Draw {
				first, n := pr.Start, pr.Count
				pd.FirstKey, pd.DrawSize = &first, &n
				if seeded {
					pd.Seed = hex.EncodeToString(ps.seed)
				}
			}
		}
		out = append(out, pd)
	}
	return out
}

// phaseSkew is how far ahead of this node's clock another node's may be:
// a fan who joined after this node's last look at the store, within it of
// a pre-queue's opening, may be in its range already.
const phaseSkew = 2 * time.Second

// phasePrequeue says whether key k is in a phase pre-queue whose places
// are not known yet: a range the store holds open, a drawn one whose seed
// this node lacks, or, for a key handed out after this node's last look,
// the pre-queue its settings say is open (or about to be). It returns the
// phase's start and whether it ends in a draw.
func (v *view) phasePrequeue(k uint64, now time.Time) (starts time.Time, draw, ok bool) {
	open := false
	for _, pd := range v.phaseDraws {
		switch {
		case !pd.Closed:
			open = true
			if k >= pd.Start {
				return pd.Starts, pd.Draw, true
			}
		case pd.Holds(k) && pd.Draw && pd.draw == nil:
			return pd.Starts, true, true
		}
	}
	if open || k < v.snap.Seq {
		return time.Time{}, false, false
	}
	phases := v.settings.Phases.configured()
	pq := phases.prequeueAt(now)
	if pq.Phase == "" {
		pq = phases.prequeueAt(now.Add(phaseSkew))
	}
	if pq.Phase == "" {
		return time.Time{}, false, false
	}
	for _, pd := range v.phaseDraws {
		if pd.Phase == pq.Phase {
			return time.Time{}, false, false // drawn already
		}
	}
	return pq.Starts, pq.Draw, true
}

// phasePlace is k's place if a phase's draw placed it.
func (v *view) phasePlace(k uint64) (uint64, bool) {
	for _, pd := range v.phaseDraws {
		if pd.Closed && pd.Draw && pd.draw != nil && pd.Holds(k) {
			return pd.Start + pd.draw.Place(k-pd.Start), true
		}
	}
	return 0, false
}

// phaseDrawn reports whether the room draws in a phase: configured to, or
// drawn already.
func (v *view) phaseDrawn() bool {
	if v.settings.Phases.configured().hasDraws() {
		return true
	}
	for _, pd := range v.phaseDraws {
		if pd.Draw {
			return true
		}
	}
	return false
}
