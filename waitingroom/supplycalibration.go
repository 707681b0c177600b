package waitingroom

import (
	"math"
	"time"
)

// SupplyCalibration is the part of the fairness report that makes the
// supply's estimates accountable (docs/supply.md, "Calibration"): every
// estimate the room made, refolded from the samples in its history exactly as
// the nodes folded them, beside what happened. The places waiting at each
// sample are counted by the outcome they were told (by their position
// band: their claim index against the estimate's reach) and by whether the
// line reached them before the supply ran out.
type SupplyCalibration struct {
	// Estimates are the estimates in the order they were made.
	Estimates []SupplyEstimatePoint `json:"estimates"`
	// SoldOutAt is when a sample first reported no units left, and
	// ServedUpTo the claims made by then (or by the report, when the supply
	// never ran out): a place whose claim index is at most ServedUpTo was
	// served.
	SoldOutAt  *time.Time `json:"sold_out_at,omitempty"`
	ServedUpTo uint64     `json:"served_up_to"`
	// Totals add up the estimates' bands: a place waiting through several
	// estimates counts once in each.
	Totals SupplyTold `json:"totals"`
	// Places count what the holders of places were in fact told, place by
	// place; absent when the store could not be read for them.
	Places *PlacesTold `json:"places,omitempty"`
}

// SupplyEstimatePoint is one estimate, made when a sample came in, and what
// happened to the places waiting then.
type SupplyEstimatePoint struct {
	At       time.Time  `json:"at"`
	Units    uint64     `json:"units"`
	Claimed  uint64     `json:"claimed"`
	Waiting  uint64     `json:"waiting"`
	PerFan   [2]float64 `json:"per_fan"`
	Measured bool       `json:"measured"`
	// Ends is where the supply was estimated to run out, in places from
	// the front of the line then.
	Ends    [2]uint64  `json:"ends"`
	Dropped bool       `json:"dropped,omitempty"`
	Told    SupplyTold `json:"told"`
}

// SupplyTold counts places by the outcome they were told, each with how many
// of them were in fact served.
type SupplyTold struct {
	Likely   ToldServed `json:"likely"`
	AtRisk   ToldServed `json:"at_risk"`
	Unlikely ToldServed `json:"unlikely"`
}

// ToldServed is how many places were told an outcome and how many of them
// were served.
type ToldServed struct {
	Told   uint64 `json:"told"`
	Served uint64 `json:"served"`
}

func (t *SupplyTold) add(o SupplyTold) {
	for _, p := range [][2]*ToldServed{{&t.Likely, &o.Likely}, {&t.AtRisk, &o.AtRisk}, {&t.Unlikely, &o.Unlikely}} {
		p[0].Told += p[1].Told
		p[0].Served += p[1].Served
	}
}

// CalibrateSupply refolds the samples (oldest first) and counts, for each
// estimate, the places waiting then by the outcome told and whether they
// were served; claimed is the room's claims when the report is made. Nil
// without samples.
func CalibrateSupply(samples []SupplySample, claimed uint64) *SupplyCalibration {
	if len(samples) == 0 {
		return nil
	}
	c := &SupplyCalibration{Estimates: []SupplyEstimatePoint{}, ServedUpTo: claimed}
	for _, s := range samples {
		if s.Units == 0 {
			at := s.At
			c.SoldOutAt, c.ServedUpTo = &at, min(claimed, s.Claimed)
			break
		}
	}
	var e SupplyEstimate
	for _, s := range samples {
		if e.Known && s.N <= e.Last.N {
			// A store that lost the room numbers its samples afresh, and
			// the nodes' measure starts again with it.
			e = SupplyEstimate{}
		}
		e = e.Fold(s)
		front := float64(s.Claimed)
		told := e.Tell(front+1, front)
		p := SupplyEstimatePoint{
			At: s.At, Units: s.Units, Claimed: s.Claimed, Waiting: s.Waiting,
			PerFan: e.PerFan, Measured: e.Measured, Ends: told.Ends, Dropped: e.Dropped,
			Told: countTold(s.Claimed, s.Waiting, e.Reach, c.ServedUpTo),
		}
		c.Totals.add(p.Told)
		c.Estimates = append(c.Estimates, p)
	}
	return c
}

// countTold counts the places waiting at claim indices (front, front+waiting]
// by band, likely up to reach[0], at risk up to reach[1], unlikely beyond
// (as Tell says), each with those at or below served.
func countTold(front, waiting uint64, reach [2]float64, served uint64) SupplyTold {
	end := front + waiting
	clamp := func(x float64) uint64 { return min(end, max(front, uint64(max(0, math.Floor(x))))) }
	lo, hi := clamp(reach[0]), clamp(reach[1])
	band := func(a, b uint64) ToldServed {
		if b <= a {
			return ToldServed{}
		}
		return ToldServed{Told: b - a, Served: min(b, max(a, served)) - a}
	}
	return SupplyTold{Likely: band(front, lo), AtRisk: band(lo, hi), Unlikely: band(hi, end)}
}

// ToldMarks are what a place's holder was ever told of their chance, and whether
// they were let in, one bit each: the marks a node records as it answers
// (docs/supply.md, "Calibration").
type ToldMarks uint8

const (
	MarkLikely ToldMarks = 1 << iota
	MarkAtRisk
	MarkUnlikely
	MarkLetIn
)

// markOf is the mark of an outcome; 0 for none.
func markOf(o Outcome) ToldMarks {
	switch o {
	case OutcomeLikely:
		return MarkLikely
	case OutcomeAtRisk:
		return MarkAtRisk
	case OutcomeUnlikely:
		return MarkUnlikely
	}
	return 0
}

// ToldTally counts a room's places by their marks: ToldTally[m] is how many
// places carry exactly the marks m. Places never marked are not counted.
type ToldTally [16]uint64

// Both stores keep the marks in a bitmap per lane, four bits a place: place
// n's are the high half of byte n/2 when n is even, the low half when odd,
// read as the marks' value. MaxToldPlace is the first place number in a lane
// whose marks are not kept (a Redis bitmap ends at 2^32 bits).
const MaxToldPlace = 1 << 30

// AddBitmap counts the places of one lane's bitmap of marks.
func (t *ToldTally) AddBitmap(bits []byte) {
	for _, b := range bits {
		if b>>4 != 0 {
			t[b>>4]++
		}
		if b&0xF != 0 {
			t[b&0xF]++
		}
	}
}

// PlacesTold is the calibration counted place by place, from the marks the
// nodes recorded as they answered: each place counted once for every
// outcome its holder was ever told, with how many of those places were let
// in afterwards or before. A fan-side count (one fan, one place) finds the
// same figures; the estimates' bands above are what the room would have told
// every place waiting, polled or not.
type PlacesTold struct {
	// Told is how many places were told any outcome, LetIn how many of
	// them were let in.
	Told     uint64    `json:"told"`
	LetIn    uint64    `json:"let_in"`
	Likely   ToldLetIn `json:"likely"`
	AtRisk   ToldLetIn `json:"at_risk"`
	Unlikely ToldLetIn `json:"unlikely"`
}

// ToldLetIn is how many places were told an outcome, and how many of them
// were let in.
type ToldLetIn struct {
	Told  uint64 `json:"told"`
	LetIn uint64 `json:"let_in"`
}

// placesTold sums the tally into the places told each outcome.
func placesTold(t ToldTally) PlacesTold {
	var p PlacesTold
	for m, n := range t {
		marks := ToldMarks(m)
		if n == 0 || marks&^MarkLetIn == 0 {
			continue // let in, never told: a place with no outcome to judge
		}
		in := marks&MarkLetIn != 0
		add := func(c *ToldLetIn) {
			c.Told += n
			if in {
				c.LetIn += n
			}
		}
		p.Told += n
		if in {
			p.LetIn += n
		}
		for _, o := range []struct {
			bit ToldMarks
			c   *ToldLetIn
		}{{MarkLikely, &p.Likely}, {MarkAtRisk, &p.AtRisk}, {MarkUnlikely, &p.Unlikely}} {
			if marks&o.bit != 0 {
				add(o.c)
			}
		}
	}
	return p
}
