package waitingroom

import (
	"math"
	"math/rand/v2"
	"slices"
	"testing"
	"time"
)

func TestParseLanes(t *testing.T) {
	for in, want := range map[string]string{
		"":                              "off",
		"off":                           "off",
		"presale=3 members=2 general=1": "general=1 members=2 presale=3",
		"presale=3":                     "general=1 presale=3",
		"general=4 a-b_9=1000":          "general=4 a-b_9=1000",
	} {
		l, err := ParseLanes(in)
		if err != nil || l.String() != want {
			t.Errorf("ParseLanes(%q) = %q, %v; want %q", in, l, err, want)
		}
	}
	// What each bad input gets.
	for in, want := range map[string]string{
		"presale":                         `"presale" is not <lane>=<weight>, such as presale=3`,
		"Presale=3":                       `lane name "Presale" must be 1–32 of a-z, 0-9, _ and -`,
		"presale=0":                       `lane presale: weight "0" must be a whole number from 1 to 1000`,
		"presale=1001":                    `lane presale: weight "1001" must be a whole number from 1 to 1000`,
		"presale=x":                       `lane presale: weight "x" must be a whole number from 1 to 1000`,
		"a=1 a=2":                         "lane a is named twice",
		"a=1 b=1 c=1 d=1 e=1 f=1 g=1 h=1": "at most 8 lanes (general included), got 9",
	} {
		if _, err := ParseLanes(in); err == nil || err.Error() != want {
			t.Errorf("ParseLanes(%q): %v, want %q", in, err, want)
		}
	}
	l, _ := ParseLanes("presale=3 members=2")
	if l.LaneOf("") != 0 || l.LaneOf("nosuch") != 0 || l.LaneOf("members") != 1 || l.LaneOf("presale") != 2 {
		t.Errorf("lane numbers of %s wrong", l)
	}
	if p := LanePlace(2, 7); p != 2<<40+7 {
		t.Errorf("LanePlace(2, 7) = %d", p)
	} else if lane, n := LaneOfPlace(p); lane != 2 || n != 7 {
		t.Errorf("LaneOfPlace(%d) = %d, %d", p, lane, n)
	}
	if lane, n := LaneOfPlace(12345); lane != 0 || n != 12345 {
		t.Errorf("a general place is lane %d, %d", lane, n)
	}
}

// TestSplitAdmissionsKeepsShares: over any run of steps in which the same
// lanes wait, each lane's admissions stay within one of its weighted share
// at every admission, whatever the steps' sizes.
func TestSplitAdmissionsKeepsShares(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	for range 200 {
		weights := make([]int, 2+rng.IntN(7))
		var total int
		for i := range weights {
			weights[i] = 1 + rng.IntN(20)
			total += weights[i]
		}
		credit := make([]int64, len(weights))
		waiting := make([]uint64, len(weights))
		for i := range waiting {
			waiting[i] = 1 << 30
		}
		got := make([]uint64, len(weights))
		var sum uint64
		for range 100 {
			n := uint64(rng.IntN(40))
			step := SplitAdmissions(weights, credit, waiting, n)
			for i, k := range step {
				got[i] += k
				sum += k
			}
			for i, w := range weights {
				if dev := math.Abs(float64(got[i]) - float64(sum)*float64(w)/float64(total)); dev >= 1 {
					t.Fatalf("weights %v: lane %d has %d of %d, %.2f from its share", weights, i, got[i], sum, dev)
				}
			}
		}
	}
}

// TestSplitAdmissionsSkipsEmptyLanes: no admission goes to a lane with
// nobody waiting, an empty lane's credit stands still, and a lane that
// empties gives the rest to the others.
func TestSplitAdmissionsSkipsEmptyLanes(t *testing.T) {
	credit := make([]int64, 3)
	got := SplitAdmissions([]int{1, 2, 3}, credit, []uint64{100, 0, 2}, 30)
	if !slices.Equal(got, []uint64{28, 0, 2}) {
		t.Errorf("split %v, want [28 0 2]", got)
	}
	if credit[1] != 0 {
		t.Errorf("the empty lane's credit moved to %d", credit[1])
	}
	if got := SplitAdmissions([]int{1, 2, 3}, make([]int64, 3), []uint64{0, 0, 0}, 30); !slices.Equal(got, []uint64{0, 0, 0}) {
		t.Errorf("nobody waiting, split %v", got)
	}
	if got := SplitAdmissions([]int{1, 2, 3}, make([]int64, 3), []uint64{5, 5, 5}, 6); !slices.Equal(got, []uint64{1, 2, 3}) {
		t.Errorf("one round, split %v, want [1 2 3]", got)
	}
}

// TestCheckLanes: the check passes a history the stores' split made, and
// catches a split the weights did not make, a changed weight, and a lane's
// places let in out of order.
func TestCheckLanes(t *testing.T) {
	lanes, _ := ParseLanes("presale=3 members=2")
	weights := lanes.Weights()
	credit := make([]int64, len(weights))
	rep := LanesReport{Weights: lanes.String(), Commitment: LaneCommitment(lanes.String())}
	for _, l := range lanes.List() {
		rep.Lanes = append(rep.Lanes, LaneAdmissions{Name: l.Name, Weight: l.Weight})
	}
	next := make([]uint64, len(weights))
	at := time.Date(2026, 6, 1, 10, 0, 0, 0, time.UTC)
	waiting := []uint64{500, 40, 500}
	for s := range 20 {
		before := slices.Clone(credit)
		got := SplitAdmissions(weights, credit, waiting, uint64(7+s%5))
		rep.Steps = append(rep.Steps, LaneStep(before, waiting, got, at))
		for i, k := range got {
			if k > 0 {
				rep.Lanes[i].Admissions = append(rep.Lanes[i].Admissions, HistoryEntry{Kind: HistoryAdmit, Start: next[i], Count: k, At: at})
			}
			next[i] += k
			waiting[i] -= k
		}
		at = at.Add(time.Second)
	}
	if c := CheckLanes(rep); !c.OK || c.Steps != 20 || c.Restarts != 0 || c.MaxStep == 0 {
		t.Fatalf("a fair history fails: %+v", c)
	}

	bad := rep
	bad.Steps = slices.Clone(rep.Steps)
	bad.Steps[3].Shares = slices.Clone(bad.Steps[3].Shares)
	bad.Steps[3].Shares[0].Admitted++
	bad.Steps[3].Shares[2].Admitted--
	if c := CheckLanes(bad); c.OK || len(c.Problems) == 0 {
		t.Errorf("a split off the weights passes: %+v", c)
	}

	bad = rep
	bad.Weights = "general=1 members=2 presale=4"
	bad.Commitment = LaneCommitment(bad.Weights)
	if c := CheckLanes(bad); c.OK {
		t.Errorf("other weights pass: %+v", c)
	}
	bad = rep
	bad.Commitment = LaneCommitment("general=1 members=2 presale=4")
	if c := CheckLanes(bad); c.OK {
		t.Errorf("a commitment to other weights passes: %+v", c)
	}

	bad = rep
	bad.Lanes = slices.Clone(rep.Lanes)
	ad := slices.Clone(bad.Lanes[2].Admissions)
	ad[1], ad[2] = ad[2], ad[1]
	bad.Lanes[2].Admissions = ad
	if c := CheckLanes(bad); c.OK || c.InOrder {
		t.Errorf("places out of order pass: %+v", c)
	}
}
