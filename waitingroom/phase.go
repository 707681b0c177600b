package waitingroom

import "time"

// Phase is where a room stands in its schedule, before runtime switches (pause,
// sold out) are taken into account.
type Phase int

const (
	// NotYetOpen: before the pre-queue opens. Visitors are told when it will.
	NotYetOpen Phase = iota
	// Prequeue: between prequeue_start (or the beginning of time) and
	// event_start. Visitors register; nobody is admitted.
	Prequeue
	// Live: the sale is on; the controller admits.
	Live
	// Ended: after event_end. Nobody new is admitted.
	Ended
)

// PhaseAt tells the phase of a room with settings s at now.
func (s Settings) PhaseAt(now time.Time) Phase {
	switch {
	case !s.EventEnd.IsZero() && !now.Before(s.EventEnd):
		return Ended
	case !s.EventStart.IsZero() && now.Before(s.EventStart):
		if !s.PrequeueStart.IsZero() && now.Before(s.PrequeueStart) {
			return NotYetOpen
		}
		return Prequeue
	}
	return Live
}

// admitting reports whether the controller may move serving forward.
func (s Settings) admitting(now time.Time) bool {
	s = s.At(now)
	return !s.SoldOut && s.admittingAtAll(now)
}

// admittingAtAll is admitting before sold out is taken into account: whether
// a waitlist may let anyone in now.
func (s Settings) admittingAtAll(now time.Time) bool {
	if s.Paused || s.QueueAll || s.QueueingMethod == Reject {
		return false
	}
	return s.PhaseAt(now) == Live
}

// waitlisting reports whether the line is a waitlist at now: sold out with
// the waitlist on (docs/waitlist.md).
func (s Settings) waitlisting(now time.Time) bool {
	s = s.At(now)
	return s.SoldOut && s.Waitlist && s.QueueingMethod != Reject && s.PhaseAt(now) != Ended
}

// drawn reports whether the room places visitors by a draw: the pre-queue's, or
// the rolling draws of the random method.
func (s Settings) drawn() bool { return s.ShuffleAtEventStart || s.QueueingMethod == Random }

// limitsAt are the Limits store calls run with.
func (s Settings) limitsAt(now time.Time) Limits {
	s = s.At(now) // the phase in force at the call's instant (phases.go)
	lim := Limits{
		Rate:         s.NewUsersPerMinute,
		Cap:          s.TotalActiveUsers,
		Session:      s.SessionDuration,
		Grace:        s.AdmissionGrace,
		ReturnWindow: s.ReturnWindow,
		Retention:    s.TicketLifetime,
		Open:         s.admitting(now),
		CloseDraw:    s.ShuffleAtEventStart && !s.EventStart.IsZero() && !now.Before(s.EventStart),
		Reshuffle:    s.QueueingMethod == Random,
		WaitingIdle:  s.WaitingIdleTimeout,
		SessionIdle:  s.SessionIdleTimeout,
		JoinLimit:    s.JoinLimit,
		Requeues:     s.requeues(),
		Lanes:        s.LanesInForce(),
		PhaseQueue:   s.Phases.configured().prequeueAt(now),
	}
	if s.waitlisting(now) {
		lim.Waitlist = true
		if s.admittingAtAll(now) {
			lim.WaitlistUnits = 1 // the room sets the estimate's (waitlistUnits)
		}
	}
	return lim
}

// RoomLanes are the room's lanes (docs/line.md, "Priority lanes"): every
// lane the room's own lanes or any of its phases' name, in canonical order,
// so that a lane's number, and with it every place, is the same in every
// phase. The weights are the room's own (0 for a lane only phases name).
func (s Settings) RoomLanes() Lanes {
	room := s.Unphased()
	if room.Phases.Len() == 0 {
		return room.Lanes
	}
	sets := []Lanes{room.Lanes}
	for _, ph := range room.Phases.list.phases {
		if ph.Settings.Has("lanes") {
			sets = append(sets, ph.Settings.Values().Lanes)
		}
	}
	u := unionLanes(sets...)
	if !u.On() {
		return room.Lanes
	}
	return room.Lanes.weighed(u)
}

// LanesInForce are the room's lanes with the weights in force in s (the
// phase laid over s, if it sets lanes, else the room's): off when the room
// has none.
func (s Settings) LanesInForce() Lanes {
	room := s.RoomLanes()
	if !room.On() || room == s.Lanes {
		return room
	}
	return s.Lanes.weighed(room)
}

// requeues bounds the requeues of one ticket (docs/PROTOCOL.md, "Requeue"):
// requeue_on_origin_error, and one while it is off, for the origin's retry.
func (s Settings) requeues() int { return max(1, s.RequeueOnOriginError) }

// placesOpen reports whether a newcomer who joins at now is given a place
// (or, in the pre-queue, a registration): not before the pre-queue opens,
// not once the room has ended, is sold out or rejects newcomers.
func (s Settings) placesOpen(now time.Time) bool {
	s = s.At(now)
	p := s.PhaseAt(now)
	return (!s.SoldOut || s.Waitlist) && s.QueueingMethod != Reject && p != NotYetOpen && p != Ended
}
