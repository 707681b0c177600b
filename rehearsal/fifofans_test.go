package rehearsal

import (
	"strings"
	"testing"
	"time"
)

// seen is a fan as the rehearsal recorded it: joined during [js, je], last
// told to wait at lw (-1: never), admitted with key at pass (-1: never).
func seen(b behaviour, js, je, lw, pass time.Duration, key uint64) fan {
	f := newFan(b, 0)
	f.joinStart, f.joinEnd, f.lastWait, f.passAt = js*sec, je*sec, lw*sec, pass*sec
	if js < 0 {
		f.joinStart, f.joinEnd = -1, -1
	}
	if lw < 0 {
		f.lastWait = -1
	}
	if pass >= 0 {
		f.admitted, f.key = true, key
	} else {
		f.passAt = -1
	}
	return f
}

func TestFIFOOfTheRecordedFans(t *testing.T) {
	cases := []struct {
		name                   string
		fans                   []fan
		checked, admitted, inv int
		excluded               string
	}{{
		name: "patient fans in order",
		fans: []fan{
			seen(patient, 0, 1, 9, 11, 0),
			seen(patient, 2, 3, 10, 12, 1),
			seen(patient, 4, 5, 12, -1, 0), // sold out before its turn
		},
		checked: 3, admitted: 2,
		excluded: "0 leavers, 0 late returners, 0 without a place",
	}, {
		name: "a later key admitted while an earlier holder was still told to wait",
		fans: []fan{
			seen(patient, 0, 1, 12, 14, 0), // told to wait at 12 s...
			seen(patient, 2, 3, 9, 11, 1),  // ...after key 1 got in at 11 s
		},
		checked: 2, admitted: 2, inv: 2, // against its key and against its arrival
		excluded: "0 leavers, 0 late returners, 0 without a place",
	}, {
		name: "leavers, late returners and placeless fans are left out, whatever they saw",
		fans: []fan{
			seen(patient, 0, 1, 9, 11, 0),
			seen(leaveAtJoin, 0, 1, 20, -1, 0),  // would be an inversion
			seen(leaveInLine, 0, 1, 20, -1, 0),  // would be an inversion
			seen(lateReturner, 0, 1, 20, 21, 0), // let in at the front on return, by design
			seen(patient, -1, -1, -1, -1, 0),    // came after the sell-out
		},
		checked: 1, admitted: 1,
		excluded: "2 leavers, 1 late returners, 1 without a place",
	}}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			res, excluded := fifoOf(c.fans)
			inv := res.keyInversions + res.passInversions + res.arrivalInversions
			if res.checked != c.checked || res.admitted != c.admitted || inv != c.inv {
				t.Errorf("checked %d, admitted %d, %d inversions; want %d, %d, %d", res.checked, res.admitted, inv, c.checked, c.admitted, c.inv)
			}
			if !strings.HasPrefix(excluded, c.excluded) {
				t.Errorf("left out: %q, want %q", excluded, c.excluded)
			}
		})
	}
}
