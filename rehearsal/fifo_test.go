package rehearsal

import (
	"testing"
	"time"
)

const sec = time.Second

// rec is a fan that joined during [js, je], last waited at lw (-1: never)
// and got its pass with key at pass (-1: never).
func rec(fan int32, js, je time.Duration, key uint64, lw, pass time.Duration) fifoRecord {
	return fifoRecord{fan: fan, joinStart: js, joinEnd: je, key: key, lastWait: lw, passAt: pass, admitted: pass >= 0}
}

func TestFIFOAllowsThePollingInterval(t *testing.T) {
	// Keys follow arrival. Fan 0's turn came while it was between polls: it
	// was last told to wait at 10s, before fan 1 got in at 11s, and got its
	// own pass at its next poll at 13s. Late, but never told to wait after
	// a larger key was in.
	res := checkFIFO([]fifoRecord{
		rec(0, 0, 1*sec, 0, 10*sec, 13*sec),
		rec(1, 2*sec, 3*sec, 1, 9*sec, 11*sec),
		rec(2, 4*sec, 5*sec, 2, 12*sec, 14*sec),
		rec(3, 6*sec, 7*sec, 3, 13*sec, -1), // never admitted: sold out
	})
	if !res.ok() || res.checked != 4 || res.admitted != 3 {
		t.Fatalf("%+v, want FIFO kept", res)
	}
	if res.late != 1 || res.maxLateness != 2*sec {
		t.Fatalf("late %d by %v, want fan 0 late by 2s", res.late, res.maxLateness)
	}
}

func TestFIFOFindsInversions(t *testing.T) {
	cases := []struct {
		name                string
		recs                []fifoRecord
		keys, passes, other int
	}{{
		name: "a later key let in while an earlier one is told to wait",
		recs: []fifoRecord{
			rec(0, 0, 1*sec, 0, 12*sec, 14*sec),    // told to wait at 12s...
			rec(1, 2*sec, 3*sec, 1, 9*sec, 11*sec), // ...after key 1 got in at 11s
		},
		passes: 1, other: 1,
	}, {
		name: "an earlier arrival given the larger key",
		recs: []fifoRecord{
			rec(0, 0, 1*sec, 5, 9*sec, 12*sec),
			rec(1, 2*sec, 3*sec, 4, 9*sec, 11*sec),
		},
		keys: 1,
	}, {
		name: "a fan never admitted, told to wait after a later arrival got in",
		recs: []fifoRecord{
			rec(0, 0, 1*sec, 0, 20*sec, -1),
			rec(1, 2*sec, 3*sec, 1, 9*sec, 11*sec),
		},
		other: 1,
	}, {
		name: "overlapping joins and a wait sent just as the pass arrived are not inversions",
		recs: []fifoRecord{
			rec(0, 0, 3*sec, 1, 11*sec, 14*sec), // joined while fan 1 joined
			rec(1, 1*sec, 2*sec, 0, 9*sec, 11*sec),
		},
	}}
	for _, c := range cases {
		res := checkFIFO(c.recs)
		if res.keyInversions != c.keys || res.passInversions != c.passes || res.arrivalInversions != c.other {
			t.Errorf("%s: %d key, %d pass, %d arrival inversions; want %d, %d, %d",
				c.name, res.keyInversions, res.passInversions, res.arrivalInversions, c.keys, c.passes, c.other)
		}
		if res.ok() != (c.keys+c.passes+c.other == 0) {
			t.Errorf("%s: ok() = %v", c.name, res.ok())
		}
		if !res.ok() && len(res.examples) == 0 {
			t.Errorf("%s: no example given", c.name)
		}
	}
}
