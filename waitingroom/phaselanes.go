package waitingroom

import (
	"fmt"
	"time"
)

// Per-phase lane weights in the fairness report (docs/fairness.md, "Priority
// lanes"): a phase may set the lanes' weights, so the lanes report lists
// every phase with the weights in force in it, and CheckLanes replays each
// step with the weights in force at the step's time, the phase's or, outside
// every phase that sets them, the room's.

// PhaseLanes is one phase in the lanes report: its times, the lanes' weights
// in force in it (Lanes.String over the room's lanes: the phase's own, or
// the room's when it sets none), and what each lane let in during it.
type PhaseLanes struct {
	// The phase, its weights and their commitment, as the draw endpoint
	// published them (lanecommit.go); CommittedAt must be before Start.
	PhaseLaneCommitment
	// Lanes are the lanes, by number, with the places each let in during
	// the phase and the times of the first and last of them.
	Lanes []PhaseLaneAdmissions `json:"lanes"`
}

// PhaseLaneAdmissions are one lane's admissions within a phase.
type PhaseLaneAdmissions struct {
	Name     string     `json:"name"`
	Weight   int        `json:"weight"`
	Admitted uint64     `json:"admitted"`
	First    *time.Time `json:"first,omitempty"`
	Last     *time.Time `json:"last,omitempty"`
}

// phaseLanes lists s's phases for the lanes report, with the weights in
// force in each over the room's lanes and the admissions of lanes that fell
// in it; nil without phases.
func phaseLanes(s Settings, commits map[string]time.Time, lanes []LaneAdmissions) []PhaseLanes {
	var out []PhaseLanes
	for _, c := range phaseLaneCommitments(s, commits) {
		p := PhaseLanes{PhaseLaneCommitment: c}
		w, _ := ParseLanes(c.Weights)
		for i, l := range w.List() {
			pl := PhaseLaneAdmissions{Name: l.Name, Weight: l.Weight}
			if i < len(lanes) {
				for _, a := range lanes[i].Admissions {
					if a.At.Before(c.Start) || !a.At.Before(c.End) {
						continue
					}
					at := a.At
					if pl.First == nil {
						pl.First = &at
					}
					pl.Last = &at
					pl.Admitted += a.Count
				}
			}
			p.Lanes = append(p.Lanes, pl)
		}
		out = append(out, p)
	}
	return out
}

// phaseWeights checks the report's phases against its lanes (the same
// lanes, in the same order, as its weights: only the weights differ) and
// returns the weights' text in force at an instant: the phase's in force
// then, else the report's own.
func phaseWeights(rep LanesReport, room Lanes, problem func(string, ...any)) func(time.Time) string {
	own := room.String()
	for _, p := range rep.Phases {
		l, err := ParseLanes(p.Weights)
		same := err == nil && l.Len() == room.Len()
		for i := 0; same && i < l.Len(); i++ {
			same = l.Name(i) == room.Name(i)
		}
		if !same {
			problem("phase %s: weights %q are not over the room's lanes %q", p.Name, p.Weights, own)
		}
		if !p.Start.Before(p.End) {
			problem("phase %s: starts at %s, not before its end", p.Name, p.Start.UTC().Format(time.RFC3339))
		}
		// The weights were committed before the phase started, as the
		// draw's seed is before the pre-queue opens.
		switch {
		case p.Commitment != LaneCommitment(p.Weights):
			problem("phase %s: the commitment %s does not match the weights %q", p.Name, p.Commitment, p.Weights)
		case p.CommittedAt == nil:
			problem("phase %s: no time of commitment", p.Name)
		case !p.CommittedAt.Before(p.Start):
			problem("phase %s: the weights were committed at %s, not before the phase started at %s", p.Name,
				p.CommittedAt.UTC().Format(time.RFC3339Nano), p.Start.UTC().Format(time.RFC3339Nano))
		}
	}
	return func(at time.Time) string {
		for _, p := range rep.Phases {
			if !at.Before(p.Start) && at.Before(p.End) {
				return p.Weights
			}
		}
		return own
	}
}

// String says the phase's weights in a line, for the command line.
func (p PhaseLanes) String() string {
	committed := "never committed"
	if p.CommittedAt != nil {
		committed = "committed at " + p.CommittedAt.UTC().Format(time.RFC3339Nano)
	}
	return fmt.Sprintf("phase %s (%s to %s): %s, commitment %s %s", p.Name, p.Start.UTC().Format(time.RFC3339), p.End.UTC().Format(time.RFC3339),
		p.Weights, p.Commitment, committed)
}
