package waitingroom

import (
	"math"
	"time"
)

// State is what a visitor is told about where they stand.
type State string

// The states of the public status contract (docs/endpoints.md, "What fans, apps and origins see").
const (
	StatePrequeue State = "prequeue"
	StateQueued   State = "queued"
	StateAdmitted State = "admitted"
	StateSoldOut  State = "sold_out"
	StateClosed   State = "closed"
	StatePaused   State = "paused"
	// StateChallenge: a newcomer must solve Status.Challenge before a place
	// is made for them (see pow.go).
	StateChallenge State = "challenge"
	// StateCodeRequired: the room gives places to code holders only
	// (codes_required) and the visitor sent no code: no place is made, the
	// page asks for one (docs/codes.md).
	StateCodeRequired State = "code_required"
	// StateWaitlist: the sale is sold out and the room keeps its line as a
	// waitlist (the waitlist setting): the fan keeps their place, and is
	// let in, in order, as units come back (docs/waitlist.md).
	StateWaitlist State = "waitlist"
)

// Status is the answer to "where am I?", served as JSON and rendered on the page.
type Status struct {
	Room  string `json:"room"`
	Title string `json:"title,omitempty"`
	State State  `json:"state"`
	// Position is the estimated number of people ahead (0 = next). It never rises
	// between two polls of the same visitor. Null while it cannot be known (before
	// the pre-queue's draw).
	Position *uint64 `json:"position"`
	// ETASeconds is the estimated wait, from the pace the store measured
	// (see Pace); null when the line is not moving or nothing measured
	// supports a figure.
	ETASeconds *int64 `json:"eta_seconds"`
	// RefreshSeconds is when to ask again.
	RefreshSeconds int `json:"refresh_seconds"`
	// Progress is how far through their own wait the visitor is, 1 only once
	// admitted: with an estimate, the time waited over the time waited plus
	// the estimate; without one, the share of the places between their
	// first look and their turn (their own included) that have gone in. A
	// fan at the front told "about 3 minutes" is not shown a full bar.
	Progress float64 `json:"progress"`
	// Waiting is the estimated number of people waiting in the room.
	Waiting uint64 `json:"waiting"`
	// OpensAt is when the pre-queue opens (not yet open) or the sale starts
	// (pre-queue); in a phase's own pre-queue, the phase's start.
	OpensAt *time.Time `json:"opens_at,omitempty"`
	// DrawIndex is the visitor's order key, shown in every state in which
	// they hold a ticket (or a pass with its ticket) of a room that draws:
	// with it anyone can recompute their place once the seed is revealed.
	// The pass's order_key claim is the place, not this.
	DrawIndex *uint64 `json:"draw_index,omitempty"`
	// AwaitingDraw is set, in a room with the random queueing method, for a
	// visitor not yet placed: everyone waiting is drawn into the next group
	// once the current one is in. Position is null until then.
	AwaitingDraw bool `json:"awaiting_draw,omitempty"`
	// SessionEnds is when an admitted visitor's pass expires.
	SessionEnds *time.Time `json:"session_ends,omitempty"`
	// Reconnecting is set while the room cannot reach its store: the visitor
	// keeps their place, but nobody is admitted until it is back.
	Reconnecting bool `json:"reconnecting,omitempty"`
	// Returned is set for a visitor whose admission lapsed (they were let in
	// but did not turn up within the grace) and who came back within the
	// return window: they wait at the front for the next free slot, or, in a
	// room that admits nobody now, until it admits again.
	Returned bool `json:"returned,omitempty"`
	// TurnPassed is set on the answer that gave a new place, at the back, to
	// a visitor whose admission lapsed more than the return window ago.
	TurnPassed bool `json:"turn_passed,omitempty"`
	// Requeued is set for a visitor whose session the site failed through
	// no fault of theirs: they wait first at the front with their place
	// (docs/PROTOCOL.md, "Requeue").
	Requeued bool `json:"requeued,omitempty"`
	// QueueAll is set, with state paused, when the operator holds everyone
	// (queue_all) rather than pausing the sale: nobody is let in yet.
	QueueAll bool `json:"queue_all,omitempty"`
	// Challenge is the puzzle to solve, in the challenge state.
	Challenge *ChallengeOffer `json:"challenge,omitempty"`
	// CodeOptional, in the code_required state, says the room takes fans
	// without a code too: a page that refused a code asks for it again and
	// offers the line without one. Pages only: never in the JSON.
	CodeOptional bool `json:"-"`
	// Outcome, Chance and SupplyEnds say, once the room knows its supply,
	// whether the fan is likely to get tickets, as a range of probability,
	// and where, in people ahead, the supply is estimated to end
	// (docs/supply.md). Absent while the supply is unknown. The fan keeps
	// their place whatever they are told.
	Outcome    Outcome     `json:"outcome,omitempty"`
	Chance     *Chance     `json:"chance,omitempty"`
	SupplyEnds *SupplyEnds `json:"supply_ends,omitempty"`
}

// SupplyEnds is the range of positions (people ahead) at which the supply is
// estimated to run out.
type SupplyEnds struct {
	Low  uint64 `json:"low"`
	High uint64 `json:"high"`
}

// withOutcome adds what a fan whose claim comes after ahead others' is told
// of their chance, when the room knows its supply.
func (st Status) withOutcome(v *view, ahead uint64) Status {
	t, ok := v.tell(ahead)
	if !ok {
		return st
	}
	// Copied out of t before its address is taken: t itself would escape
	// and cost every poll an allocation, supply known or not.
	chance := t.Chance
	st.Outcome, st.Chance = t.Outcome, &chance
	st.SupplyEnds = &SupplyEnds{Low: t.Ends[0], High: t.Ends[1]}
	return st
}

// Refresh bounds. The longest interval stays well inside the admission grace so
// that a visitor admitted between two polls claims in time.
const (
	minRefresh = 2
	maxRefresh = 20
)

func (v *view) maxRefresh() int {
	return max(minRefresh, min(maxRefresh, int(v.settings.AdmissionGrace.Seconds()/2)-2))
}

// waiting estimates the people in line: the live places not yet admitted,
// and those too young to judge scaled by the share of admitted people who
// show up.
func (v *view) waiting() uint64 {
	return v.people(v.ahead(v.snap.Seq)) + v.lanesWaiting()
}

// waitFor estimates the seconds until places more places have gone in, from
// the pace the store recorded (the same on every node: see Pace), never faster
// than the rate limit allows. ok is false when nothing measured supports a
// figure, and while the store cannot be reached (nobody is admitted then).
func (v *view) waitFor(places float64) (float64, bool) {
	if !v.healthy || math.IsInf(places, 1) {
		return 0, false
	}
	return v.snap.Pace.Wait(places, float64(v.settings.NewUsersPerMinute)/60)
}

// eta rounds an estimate up to the second for the status, nil when unknown.
func eta(sec float64, ok bool) *int64 {
	if !ok {
		return nil
	}
	e := int64(math.Ceil(sec))
	return &e
}

// refreshFor asks often near the front, seldom far back: the load of polling
// falls on those it matters least to. Without an estimate, the places to go
// stand for seconds, up to half the longest interval.
func (v *view) refreshFor(eta *int64, places float64) int {
	if eta == nil {
		return max(minRefresh, min(v.maxRefresh()/2, int(places/4)))
	}
	return max(minRefresh, min(v.maxRefresh(), int(*eta/4)))
}

// status computes a visitor's status from the node's view, with no store call,
// and returns the ticket updated with what they were shown.
func (v *view) status(t Ticket, now time.Time) (Status, Ticket) {
	s := v.settings
	st := Status{
		Room:         v.room,
		Title:        s.Title,
		Reconnecting: !v.healthy,
		Waiting:      v.waiting(),
	}
	t.Seen = now
	if v.draws() {
		// The fan's order key, in every state, so that they can check
		// their place once the seed is out: a fan placed by a rolling draw
		// or let in on the spot would otherwise never see it, and the
		// ticket that holds it is out of the page's reach.
		idx := t.Key
		st.DrawIndex = &idx
	}
	phase := s.PhaseAt(now)
	switch {
	case s.SoldOut && !s.Waitlist:
		st.State = StateSoldOut
		return st.refreshIn(60), t
	case phase == Ended || s.QueueingMethod == Reject:
		st.State = StateClosed
		return st.refreshIn(60), t
	case phase == NotYetOpen:
		st.State, st.DrawIndex = StateClosed, nil
		opens := s.PrequeueStart
		st.OpensAt = &opens
		return st.refreshIn(untilRefresh(opens.Sub(now), v.maxRefresh())), t
	}

	var held time.Time
	if !t.Placed {
		if starts, draw, ok := v.phasePrequeue(t.Key, now); ok && draw {
			// Registered in a phase's pre-queue: places are drawn at the
			// phase's start, and nobody is shown one before. (A copy is
			// pointed to: taking starts' own address would put it on the
			// heap for every poll, in a pre-queue or not.)
			opens := starts
			st.State, st.OpensAt = StatePrequeue, &opens
			return st.refreshIn(untilRefresh(starts.Sub(now), v.maxRefresh())), t
		} else if ok {
			held = starts // in line, held until the phase's start
		}
	}
	t, known := v.place(t)
	if !known && s.QueueingMethod == Random && phase == Live && (v.draw != nil || !s.ShuffleAtEventStart) {
		// Waiting for the random method's next draw (the pre-queue's, if
		// any, is made).
		return v.awaitingDraw(st), t
	}
	if !known {
		// Registered for the draw, which has not been made yet.
		st.State = StatePrequeue
		start := s.EventStart
		st.OpensAt = &start
		return st.refreshIn(untilRefresh(start.Sub(now), v.maxRefresh())), t
	}
	if t.Place < v.servingOf(t.Place) {
		st.State = StateAdmitted
		zero := uint64(0)
		st.Position, st.Progress = &zero, 1
		t.LastAhead = 1
		return st, t
	}

	// People ahead are the live places ahead (see liveness.go); the wait is
	// as many admissions, and this fan's own.
	measured, young := v.laneAhead(t.Place)
	places := measured + young
	ahead := v.people(measured, young)
	if t.LastAhead > 0 {
		ahead = min(ahead, t.LastAhead-1)
	}
	t.LastAhead = ahead + 1
	if t.FirstAhead == 0 {
		t.FirstAhead = ahead + 1
	}
	st.Position = &ahead
	// The supply's reach is counted in claims: those of the other lanes
	// come before this fan's too.
	claimsAhead := v.claimsAhead(t.Place, ahead)
	first := t.FirstAhead - 1
	st.Progress = roundProgress(float64(first-min(first, ahead)) / float64(first+1))

	switch {
	case phase == Prequeue || !held.IsZero():
		st.State = StatePrequeue
		start := s.EventStart
		if !held.IsZero() {
			start = held
		}
		st.OpensAt = &start
		// Nobody moves before the start; after it, the line moves at the
		// pace it is measured to, once it has been.
		wait, ok := v.waitFor(v.laneWait(t.Place, places+1))
		st.ETASeconds = eta(start.Sub(now).Seconds()+wait, ok)
		return st.withOutcome(v, claimsAhead).refreshIn(untilRefresh(start.Sub(now), v.maxRefresh())), t
	case s.SoldOut:
		// Only with the waitlist on (above): the place is kept, its
		// position counted as a queued one's, from this node's view.
		st.State = StateWaitlist
		return st.withOutcome(v, claimsAhead).refreshIn(v.maxRefresh()), t
	case s.Paused || s.QueueAll:
		st.State, st.QueueAll = StatePaused, s.QueueAll && !s.Paused
		return st.withOutcome(v, claimsAhead).refreshIn(v.maxRefresh()), t
	}
	st = st.withOutcome(v, claimsAhead)
	st.State = StateQueued
	st.ETASeconds = eta(v.waitFor(v.laneWait(t.Place, places+1)))
	if st.ETASeconds != nil {
		waited := max(0, now.Sub(t.Joined).Seconds())
		st.Progress = roundProgress(min(0.99, waited/(waited+float64(*st.ETASeconds))))
	}
	return st.refreshIn(v.refreshFor(st.ETASeconds, places+1)), t
}

// roundProgress keeps four decimals: finer means nothing to a progress bar.
func roundProgress(p float64) float64 { return math.Round(p*1e4) / 1e4 }

func (st Status) refreshIn(sec int) Status {
	st.RefreshSeconds = sec
	return st
}

// untilRefresh asks again at the latest when d has passed, but not sooner than
// minRefresh.
func untilRefresh(d time.Duration, most int) int {
	return max(minRefresh, min(most, int(math.Ceil(d.Seconds()))))
}

// awaitingDraw is the status of a visitor of a random room whose group has not
// been drawn: no position yet, and a wait estimated from the places still to
// go in before the draw and half of everyone waiting for it.
func (v *view) awaitingDraw(st Status) Status {
	st.AwaitingDraw = true
	st.State = StateQueued
	if v.settings.SoldOut {
		st.State = StateWaitlist
		return st.refreshIn(v.maxRefresh())
	}
	if v.settings.Paused || v.settings.QueueAll {
		st.State, st.QueueAll = StatePaused, v.settings.QueueAll && !v.settings.Paused
		return st.refreshIn(v.maxRefresh())
	}
	end := v.drawnEnd()
	before := end - min(end, v.snap.Serving)
	pool := v.snap.Seq - min(v.snap.Seq, max(end, v.snap.Serving))
	wait := float64(before) + float64(pool+1)/2
	st.ETASeconds = eta(v.waitFor(wait))
	return st.refreshIn(v.refreshFor(st.ETASeconds, wait))
}

// drawnEnd is the first key no draw has placed.
func (v *view) drawnEnd() uint64 {
	if n := len(v.snap.Epochs); n > 0 {
		return v.snap.Epochs[n-1].End()
	}
	if v.snap.DrawClosed {
		return v.snap.DrawSize
	}
	return 0
}

// draws reports whether the room places fans by a draw, as the draw
// endpoint's enabled says: its fans are shown their order key.
func (v *view) draws() bool { return v.settings.drawn() || len(v.snap.Epochs) > 0 || v.phaseDrawn() }

// place works out the ticket's place and reports whether it is known. A place
// given by a draw never changes, so it is kept in the ticket (Placed) and the
// permutation is computed once; a first-come place is the key itself, and is
// not kept, so that a room switched to the random method draws those still
// waiting.
func (v *view) place(t Ticket) (Ticket, bool) {
	if t.Placed {
		return t, true
	}
	k := t.Key
	switch {
	case v.draw != nil && k < v.draw.Size():
		t.Place, t.Placed = v.draw.Place(k), true
		return t, true
	case v.draw == nil && v.settings.ShuffleAtEventStart:
		// The pre-queue's draw is still to come (or its seed is not known
		// here yet): no place yet.
		return t, false
	}
	if p, ok := v.phasePlace(k); ok {
		t.Place, t.Placed = p, true
		return t, true
	}
	for _, e := range v.epochs {
		if k >= e.Start && k < e.End() {
			if e.draw == nil {
				return t, false // drawn, but this node lacks the seed for now
			}
			t.Place, t.Placed = e.Start+e.draw.Place(k-e.Start), true
			return t, true
		}
	}
	if v.settings.QueueingMethod == Random && k >= v.drawnEnd() {
		return t, false // in the next draw
	}
	// First come, first served: after the draws, or before any draw this node
	// remembers (those places are long admitted).
	t.Place = k
	return t, true
}
