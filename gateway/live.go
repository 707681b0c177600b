package gateway

import (
	"slices"
	"strings"

	"github.com/foyer-dev/foyer/waitingroom"
)

// liveRoom gathers this process's handles on one room ID. Across a config reload
// that changed a room's settings, the old and the new handle live side by side
// for a moment; they share the store, so either can answer for the room, but
// each counts its own node events.
type liveRoom struct {
	id    string
	rooms []*waitingroom.Room
}

// roomSource lists the live rooms. The admin API and the metrics take one, so
// that tests can hand them rooms of their own.
type roomSource func() []liveRoom

// liveRooms lists the rooms in the pool, sorted by ID. It only collects
// pointers while the pool is locked: anything slower would hold up a config
// load waiting for the same lock.
func liveRooms() []liveRoom {
	var all []*waitingroom.Room
	rooms.Range(func(_, v any) bool {
		if rh, ok := v.(*roomHandle); ok && rh.room != nil {
			all = append(all, rh.room)
		}
		return true
	})
	return groupRooms(all)
}

// groupRooms groups rooms by ID, sorted by ID.
func groupRooms(all []*waitingroom.Room) []liveRoom {
	byID := make(map[string]int)
	var out []liveRoom
	for _, r := range all {
		i, ok := byID[r.ID()]
		if !ok {
			i = len(out)
			byID[r.ID()] = i
			out = append(out, liveRoom{id: r.ID()})
		}
		out[i].rooms = append(out[i].rooms, r)
	}
	slices.SortFunc(out, func(a, b liveRoom) int { return strings.Compare(a.id, b.id) })
	return out
}

// findRoom returns the live room with the given ID.
func (src roomSource) findRoom(id string) (liveRoom, bool) {
	for _, lr := range src() {
		if lr.id == id {
			return lr, true
		}
	}
	return liveRoom{}, false
}

// lead is the handle that answers for the room: one whose store answers, and
// among those the one with the freshest view.
func (lr liveRoom) lead() (*waitingroom.Room, waitingroom.Info) {
	best, info := lr.rooms[0], lr.rooms[0].Info()
	for _, r := range lr.rooms[1:] {
		in := r.Info()
		if in.Healthy && !info.Healthy || in.Healthy == info.Healthy && in.At.After(info.At) {
			best, info = r, in
		}
	}
	return best, info
}

// nodeStats are a room's event counts on this node, summed over its handles.
// A reload that replaces a handle starts its counts afresh, which Prometheus
// reads as a counter reset.
type nodeStats struct {
	Joins          uint64 `json:"joins"`
	JoinsLimited   uint64 `json:"joins_limited"`
	DirectAdmits   uint64 `json:"direct_admits"`
	Polls          uint64 `json:"polls"`
	Claims         uint64 `json:"claims"`
	PassesRejected uint64 `json:"passes_rejected"`
	Revokes        uint64 `json:"revokes"`
	StoreErrors    uint64 `json:"store_errors"`
	Reseeds        uint64 `json:"reseeds"`
	Reclaims       uint64 `json:"reclaims"`
	Heartbeats     uint64 `json:"heartbeats"`
	Challenges     uint64 `json:"challenges"`
	AnswersRefused uint64 `json:"answers_refused"`
	// Requeues are fans put back at the front for the origin's failure,
	// RequeuesRefused failures let through with the requeues spent.
	Requeues        uint64 `json:"requeues"`
	RequeuesRefused uint64 `json:"requeues_refused"`
}

// codeAttempts are the room's access code attempts on this node, by result
// (the metric's label), summed over its handles.
func (lr liveRoom) codeAttempts() map[string]uint64 {
	m := map[string]uint64{"accepted": 0, "wrong": 0, "used_up": 0, "limited": 0, "returned": 0, "unreturned": 0}
	for _, r := range lr.rooms {
		c := r.CodeAttempts()
		m["accepted"] += c.Accepted.Load()
		m["wrong"] += c.Wrong.Load()
		m["used_up"] += c.UsedUp.Load()
		m["limited"] += c.Limited.Load()
		m["returned"] += c.Returned.Load()
		m["unreturned"] += c.Unreturned.Load()
	}
	return m
}

// unsent counts the revocations the room's handles on this node took (and
// enforce) that the store has yet to record.
func (lr liveRoom) unsent() int {
	n := 0
	for _, r := range lr.rooms {
		n += r.Unsent()
	}
	return n
}

func (lr liveRoom) stats() nodeStats {
	var n nodeStats
	for _, r := range lr.rooms {
		s := r.Stats()
		n.Joins += s.Joins.Load()
		n.JoinsLimited += s.JoinsLimited.Load()
		n.DirectAdmits += s.DirectAdmits.Load()
		n.Polls += s.Polls.Load()
		n.Claims += s.Claims.Load()
		n.PassesRejected += s.PassesRejected.Load()
		n.Revokes += s.Revokes.Load()
		n.StoreErrors += s.StoreErrors.Load()
		n.Reseeds += s.Reseeds.Load()
		n.Reclaims += s.Reclaims.Load()
		n.Heartbeats += s.Beats.Load()
		n.Challenges += s.Challenges.Load()
		n.AnswersRefused += s.AnswersRefused.Load()
		n.Requeues += s.Requeues.Load()
		n.RequeuesRefused += s.RequeuesSpent.Load()
	}
	return n
}
