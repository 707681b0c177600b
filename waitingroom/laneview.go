package waitingroom

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
// among the lanes where fans wait. Places as they are without lanes.
func (v *view) laneWait(place uint64, places float64) float64 {
	lanes := v.settings.Lanes
	if !lanes.On() {
		return places
	}
	own, _ := LaneOfPlace(place)
	if own >= lanes.Len() {
		return places
	}
	var total int
	for i, ln := range lanes.List() {
		waiting := v.snap.Seq > v.snap.Serving
		if i > 0 {
			c := v.laneCounters(i)
			waiting = c.Seq > c.Serving
		}
		if waiting || i == own {
			total += ln.Weight
		}
	}
	return places * float64(total) / float64(lanes.List()[own].Weight)
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
	lanes := v.settings.Lanes
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
