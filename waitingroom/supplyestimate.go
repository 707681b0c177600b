package waitingroom

import "math"

// The supply estimator (docs/supply.md): from the reports of what is left to
// sell, folded in order, it measures the units bought per admitted fan and
// estimates how far down the line the supply reaches. Everything is counted
// in claims: the claim index at which supply runs out is comparable with a
// fan's own (the claims made so far, plus those pending, plus the people
// ahead), so an estimate made at one report holds, unchanged, until the next.
//
// The estimator is a pure fold over the samples (SupplySample.N in order), so
// every node that folded the same samples gives every fan the same outcome.

// Bounds of units bought per admitted fan, used until enough is measured, and
// below which a measured figure is not believed (a fan who buys nothing at
// all would make the supply reach without end).
const (
	SupplyPriorPerFanLow  = 1.0
	SupplyPriorPerFanHigh = 8.0
	supplyMinPerFan       = 0.05
	// supplyMinMeasured is how many claims, over at least two intervals
	// between reports, the measure needs before it replaces the prior.
	supplyMinMeasured = 20
	// supplyMaxReach caps a reach so that it stays a finite count.
	supplyMaxReach = 1e12
)

// Outcome is what a fan is told of their chance of getting tickets.
type Outcome string

const (
	OutcomeLikely   Outcome = "likely"
	OutcomeAtRisk   Outcome = "at_risk"
	OutcomeUnlikely Outcome = "unlikely"
)

// SupplyEstimate is the estimator's state after the samples folded so far.
type SupplyEstimate struct {
	// Known is set once a sample was folded.
	Known bool `json:"-"`
	// Last is the last sample folded.
	Last SupplySample `json:"sample"`
	// PerFan is the range of units bought per admitted fan.
	PerFan [2]float64 `json:"per_fan"`
	// Measured is set once PerFan comes from the reports rather than the
	// prior (SupplyPriorPerFanLow, SupplyPriorPerFanHigh).
	Measured bool `json:"measured"`
	// Reach is the range of claim indices at which the supply is estimated
	// to run out: fans whose claim comes at or before Reach[0] are likely to
	// be served, after Reach[1] unlikely.
	Reach [2]float64 `json:"reach"`
	// Dropped is set when the last sample's supply was lower than the
	// previous estimate allowed (sold elsewhere, or set lower by an
	// operator): only then may a fan's outcome skip at_risk.
	Dropped bool `json:"dropped,omitempty"`

	// The measure: claims and units fallen since the first sample, and
	// over the intervals between samples in which someone claimed the sum
	// of squares of the per-interval ratios weighted by their claims.
	// startActive is the sessions live at the first sample.
	claims, fallen, squares float64
	intervals               int
	startActive             float64
}

// Fold returns the estimate after sample s. A sample not newer than the last
// folded (by N) changes nothing.
func (e SupplyEstimate) Fold(s SupplySample) SupplyEstimate {
	if e.Known && s.N <= e.Last.N {
		return e
	}
	prev := e
	e.Dropped = false
	if !prev.Known {
		e.startActive = float64(s.Active)
	}
	if prev.Known {
		// Units fall when fans buy, some time after their claim: a fall
		// with no claim since the last sample is the fans claimed before
		// buying, and counts.
		du := float64(prev.Last.Units) - float64(s.Units)
		e.fallen += du
		if s.Claimed > prev.Last.Claimed {
			dc := float64(s.Claimed - prev.Last.Claimed)
			e.claims += dc
			e.squares += du * du / dc
			e.intervals++
		}
	}
	e.PerFan, e.Measured = e.perFan(float64(s.Active))
	if prev.Known {
		// The most the fans could have bought since the previous sample:
		// those claimed since, and those who were shopping then, each at the
		// high end of what a fan buys.
		dc := float64(s.Claimed - min(s.Claimed, prev.Last.Claimed))
		most := prev.PerFan[1] * (dc + float64(prev.Last.Active))
		e.Dropped = float64(s.Units) < float64(prev.Last.Units)-most-0.5
	}
	units, base := float64(s.Units), float64(s.Claimed)
	lo := base + max(0, units/e.PerFan[1]-float64(s.Active))
	hi := base + units/e.PerFan[0]
	if prev.Known && !e.Dropped {
		// Monotone honesty: without a supply below what was expected, the
		// new range reaches at least as far as the old one surely did, so a
		// fan told likely passes at_risk before unlikely.
		hi = max(hi, prev.Reach[0])
	}
	lo, hi = min(lo, supplyMaxReach), min(hi, supplyMaxReach)
	e.Reach = [2]float64{min(lo, hi), hi}
	e.Last, e.Known = s, true
	return e
}

// perFan is the range of units per fan, once enough is measured (the prior
// before): the weighted mean of the measured ratios, two standard errors
// either side, widened by what the lag between a claim and its purchase
// leaves unknown, active being the sessions live now. Fans still shopping
// have yet to buy: dividing the units fallen by every claim reads a sale
// whose fans take a while to buy as one whose fans buy little, and tells
// far too many "likely" while the first fans shop. So the range reaches
// down to the fall shared among every fan who could have bought (those
// live at the first sample and those claimed since), and up to the fall
// shared among those whose sessions are over (as if the fans still live
// had bought nothing yet); with none over yet, up to the prior's high end.
func (e SupplyEstimate) perFan(active float64) ([2]float64, bool) {
	if e.intervals < 2 || e.claims < supplyMinMeasured {
		return [2]float64{SupplyPriorPerFanLow, SupplyPriorPerFanHigh}, false
	}
	m := e.fallen / e.claims
	variance := max(0, (e.squares-m*m*e.claims)/float64(e.intervals-1))
	se := math.Sqrt(variance / e.claims)
	lo := min(m-2*se, e.fallen/(e.claims+e.startActive))
	hi := m + 2*se
	if over := e.startActive + e.claims - active; over >= 1 {
		hi = max(hi, e.fallen/over)
	} else {
		hi = max(hi, SupplyPriorPerFanHigh)
	}
	return [2]float64{max(supplyMinPerFan, lo), max(supplyMinPerFan, lo, hi)}, true
}

// Chance is a range of probability, in steps of a tenth at the finest: never
// more precise than the estimate is.
type Chance struct {
	Low  float64 `json:"low"`
	High float64 `json:"high"`
}

// chanceBands are the ranges a probability is told in.
var chanceBands = [...]float64{0, 0.1, 0.3, 0.5, 0.7, 0.9, 1}

func chanceOf(p float64) Chance {
	for i := 1; i < len(chanceBands); i++ {
		if p < chanceBands[i] || i == len(chanceBands)-1 {
			return Chance{Low: chanceBands[i-1], High: chanceBands[i]}
		}
	}
	return Chance{Low: 0.9, High: 1}
}

// Told is what a fan is told: their outcome, its chance, and where, in people
// ahead of them counted from the front, the supply is estimated to end.
type Told struct {
	Outcome Outcome
	Chance  Chance
	Ends    [2]uint64
}

// Tell says what a fan whose claim would be the index-th is told; front is the
// claim index of the fan at the front of the line now (the claims made, the
// admissions pending and the returners), for where the supply ends. The
// chance is the share of the reach range at or beyond the fan.
func (e SupplyEstimate) Tell(index, front float64) Told {
	lo, hi := e.Reach[0], e.Reach[1]
	var t Told
	var p float64
	switch {
	case index <= lo:
		t.Outcome, p = OutcomeLikely, 1
	case index > hi:
		t.Outcome, p = OutcomeUnlikely, 0
	default:
		t.Outcome, p = OutcomeAtRisk, (hi-index)/(hi-lo)
	}
	t.Chance = chanceOf(p)
	if t.Outcome == OutcomeAtRisk {
		// Between the ends, neither certainty is told.
		t.Chance.Low, t.Chance.High = max(t.Chance.Low, 0.1), min(t.Chance.High, 0.9)
		if t.Chance.Low >= t.Chance.High {
			t.Chance = chanceOf(min(0.89, max(0.1, p)))
		}
	}
	t.Ends = [2]uint64{uint64(max(0, math.Floor(lo-front))), uint64(max(0, math.Floor(hi-front)))}
	return t
}
