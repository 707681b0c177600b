package waitingroom

import (
	"errors"
	"fmt"
	"regexp"
	"slices"
	"strconv"
	"strings"
)

// Lanes are a room's priority lanes (docs/line.md, "Priority lanes"): each
// lane is a line of its own, first come first served within it, and every
// controller step shares its admissions between the lanes that have someone
// waiting, by their weights (SplitAdmissions). The zero Lanes is one line,
// as a room without the setting has.
//
// A Lanes is kept in its canonical order: GeneralLane first, then the other
// lanes by name. A lane's index in it is the lane's number in places
// (LanePlace), so every node numbers the lanes alike. It is a value (an
// array, not a slice), so that settings compare with ==.
type Lanes struct {
	n    int
	lane [MaxLanes]Lane
}

// Lane is one lane: its name and its weight.
type Lane struct {
	Name   string
	Weight int
}

const (
	// GeneralLane is the lane of fans who carry no code: it is always
	// there, with weight 1 unless the setting gives it another.
	GeneralLane = "general"
	// MaxLanes bounds the lanes of a room.
	MaxLanes = 8
	// MaxLaneWeight bounds a lane's weight: a step's share is worked out
	// one admission at a time, over the weights (SplitAdmissions).
	MaxLaneWeight = 1000
	// laneShift places a lane's places above every other lane's: lane i's
	// n-th place is i<<laneShift + n. The general lane is lane 0, so its
	// places are the order keys of a room without lanes. 2^40 places a lane
	// is beyond any sale, and 8 lanes of them stay below 2^53, which a
	// Redis script's numbers hold exactly.
	laneShift = 40
)

var laneNamePattern = regexp.MustCompile(`^[a-z0-9_-]{1,32}$`)

// ParseLanes reads "name=weight ..." (the Caddyfile's and the admin API's
// form), or "" or "off" for none. The general lane is added with weight 1
// when not named.
func ParseLanes(s string) (Lanes, error) {
	f := strings.Fields(s)
	if len(f) == 0 || len(f) == 1 && f[0] == "off" {
		return Lanes{}, nil
	}
	var l []Lane
	for _, w := range f {
		name, weight, ok := strings.Cut(w, "=")
		if !ok {
			return Lanes{}, fmt.Errorf("%q is not <lane>=<weight>, such as presale=3", w)
		}
		if !laneNamePattern.MatchString(name) {
			return Lanes{}, fmt.Errorf("lane name %q must be 1–32 of a-z, 0-9, _ and -", name)
		}
		// A weight of 0 keeps the lane's fans in their places and lets none
		// of them in while it is in force: a phase's lanes hold back a lane
		// that way (docs/line.md, "Priority lanes").
		n, err := strconv.Atoi(weight)
		if err != nil || n < 0 || n > MaxLaneWeight {
			return Lanes{}, fmt.Errorf("lane %s: weight %q must be a whole number from 0 to %d", name, weight, MaxLaneWeight)
		}
		if slices.ContainsFunc(l, func(x Lane) bool { return x.Name == name }) {
			return Lanes{}, fmt.Errorf("lane %s is named twice", name)
		}
		l = append(l, Lane{Name: name, Weight: n})
	}
	if !slices.ContainsFunc(l, func(x Lane) bool { return x.Name == GeneralLane }) {
		l = append(l, Lane{Name: GeneralLane, Weight: 1})
	}
	if len(l) > MaxLanes {
		return Lanes{}, fmt.Errorf("at most %d lanes (general included), got %d", MaxLanes, len(l))
	}
	if !slices.ContainsFunc(l, func(x Lane) bool { return x.Weight > 0 }) {
		return Lanes{}, errors.New("at least one lane needs a weight above 0, or nobody is ever let in")
	}
	slices.SortFunc(l, compareLanes)
	out := Lanes{n: len(l)}
	copy(out.lane[:], l)
	return out, nil
}

// compareLanes is the lanes' canonical order: general first, then by name.
func compareLanes(a, b Lane) int {
	switch {
	case a.Name == b.Name:
		return 0
	case a.Name == GeneralLane:
		return -1
	case b.Name == GeneralLane:
		return 1
	}
	return strings.Compare(a.Name, b.Name)
}

// unionLanes are the lanes any of sets names, in canonical order, with the
// weights of the first set naming each (see Settings.RoomLanes). Lanes
// beyond MaxLanes are dropped: validation reports them.
func unionLanes(sets ...Lanes) Lanes {
	var out Lanes
	for _, set := range sets {
		for _, ln := range set.List() {
			if out.Index(ln.Name) >= 0 {
				continue
			}
			if out.n == MaxLanes {
				break
			}
			out.lane[out.n] = ln
			out.n++
		}
	}
	slices.SortFunc(out.lane[:out.n], compareLanes)
	return out
}

// weighed are the lanes of room with the weights l gives them: 0 for a lane
// l does not name, and the general lane's 1 when l is off (a phase's "lanes
// off" lets in the general lane alone).
func (l Lanes) weighed(room Lanes) Lanes {
	out := room
	for i := range out.List() {
		out.lane[i].Weight = 0
		if j := l.Index(out.lane[i].Name); j >= 0 {
			out.lane[i].Weight = l.lane[j].Weight
		} else if l.n == 0 && i == 0 {
			out.lane[i].Weight = 1
		}
	}
	return out
}

// Weight is the lane's weight, 0 for a lane it does not name.
func (l Lanes) Weight(name string) int {
	if i := l.Index(name); i >= 0 {
		return l.lane[i].Weight
	}
	return 0
}

// List is the lanes in order: general first, then by name.
func (l Lanes) List() []Lane { return l.lane[:l.n] }

// Len is the number of lanes, 0 for none (one line).
func (l Lanes) Len() int { return l.n }

// String writes the lanes as ParseLanes reads them, in canonical order:
// "off" for none.
func (l Lanes) String() string {
	if l.n == 0 {
		return "off"
	}
	var b strings.Builder
	for i, ln := range l.List() {
		if i > 0 {
			b.WriteByte(' ')
		}
		b.WriteString(ln.Name + "=" + strconv.Itoa(ln.Weight))
	}
	return b.String()
}

// On reports whether the room has lanes: more than the one line.
func (l Lanes) On() bool { return l.n > 1 }

// Index is the lane's number, -1 for none.
func (l Lanes) Index(name string) int {
	return slices.IndexFunc(l.List(), func(ln Lane) bool { return ln.Name == name })
}

// LaneOf is the number of the lane a joiner's Lane names: the general lane
// (0) for "" and for a lane the room does not have.
func (l Lanes) LaneOf(name string) int { return max(0, l.Index(name)) }

// Name is lane i's name.
func (l Lanes) Name(i int) string {
	if i < 0 || i >= l.n {
		return GeneralLane
	}
	return l.lane[i].Name
}

// Weights are the lanes' weights, in order.
func (l Lanes) Weights() []int {
	w := make([]int, l.n)
	for i, ln := range l.List() {
		w[i] = ln.Weight
	}
	return w
}

func (l Lanes) MarshalText() ([]byte, error) { return []byte(l.String()), nil }

func (l *Lanes) UnmarshalText(b []byte) error { return parseInto(l, b, ParseLanes) }

func (l Lanes) check(Bounds) error {
	_, err := ParseLanes(l.String())
	return err
}

func (Lanes) notation(Bounds) Notation {
	return Notation{Arg: "<lane>=<weight>...", Words: true,
		Limits: fmt.Sprintf("up to %d lanes named with `a-z`, `0-9`, `_`, `-` (the room's and its phases' together); weights 0–%d, one above 0", MaxLanes, MaxLaneWeight),
		CLI:    "'<lane>=<weight> ...'|off", JSON: `a string such as "presale=3 members=2 general=1", or "off"`,
		Patch: "(`\"presale=3 general=1\"`; `\"off\"` removes them)"}
}

// LanePlace is the n-th place of lane i (from 0).
func LanePlace(lane int, n uint64) uint64 { return uint64(lane)<<laneShift | n }

// LaneOfPlace splits a place into its lane and its number within the lane.
func LaneOfPlace(place uint64) (lane int, n uint64) {
	return int(place >> laneShift), place & (1<<laneShift - 1)
}

// SplitAdmissions shares n admissions between the lanes by their weights,
// by a smooth weighted round robin: one admission at a time, every lane
// with someone still waiting (waiting[i] > 0, counting what it was given
// already) adds its weight to its credit, the lane with the most credit
// (the first of them on a tie) takes the admission and gives back the sum
// of the weights of the lanes that took part. An empty lane takes no part,
// so no admission is spent on it and its credit stands still. credit is
// the state the store keeps between steps, updated in place, so that every
// node and every step agree; a lane of weight 0 takes no part either (it
// admits nobody while that weight is in force); over any run of steps in which the same lanes
// wait, each lane's admissions stay within one of its weighted share. It
// returns each lane's admissions, which sum to n unless fewer wait.
func SplitAdmissions(weights []int, credit []int64, waiting []uint64, n uint64) []uint64 {
	got := make([]uint64, len(weights))
	for ; n > 0; n-- {
		var total int64
		best := -1
		for i, w := range weights {
			if w == 0 || waiting[i] <= got[i] {
				continue
			}
			credit[i] += int64(w)
			total += int64(w)
			if best < 0 || credit[i] > credit[best] {
				best = i
			}
		}
		if best < 0 {
			break
		}
		credit[best] -= total
		got[best]++
	}
	return got
}
