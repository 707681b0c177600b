package waitingroom

import (
	"math"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"
	"time"
)

func TestParseLanes(t *testing.T) {
	for in, want := range map[string]string{
		"":                              "off",
		"off":                           "off",
		"presale=3 members=2 general=1": "general=1 members=2 presale=3",
		"presale=3":                     "general=1 presale=3",
		"presale=0":                     "general=1 presale=0",
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
		"general=0":                       `at least one lane needs a weight above 0, or nobody is ever let in`,
		"presale=0 general=0":             `at least one lane needs a weight above 0, or nobody is ever let in`,
		"presale=1001":                    `lane presale: weight "1001" must be a whole number from 0 to 1000`,
		"presale=x":                       `lane presale: weight "x" must be a whole number from 0 to 1000`,
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
		rep.Steps = append(rep.Steps, LaneStep(lanes.String(), before, waiting, got, at))
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

// TestCheckLanesPhases: a lanes report of two phases with weights of their
// own passes CheckLanes when every step was split by the weights of the
// phase in force at it and each commitment predates its phase; a step
// split by other weights, a commitment dated at its phase's start, or a
// commitment that does not match the weights fail it. A report whose
// steps do not name their weights (written before they did) is replayed
// with the weights in force.
func TestCheckLanesPhases(t *testing.T) {
	t0 := time.Date(2026, 6, 1, 10, 0, 0, 0, time.UTC)
	room, _ := ParseLanes("presale=3 general=1")
	presale, _ := ParseLanes("presale=1 general=0")
	public, _ := ParseLanes("presale=1 general=2")
	committed := t0.Add(-time.Minute)
	phase := func(name string, from, to int, w Lanes) PhaseLanes {
		c := committed
		return PhaseLanes{PhaseLaneCommitment: PhaseLaneCommitment{Name: name, Start: t0.Add(time.Duration(from) * time.Second),
			End: t0.Add(time.Duration(to) * time.Second), Weights: w.String(), Commitment: LaneCommitment(w.String()), CommittedAt: &c}}
	}
	build := func() LanesReport {
		rep := LanesReport{Weights: room.String(), Commitment: LaneCommitment(room.String()),
			Phases: []PhaseLanes{phase("presale", 0, 5, presale), phase("public", 5, 3600, public)}}
		for _, l := range room.List() {
			rep.Lanes = append(rep.Lanes, LaneAdmissions{Name: l.Name, Weight: l.Weight})
		}
		waiting, next := []uint64{60, 60}, []uint64{0, 0}
		var credit []int64
		spec := ""
		for s := range 12 {
			at := t0.Add(time.Duration(s) * time.Second)
			w := presale
			if s >= 5 {
				w = public
			}
			if w.String() != spec {
				spec, credit = w.String(), make([]int64, 2) // new weights, a new round robin
			}
			before := slices.Clone(credit)
			got := SplitAdmissions(w.Weights(), credit, waiting, 3)
			rep.Steps = append(rep.Steps, LaneStep(spec, before, waiting, got, at))
			for i, k := range got {
				if k > 0 {
					rep.Lanes[i].Admissions = append(rep.Lanes[i].Admissions, HistoryEntry{Kind: HistoryAdmit, Start: next[i], Count: k, At: at})
				}
				next[i] += k
				waiting[i] -= k
			}
		}
		return rep
	}
	if c := CheckLanes(build()); !c.OK || c.Steps != 12 {
		t.Fatalf("a fair report: %+v", c)
	}
	old := build()
	for i := range old.Steps {
		old.Steps[i].Weights = ""
	}
	if c := CheckLanes(old); !c.OK {
		t.Fatalf("a report whose steps name no weights: %+v", c)
	}
	for name, tc := range map[string]struct {
		tamper func(*LanesReport)
		want   string
	}{
		"a step split by other weights": {func(r *LanesReport) { r.Steps[6].Weights = room.String() }, `step 6 at 2026-06-01T10:00:06Z split by "general=1 presale=3", the weights in force then are "general=2 presale=1"`},
		"a commitment at the start": {func(r *LanesReport) { at := r.Phases[1].Start; r.Phases[1].CommittedAt = &at },
			"phase public: the weights were committed at 2026-06-01T10:00:05Z, not before the phase started at 2026-06-01T10:00:05Z"},
		"no commitment time":       {func(r *LanesReport) { r.Phases[0].CommittedAt = nil }, "phase presale: no time of commitment"},
		"weights not committed to": {func(r *LanesReport) { r.Phases[0].Commitment = LaneCommitment(room.String()) }, "phase presale: the commitment"},
		"the general lane let in in the presale": {func(r *LanesReport) { r.Steps[1].Shares[0].Admitted, r.Steps[1].Shares[1].Admitted = 1, 2 },
			"step 1 at 10:00:01 gave [1 2], the weights give [0 3]"},
	} {
		rep := build()
		tc.tamper(&rep)
		if c := CheckLanes(rep); c.OK || !slices.ContainsFunc(c.Problems, func(p string) bool { return strings.Contains(p, tc.want) }) {
			t.Errorf("%s: %+v, want a problem mentioning %q", name, c, tc.want)
		}
	}
}

// TestClaimsAheadCountsTheOtherLanes: the supply's reach is counted in
// claims (docs/supply.md), so a fan's outcome counts, beside the people
// ahead in their own lane, the other lanes' admissions meanwhile by their
// share of the weights, each at most what that lane has waiting.
func TestClaimsAheadCountsTheOtherLanes(t *testing.T) {
	lanes, err := ParseLanes("presale=3")
	if err != nil {
		t.Fatal(err)
	}
	v := &view{showUp: 1}
	v.settings.Lanes = lanes
	// 100 waiting in the general lane, 20 in presale (lane 1).
	v.snap.Seq, v.snap.Serving = 100, 0
	v.snap.Lanes = []LaneCounters{{}, {Seq: 30, Serving: 10}}
	for _, c := range []struct {
		what        string
		place       uint64
		ahead, want uint64
	}{
		// A general fan with 4 ahead: while 5 general go in, presale gets
		// 15, of its 20.
		{"general, 4 ahead", 4, 4, 4 + 15},
		// Further back, presale runs dry: its 20 at most.
		{"general, 50 ahead", 50, 50, 50 + 20},
		// A presale fan with 5 ahead: while 6 presale go in, general
		// gets 2.
		{"presale, 5 ahead", LanePlace(1, 15), 5, 5 + 2},
		{"presale, at the front", LanePlace(1, 10), 0, 0 + 1},
	} {
		if got := v.claimsAhead(c.place, c.ahead); got != c.want {
			t.Errorf("%s: %d claims ahead, want %d", c.what, got, c.want)
		}
	}
	// In a phase that holds presale back (weight 0), a presale fan waits
	// for every general fan waiting; a general fan for nobody in presale.
	held, _ := ParseLanes("presale=0 general=1")
	v.settings.Phases = NewPhases(ScheduledPhase{Name: "public", Start: time.Unix(0, 0), End: time.Unix(1<<40, 0),
		Settings: OverridesOf(Settings{Lanes: held}, "lanes")})
	v.settings = v.settings.At(time.Unix(1, 0))
	if got := v.claimsAhead(LanePlace(1, 15), 5); got != 5+100 {
		t.Errorf("presale held back, 5 ahead: %d claims ahead, want 105", got)
	}
	if got := v.claimsAhead(4, 4); got != 4 {
		t.Errorf("general with presale held back, 4 ahead: %d claims ahead, want 4", got)
	}
	v.settings = Settings{}
	// Without lanes, the people ahead are the claims ahead.
	v.settings.Lanes = Lanes{}
	if got := v.claimsAhead(4, 4); got != 4 {
		t.Errorf("without lanes: %d claims ahead, want 4", got)
	}
}
