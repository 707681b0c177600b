package waitingroom

import "math"

// Positions in the priority lanes (docs/line.md, "Priority lanes"), from the
// node's view with no store call, as the general lane's are: a fan's
// position counts the places ahead in their own lane, and their wait is
// their lane's share of the rate. The place itself says the lane
// (LaneOfPlace), so the ticket carries it with no field of its own; in a
// room without lanes every place is the general lane's and nothing here
// changes a figure.

// servingOf is the serving counter of place's lane as the view knows it.
func (v *view) servingOf(place uint64) uint64 {
	lane, _ := LaneOfPlace(place)
	if lane == 0 {
		return v.snap.Serving
	}
	return LanePlace(lane, v.laneCounters(lane).Serving)
}

// laneCounters are lane's counters in the view (zero when unknown).
func (v *view) laneCounters(lane int) LaneCounters {
	if lane < len(v.snap.Lanes) {
		return v.snap.Lanes[lane]
	}
	return LaneCounters{}
}

// laneAhead is ahead for a place in any lane: a lane other than the general
// lane has no heartbeats of its own, so each of its places ahead counts as
// a young one.
func (v *view) laneAhead(place uint64) (measured, young float64) {
	lane, n := LaneOfPlace(place)
	if lane == 0 {
		return v.ahead(place)
	}
	serving := v.laneCounters(lane).Serving
	return 0, float64(n - min(n, serving))
}

// lanesWaiting counts the places waiting in the lanes other than the
// general lane.
func (v *view) lanesWaiting() uint64 {
	var n uint64
	for _, l := range v.snap.Lanes {
		n += l.Seq - min(l.Seq, l.Serving)
	}
	return n
}

// laneWait turns places to go in a place's lane into places of the whole
// line gone in meanwhile: a lane gets its weight's share of the admissions
// among the lanes where fans wait. Places as they are without lanes; +Inf
// (no estimate) in a lane that admits nobody in the phase in force, whose
// fans wait for a phase that gives it a weight.
func (v *view) laneWait(place uint64, places float64) float64 {
	list, own, ok := v.laneOf(place)
	if !ok {
		return places
	}
	if list[own].Weight == 0 {
		return math.Inf(1)
	}
	var total int
	for i, ln := range list {
		waiting := v.snap.Seq > v.snap.Serving
		if i > 0 {
			c := v.laneCounters(i)
			waiting = c.Seq > c.Serving
		}
		if waiting || i == own {
			total += ln.Weight
		}
	}
	return places * float64(total) / float64(list[own].Weight)
}

// laneOf is the lanes in force and place's lane among them; ok is false in a
// room without lanes now, or for a place of a lane the room no longer has:
// such a place waits as in a line without lanes.
func (v *view) laneOf(place uint64) (list []Lane, own int, ok bool) {
	if !v.settings.Lanes.On() && v.settings.Phases.Len() == 0 {
		// No lanes, and no phase to bring any: every poll of a room
		// without lanes comes here, and working out the lanes in force
		// copies the settings three times over.
		return nil, 0, false
	}
	lanes := v.settings.LanesInForce()
	own, _ = LaneOfPlace(place)
	if !lanes.On() || own >= lanes.Len() {
		return nil, 0, false
	}
	return lanes.List(), own, true
}

// claimsAhead turns ahead, the people ahead of a place in its own lane, into
// the claims the line will make before the place's own (docs/supply.md, "The
// estimate"): while the place's lane lets in ahead and the place itself,
// every other lane with someone waiting is let in its weight's share of as
// many, at most the places it has waiting now. Ahead as it is without lanes.
func (v *view) claimsAhead(place, ahead uint64) uint64 {
	list, own, ok := v.laneOf(place)
	if !ok {
		return ahead
	}
	// A lane of weight 0 in the phase in force admits nobody meanwhile: the
	// lanes that admit let in all they have waiting first.
	turns := math.Inf(1)
	if list[own].Weight > 0 {
		turns = float64(ahead+1) / float64(list[own].Weight)
	}
	claims := ahead
	for i, ln := range list {
		if i == own || ln.Weight == 0 {
			continue
		}
		var waiting uint64
		if i == 0 {
			waiting = v.people(v.ahead(v.snap.Seq))
		} else {
			c := v.laneCounters(i)
			waiting = c.Seq - min(c.Seq, c.Serving)
		}
		if math.IsInf(turns, 1) {
			claims += waiting
			continue
		}
		claims += min(waiting, uint64(math.Ceil(turns*float64(ln.Weight))))
	}
	return claims
}

// raiseMaxKey notes a key this node handed out: the general lane's keys are
// the order keys a re-seed raises the line's to; another lane's place is
// counted in that lane's counters (Recall.Lanes). Call with r.mu held.
func (r *Room) raiseMaxKey(key uint64) {
	if lane, _ := LaneOfPlace(key); lane == 0 {
		r.maxKey = max(r.maxKey, key+1)
	}
}

// LaneInfo is one priority lane as a node sees it: the people waiting in it
// and the places it let in (the general lane's: the live places, as
// Counters.Admitted counts them).
type LaneInfo struct {
	Name     string
	Waiting  uint64
	Admitted uint64
}

// laneInfo is Info.Lanes: nil in a room without lanes.
func (v *view) laneInfo() []LaneInfo {
	lanes := v.settings.LanesInForce()
	if !lanes.On() {
		return nil
	}
	out := make([]LaneInfo, lanes.Len())
	for i, l := range lanes.List() {
		out[i].Name = l.Name
		if i == 0 {
			out[i].Waiting, out[i].Admitted = v.people(v.ahead(v.snap.Seq)), v.snap.Admitted
			continue
		}
		c := v.laneCounters(i)
		out[i].Waiting, out[i].Admitted = c.Seq-min(c.Seq, c.Serving), c.Admitted
	}
	return out
}
