package waitingroom

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"math"
	"slices"
	"time"
)

// Verifiable lanes (docs/fairness.md, "Priority lanes"): the lanes' weights
// are published, with their commitment, at the draw endpoint before the room
// opens; the fairness report publishes every step's split between the lanes
// and every lane's admissions, and CheckLanes checks from the report alone
// that each split is the weighted round robin's under those weights (so each
// lane's share stayed within one admission step of its weight), and that each
// lane was let in first come, first served (nobody's position in any lane
// rose).

// LanesReport is the lanes part of the fairness report.
type LanesReport struct {
	// Weights are the lanes' weights in their canonical text (Lanes.String),
	// and Commitment LaneCommitment of it, as the draw endpoint published
	// them before the room opened.
	Weights    string `json:"weights"`
	Commitment string `json:"commitment"`
	// Lanes are the lanes, by number: name, weight, and the places each let
	// in (its admissions), in the order of its places.
	Lanes []LaneAdmissions `json:"lanes"`
	// Steps are the controller steps' splits (kind "lanes"), oldest first.
	Steps []HistoryEntry `json:"steps"`
	// Phases are the room's phases with the weights in force in each and
	// what each lane let in during it (phaselanes.go); absent in a room
	// without phases, where Weights are in force throughout.
	Phases []PhaseLanes `json:"phases,omitempty"`
	// Check is CheckLanes of the above, as the room made it.
	Check LaneCheck `json:"check"`
}

// LaneAdmissions are one lane's admissions: places [start, start+count) of
// the lane (its own numbers, from 0) let in at the time given.
type LaneAdmissions struct {
	Name       string         `json:"name"`
	Weight     int            `json:"weight"`
	Admitted   uint64         `json:"admitted"`
	Admissions []HistoryEntry `json:"admissions"`
}

// LaneCheck is the outcome of CheckLanes.
type LaneCheck struct {
	OK bool `json:"ok"`
	// Steps is the number of steps replayed, Restarts the steps whose
	// round robin did not go on from the step before (the store lost its
	// data, or the weights changed): each is replayed from its own state.
	Steps    int `json:"steps"`
	Restarts int `json:"restarts"`
	// MaxDeviation is the largest gap, in places, between a lane's
	// admissions and its weighted share over any run of steps in which the
	// same lanes waited throughout, from the start of the run; MaxStep the
	// largest step in such a run. The shares were kept when MaxDeviation <=
	// MaxStep + 1: within one step, and the one place the round robin may
	// owe a lane, or have given it ahead, from before the run (its credits
	// stay within the sum of the weights either way).
	MaxDeviation float64 `json:"max_deviation"`
	MaxStep      uint64  `json:"max_step"`
	// InOrder: every lane's admissions follow on from one another from its
	// first place, so no place was let in ahead of an earlier one of its
	// lane and no position rose.
	InOrder  bool     `json:"in_order"`
	Problems []string `json:"problems,omitempty"`
}

// LaneCommitment is the published commitment to the lanes' weights: the
// SHA-256 of "foyer-lanes-v1\n" and the weights' canonical text, in hex.
func LaneCommitment(weights string) string {
	sum := sha256.Sum256([]byte("foyer-lanes-v1\n" + weights))
	return hex.EncodeToString(sum[:])
}

// CheckLanes checks a lanes report against its weights, from the report
// alone (see LaneCheck).
func CheckLanes(rep LanesReport) LaneCheck {
	c := LaneCheck{InOrder: true}
	problem := func(format string, args ...any) { c.Problems = append(c.Problems, fmt.Sprintf(format, args...)) }
	lanes, err := ParseLanes(rep.Weights)
	if err != nil || !lanes.On() {
		problem("weights %q are not two lanes or more: %v", rep.Weights, err)
		return c
	}
	if rep.Commitment != LaneCommitment(lanes.String()) {
		problem("the commitment does not match the weights %q", lanes.String())
	}
	weights := lanes.Weights()
	inForce := phaseWeights(rep, lanes, problem)
	var after []int64
	var run laneRun
	var prev string
	for k, e := range rep.Steps {
		if len(e.Shares) != len(weights) {
			problem("step %d has %d shares for %d lanes", k, len(e.Shares), len(weights))
			continue
		}
		// Each step is replayed with the weights in force at its time:
		// the phase's then, else the room's. A step that names other
		// weights was split by weights nobody published.
		spec := inForce(e.At)
		if e.Weights != "" && e.Weights != spec {
			problem("step %d at %s split by %q, the weights in force then are %q", k, e.At.UTC().Format(time.RFC3339), e.Weights, spec)
		}
		stepLanes, _ := ParseLanes(spec)
		w := stepLanes.Weights()
		if len(w) != len(weights) {
			w = weights
		}
		if spec != prev && k > 0 {
			run = laneRun{} // new weights start a new run
		}
		prev = spec
		credit, waiting, got := make([]int64, len(weights)), make([]uint64, len(weights)), make([]uint64, len(weights))
		var total uint64
		for i, sh := range e.Shares {
			credit[i], waiting[i], got[i] = sh.Credit, sh.Waiting, sh.Admitted
			total += sh.Admitted
		}
		if after == nil || !slices.Equal(after, credit) {
			if after != nil {
				c.Restarts++
			}
		}
		replay := SplitAdmissions(w, credit, waiting, total)
		if !slices.Equal(replay, got) {
			problem("step %d at %s gave %v, the weights give %v", k, e.At.UTC().Format("15:04:05"), got, replay)
		}
		after = credit
		c.Steps++
		run.step(&c, w, waiting, got, total)
	}
	for i, l := range rep.Lanes {
		// From the first admission recorded: a store that lost its data
		// lost the history before the loss (FairnessReport.Complete).
		var next uint64
		for k, a := range l.Admissions {
			if k > 0 && a.Start != next {
				c.InOrder = false
				problem("lane %s let in places from %d when %d was next", l.Name, a.Start, next)
			}
			next = a.Start + a.Count
		}
		if i < lanes.Len() && (l.Name != lanes.Name(i) || l.Weight != weights[i]) {
			problem("lane %d is %s=%d, the weights say %s=%d", i, l.Name, l.Weight, lanes.Name(i), weights[i])
		}
	}
	c.OK = len(c.Problems) == 0 && c.MaxDeviation <= float64(c.MaxStep)+1
	if len(c.Problems) == 0 && !c.OK {
		problem("a lane's share strayed %.2f places from its weight, more than one step (%d) and one place", c.MaxDeviation, c.MaxStep)
	}
	return c
}

// laneRun follows a run of steps in which the same lanes waited throughout
// (each had more waiting than it was given, so it took part in every one of
// the step's admissions): within it, each lane's admissions are compared
// with its share by weight.
type laneRun struct {
	set  []bool
	got  []uint64
	sum  uint64
	size uint64
}

func (r *laneRun) step(c *LaneCheck, weights []int, waiting, got []uint64, total uint64) {
	set := make([]bool, len(weights))
	whole := total > 0
	for i := range weights {
		set[i] = waiting[i] > 0 && weights[i] > 0 // a lane of weight 0 takes no part
		if set[i] && waiting[i] <= got[i] {
			whole = false // the lane emptied: it took less than it might
		}
	}
	if !whole || !slices.Equal(set, r.set) {
		*r = laneRun{}
		if !whole {
			return
		}
		r.set, r.got = set, make([]uint64, len(weights))
	}
	var w int
	for i, in := range set {
		if in {
			w += weights[i]
		}
	}
	r.sum += total
	r.size = max(r.size, total)
	for i, in := range set {
		if !in {
			continue
		}
		r.got[i] += got[i]
		dev := math.Abs(float64(r.got[i]) - float64(r.sum)*float64(weights[i])/float64(w))
		c.MaxDeviation = max(c.MaxDeviation, math.Round(dev*100)/100)
	}
	c.MaxStep = max(c.MaxStep, r.size)
}

// lanesReport makes the lanes part of the fairness report from the room's
// lanes (or, should they be off now, the weights the store last split by),
// the general lane's admissions and the history's lane entries; nil for a
// room that never had lanes.
func lanesReport(s Settings, commits map[string]time.Time, snap Snapshot, general, hist []HistoryEntry) *LanesReport {
	lanes := s.RoomLanes()
	if !lanes.On() {
		l, err := ParseLanes(snap.LaneSpec)
		if err != nil || !l.On() {
			return nil
		}
		lanes = l
	}
	rep := &LanesReport{Weights: lanes.String(), Commitment: LaneCommitment(lanes.String()), Steps: []HistoryEntry{}}
	for i, l := range lanes.List() {
		la := LaneAdmissions{Name: l.Name, Weight: l.Weight, Admissions: []HistoryEntry{}}
		if i == 0 {
			// The general lane's admissions are the report's own; only the
			// live places among them were let in (Counts.Admitted).
			la.Admissions = append(la.Admissions, general...)
			la.Admitted = snap.Admitted
		} else if i < len(snap.Lanes) {
			la.Admitted = snap.Lanes[i].Admitted
		}
		rep.Lanes = append(rep.Lanes, la)
	}
	for _, e := range hist {
		if e.Kind == HistoryLanes {
			rep.Steps = append(rep.Steps, e)
			continue
		}
		lane, n := LaneOfPlace(e.Start)
		if lane < len(rep.Lanes) {
			e.Start = n
			rep.Lanes[lane].Admissions = append(rep.Lanes[lane].Admissions, e)
		}
	}
	rep.Phases = phaseLanes(s, commits, rep.Lanes)
	rep.Check = CheckLanes(*rep)
	return rep
}
