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
	if s.Paused || s.SoldOut || s.QueueAll || s.QueueingMethod == Reject {
		return false
	}
	return s.PhaseAt(now) == Live
}

// drawn reports whether the room places visitors by a draw: the pre-queue's, or
// the rolling draws of the random method.
func (s Settings) drawn() bool { return s.ShuffleAtEventStart || s.QueueingMethod == Random }

// limitsAt are the Limits store calls run with.
func (s Settings) limitsAt(now time.Time) Limits {
	s = s.At(now) // the phase in force at the call's instant (phases.go)
	return Limits{
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
		Lanes:        s.Lanes,
	}
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
	return !s.SoldOut && s.QueueingMethod != Reject && p != NotYetOpen && p != Ended
}
