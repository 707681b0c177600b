package redisstore

import (
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/foyer-dev/foyer/waitingroom"
)

// Priority lanes in Redis (lua/lib.lua, "Priority lanes"; docs/line.md,
// "Priority lanes"): the same rules as the memory store's lanes.go.

// joinLanes is join.lua's lane argument: each joiner's lane number (plus
// MaxLanes for a lane of weight 0 in force), or ""
// when every joiner is the general lane's (then the script runs as in a room
// without lanes).
func joinLanes(joiners []waitingroom.Joiner, lim waitingroom.Limits) string {
	if !lim.Lanes.On() {
		return ""
	}
	some := false
	parts := make([]string, len(joiners))
	weights := lim.Lanes.List()
	for i, j := range joiners {
		lane := lim.Lanes.LaneOf(j.Lane)
		if weights[lane].Weight == 0 {
			// The lane admits nobody in the phase in force: its joiner
			// waits, even in an empty room (join.lua).
			lane += waitingroom.MaxLanes
		}
		some = some || lane > 0
		parts[i] = strconv.Itoa(lane)
	}
	if !some {
		return ""
	}
	return strings.Join(parts, ",")
}

// lanePlaces reads join.lua's places of a join with lanes: a place and
// whether it was admitted, for each joiner not refused, in order.
func lanePlaces(v any, out []waitingroom.JoinResult, expires time.Time) error {
	a, ok := v.([]any)
	if !ok {
		return fmt.Errorf("unexpected places %T", v)
	}
	k := 0
	for i := range out {
		if out[i].Refused != waitingroom.NotRefused {
			continue
		}
		if k+1 >= len(a) {
			return fmt.Errorf("%d places for more joiners", len(a)/2)
		}
		n, err := ints(a[k:k+2], 2)
		if err != nil || n[0] < 0 {
			return fmt.Errorf("place %v: %v", a[k:k+2], err)
		}
		out[i].Key = uint64(n[0])
		if n[1] == 1 {
			out[i].Admitted, out[i].Expires = true, expires
		}
		k += 2
	}
	return nil
}

// advanceLanes is advance.lua's lanes arguments: the weights' text
// (Lanes.String) and the weights, "," between them; both "" without lanes.
func advanceLanes(lim waitingroom.Limits) (string, string) {
	if !lim.Lanes.On() {
		return "", ""
	}
	w := lim.Lanes.Weights()
	parts := make([]string, len(w))
	for i, x := range w {
		parts[i] = strconv.Itoa(x)
	}
	return lim.Lanes.String(), strings.Join(parts, ",")
}

// parseLanes reads snapshot.lua's lanes field: "" in a room that never had
// lanes, else "<weights text>|<credits>|<seq>:<serving>:<admitted>,..." for
// the lanes after the general lane. Lanes never used are left out at the end,
// as the memory store, which makes a lane's counters on first use, leaves
// them out.
func parseLanes(s string, snap *waitingroom.Snapshot) error {
	if s == "" {
		return nil
	}
	f := strings.Split(s, "|")
	if len(f) != 3 {
		return fmt.Errorf("malformed lanes field %q", s)
	}
	snap.LaneSpec = f[0]
	if f[1] != "" {
		for c := range strings.SplitSeq(f[1], ",") {
			n, err := strconv.ParseInt(c, 10, 64)
			if err != nil {
				return fmt.Errorf("malformed lane credit %q", s)
			}
			snap.LaneCredit = append(snap.LaneCredit, n)
		}
	}
	lanes := []waitingroom.LaneCounters{{}}
	for part := range strings.SplitSeq(f[2], ",") {
		var n [3]uint64
		x := strings.Split(part, ":")
		if len(x) != 3 {
			return fmt.Errorf("malformed lane %q", part)
		}
		for i := range n {
			var err error
			if n[i], err = strconv.ParseUint(x[i], 10, 64); err != nil {
				return fmt.Errorf("malformed lane %q", part)
			}
		}
		lanes = append(lanes, waitingroom.LaneCounters{Seq: n[0], Serving: n[1], Admitted: n[2]})
	}
	for len(lanes) > 1 && lanes[len(lanes)-1] == (waitingroom.LaneCounters{}) {
		lanes = lanes[:len(lanes)-1]
	}
	if len(lanes) > 1 {
		snap.Lanes = lanes
	}
	return nil
}

// parseLaneStep reads a lanes entry of the history,
// "l:at:waiting,admitted,credit;...:weights" (lua/lib.lua, record_lanes);
// entries written before steps recorded their weights end at the shares.
func parseLaneStep(s string) (waitingroom.HistoryEntry, error) {
	f := strings.SplitN(s, ":", 4)
	if len(f) < 3 {
		return waitingroom.HistoryEntry{}, fmt.Errorf("bad entry %q", s)
	}
	weights := ""
	if len(f) == 4 {
		weights = f[3]
	}
	at, err := strconv.ParseInt(f[1], 10, 64)
	if err != nil {
		return waitingroom.HistoryEntry{}, fmt.Errorf("bad entry %q", s)
	}
	var credit []int64
	var waiting, got []uint64
	for part := range strings.SplitSeq(f[2], ";") {
		x := strings.Split(part, ",")
		if len(x) != 3 {
			return waitingroom.HistoryEntry{}, fmt.Errorf("bad entry %q", s)
		}
		w, err1 := strconv.ParseUint(x[0], 10, 64)
		a, err2 := strconv.ParseUint(x[1], 10, 64)
		c, err3 := strconv.ParseInt(x[2], 10, 64)
		if err1 != nil || err2 != nil || err3 != nil {
			return waitingroom.HistoryEntry{}, fmt.Errorf("bad entry %q", s)
		}
		waiting, got, credit = append(waiting, w), append(got, a), append(credit, c)
	}
	return waitingroom.LaneStep(weights, credit, waiting, got, time.UnixMicro(at).UTC()), nil
}
