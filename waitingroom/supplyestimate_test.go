package waitingroom

import (
	"testing"
	"time"

	"pgregory.net/rapid"
)

var supplyT0 = time.Date(2026, 6, 1, 10, 0, 0, 0, time.UTC)

// supplySample is a report of units at sec seconds, with claimed claims and active
// sessions then.
func supplySample(n, units uint64, sec int, claimed, active uint64) SupplySample {
	return SupplySample{N: n, Units: units, At: supplyT0.Add(time.Duration(sec) * time.Second), Claimed: claimed, Active: active}
}

// TestSupplyEstimatePriorUntilMeasured: before enough claims are measured the
// range of units per fan is the prior, and the reach follows from it.
func TestSupplyEstimatePriorUntilMeasured(t *testing.T) {
	e := SupplyEstimate{}.Fold(supplySample(1, 800, 0, 0, 0))
	if e.Measured || e.PerFan != [2]float64{SupplyPriorPerFanLow, SupplyPriorPerFanHigh} {
		t.Fatalf("per fan %v measured %v, want the prior", e.PerFan, e.Measured)
	}
	if e.Reach != [2]float64{100, 800} {
		t.Fatalf("reach %v, want [100 800]", e.Reach)
	}
	for _, c := range []struct {
		index float64
		want  Outcome
	}{{1, OutcomeLikely}, {100, OutcomeLikely}, {101, OutcomeAtRisk}, {800, OutcomeAtRisk}, {801, OutcomeUnlikely}} {
		if got := e.Tell(c.index, 0); got.Outcome != c.want {
			t.Errorf("index %v: %s, want %s", c.index, got.Outcome, c.want)
		}
	}
	if got := e.Tell(500, 0); got.Chance != (Chance{0.3, 0.5}) || got.Ends != [2]uint64{100, 800} {
		t.Fatalf("halfway: %+v", got)
	}
}

// TestSupplyEstimateMeasuresUnitsPerFan: fans buying two each, reported every
// ten seconds with ten claims between, narrow the range around two; a fan
// is then told likely well before the end and unlikely well after it.
func TestSupplyEstimateMeasuresUnitsPerFan(t *testing.T) {
	var e SupplyEstimate
	units, claimed := uint64(1000), uint64(0)
	for i := range 10 {
		e = e.Fold(supplySample(uint64(i+1), units, 10*i, claimed, 0))
		// alternate 1.5 and 2.5 per fan: a spread around 2
		if i%2 == 0 {
			units -= 15
		} else {
			units -= 25
		}
		claimed += 10
	}
	if !e.Measured || e.PerFan[0] > 2 || e.PerFan[1] < 2 || e.PerFan[1]-e.PerFan[0] > 1 {
		t.Fatalf("per fan %v measured %v, want a range around 2", e.PerFan, e.Measured)
	}
	// 1000 - 9*20 = 820 left at claim 90: about 410 more fans.
	if e.Reach[0] > 90+410 || e.Reach[1] < 90+410 {
		t.Fatalf("reach %v does not hold 500", e.Reach)
	}
	if got := e.Tell(200, 90).Outcome; got != OutcomeLikely {
		t.Fatalf("claim 200: %s", got)
	}
	if got := e.Tell(900, 90).Outcome; got != OutcomeUnlikely {
		t.Fatalf("claim 900: %s", got)
	}
}

// TestSupplyEstimateDropSkips: a supply far below what the fans could have
// bought (sold elsewhere) lets an outcome skip at_risk; a fall within what
// was expected never does.
func TestSupplyEstimateDropSkips(t *testing.T) {
	e := SupplyEstimate{}.Fold(supplySample(1, 800, 0, 0, 0))
	if e.Tell(50, 0).Outcome != OutcomeLikely {
		t.Fatal("claim 50 not likely at first")
	}
	fell := e.Fold(supplySample(2, 0, 5, 0, 0))
	if !fell.Dropped || fell.Tell(50, 0).Outcome != OutcomeUnlikely {
		t.Fatalf("a drop to 0: dropped %v, %s", fell.Dropped, fell.Tell(50, 0).Outcome)
	}
	// Ten fans claimed and bought eight each (the most expected): the
	// range keeps reaching the old sure end.
	expected := e.Fold(supplySample(2, 720, 5, 10, 0))
	if expected.Dropped || expected.Tell(100, 0).Outcome == OutcomeUnlikely {
		t.Fatalf("an expected fall: dropped %v, %s", expected.Dropped, expected.Tell(100, 0).Outcome)
	}
}

// TestSupplyEstimateMeasureJumpKeepsTheSureEnd: the measure of units per
// fan can jump above the previous range's high end without a drop, when the
// fans shopping at the previous report bought the difference. The new range
// then ends short of where the old one surely reached; without the floor
// that keeps it there (monotone honesty), a fan told likely would be told
// unlikely next, skipping at_risk, while the supply fell no more than
// expected.
func TestSupplyEstimateMeasureJumpKeepsTheSureEnd(t *testing.T) {
	e := SupplyEstimate{}.Fold(supplySample(1, 10000, 0, 0, 50))
	e = e.Fold(supplySample(2, 9600, 5, 10, 50))
	if e.Measured || e.Tell(1000, 0).Outcome != OutcomeLikely {
		t.Fatalf("on the prior, claim 1000 is %s (reach %v), want likely", e.Tell(1000, 0).Outcome, e.Reach)
	}
	sureEnd := e.Reach[0]
	// Another 400 units for 10 claims: 40 a fan, measured now, within what
	// the 50 shopping could have bought on top, so no drop.
	next := e.Fold(supplySample(3, 9200, 10, 20, 50))
	if !next.Measured || next.PerFan[0] <= SupplyPriorPerFanHigh || next.Dropped {
		t.Fatalf("per fan %v (measured %v, dropped %v): want a measure above the prior, no drop", next.PerFan, next.Measured, next.Dropped)
	}
	if next.Reach[1] < sureEnd {
		t.Fatalf("the range ends at %v, short of the previous sure end %v", next.Reach[1], sureEnd)
	}
	if got := next.Tell(1000, 0).Outcome; got != OutcomeAtRisk {
		t.Fatalf("claim 1000, told likely before: %s now (reach %v), want at_risk", got, next.Reach)
	}
}

// TestSupplyEstimateStaleSampleIgnored: a sample numbered at or below the last
// folded changes nothing.
func TestSupplyEstimateStaleSampleIgnored(t *testing.T) {
	e := SupplyEstimate{}.Fold(supplySample(2, 500, 10, 0, 0))
	if got := e.Fold(supplySample(1, 5, 20, 0, 0)); got.Last.Units != 500 {
		t.Fatalf("an older sample was folded: %+v", got.Last)
	}
}

// TestSupplyOutcomeNeverSkipsAtRisk is the monotone honesty property: whatever
// the reports, folded in order at injected times, a fan's outcome never goes
// from likely to unlikely between two estimates unless the supply dropped
// below what was expected. The fan's claim index never rises (people ahead
// only leave), and more claims only come in.
func TestSupplyOutcomeNeverSkipsAtRisk(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		var e SupplyEstimate
		claimed := rapid.Uint64Range(0, 100).Draw(t, "claimed0")
		units := rapid.Uint64Range(0, 5000).Draw(t, "units0")
		fans := rapid.SliceOfN(rapid.Float64Range(0, 6000), 1, 10).Draw(t, "fans")
		told := make([]Outcome, len(fans))
		sec := 0
		rate := rapid.Float64Range(0.2, 6).Draw(t, "rate") // units a fan buys, about
		steps := rapid.IntRange(1, 60).Draw(t, "steps")
		for i := range steps {
			sec += rapid.IntRange(0, 30).Draw(t, "wait")
			active := rapid.Uint64Range(0, 50).Draw(t, "active")
			prev := e
			e = e.Fold(SupplySample{N: uint64(i + 1), Units: units, At: supplyT0.Add(time.Duration(sec) * time.Second), Claimed: claimed, Active: active})
			if e.Reach[0] > e.Reach[1] {
				t.Fatalf("reach %v upside down", e.Reach)
			}
			for k := range fans {
				got := e.Tell(fans[k], float64(claimed)).Outcome
				if prev.Known && told[k] == OutcomeLikely && got == OutcomeUnlikely && !e.Dropped {
					t.Fatalf("step %d: fan at %v went from likely to unlikely without a drop (reach %v -> %v, units %d -> %d)",
						i, fans[k], prev.Reach, e.Reach, prev.Last.Units, units)
				}
				told[k] = got
				// people ahead leave: the fan's index only falls
				fans[k] = max(0, fans[k]-rapid.Float64Range(0, 50).Draw(t, "left"))
			}
			claims := rapid.Uint64Range(0, 40).Draw(t, "claims")
			claimed += claims
			// supply falls by purchases (about rate a fan, give or take),
			// rises by releases, or is reset
			switch rapid.IntRange(0, 19).Draw(t, "change") {
			case 0:
				units += rapid.Uint64Range(0, 50).Draw(t, "released")
			case 1:
				units = rapid.Uint64Range(0, 5000).Draw(t, "reset")
			case 2:
				units -= min(units, rapid.Uint64Range(0, 200).Draw(t, "bought"))
			default:
				bought := float64(claims) * rate * rapid.Float64Range(0.5, 1.5).Draw(t, "spread")
				units -= min(units, uint64(bought))
			}
		}
	})
}

// TestSupplyEstimateLagOfPurchases: fans let in fast who buy some seconds
// after their claim (here 2 units each, 4 s after, their session over once
// they bought) make the units fall long after the claims. Never, at any
// sample, is a fan waiting beyond the true reach (1,000 units for 500 fans)
// told likely, nor one before it unlikely; the measure ends around 2 a fan.
func TestSupplyEstimateLagOfPurchases(t *testing.T) {
	const (
		units, perFan, lag, rate = 1000, 2, 4, 60
		reach                    = units / perFan
	)
	var e SupplyEstimate
	claimedAt := func(sec int) uint64 { return uint64(min(max(0, sec)*rate, 700)) }
	for sec := 1; sec <= 20; sec++ {
		claimed := claimedAt(sec)
		bought := min(claimedAt(sec-lag), reach) // fans who bought by now
		left := units - perFan*bought
		active := claimed - claimedAt(sec-lag) // still shopping
		e = e.Fold(supplySample(uint64(sec), left, sec, claimed, active))
		if left == 0 {
			break
		}
		// A fan waiting has a claim index past those made.
		if e.Reach[0] > float64(max(claimed, reach)) {
			t.Fatalf("at %d s (claimed %d, %d left, %d shopping): likely up to claim %.0f, beyond the true reach %d (per fan %v)",
				sec, claimed, left, active, e.Reach[0], reach, e.PerFan)
		}
		if e.Reach[1] < reach {
			t.Fatalf("at %d s: unlikely from claim %.0f, before the true reach %d (per fan %v)", sec, e.Reach[1], reach, e.PerFan)
		}
	}
	if e.PerFan[0] > perFan || e.PerFan[1] < perFan {
		t.Fatalf("per fan %v, want a range holding %d", e.PerFan, perFan)
	}
}
