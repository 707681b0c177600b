package waitingroom

import (
	"fmt"
	"time"

	"github.com/foyer-dev/foyer/waitingroom/pass"
)

// Visit is the outcome of a visitor's request: their status, the ticket to hand
// back, and, when they were admitted, their pass.
type Visit struct {
	Status Status
	Ticket Ticket
	// Pass is the signed admission pass when the visitor holds a session, and
	// Admission what it says.
	Pass      string
	Admission Pass
	// Rejoined is set when the visitor's old ticket was spent (their session had
	// ended) and they were given a new place at the back, or, while the room
	// asks for a proof of work, the puzzle to earn one.
	Rejoined bool
	// transition is the row of the admission table the visit followed last.
	transition *Transition
}

// Peek tells a ticket holder where they stand from this node's view alone: no
// store call, and no claim even when their turn has come (the page they return
// to claims). It serves pushes over live connections.
func (r *Room) Peek(t Ticket) (Status, Ticket) {
	v, now := r.view.Load(), r.now()
	st, t := v.status(t, now)
	if st.State == StateAdmitted && !v.settings.admitting(now) && !v.inGrace(t.Place) {
		// Below serving but not among the admissions still in their grace:
		// a fan whose admission lapsed, whom a room admitting nobody does not
		// let in. Telling them "admitted" would send their page to claim, be
		// held, and come back here for the same answer, again and again.
		st.State, st.RefreshSeconds = StatePaused, v.maxRefresh()
	}
	// A live connection is a fan watching: their place is seen.
	r.markWaiting(t, st)
	return st, t
}

// inGrace reports whether place is among the admissions still within their
// grace window, as this node last saw them.
func (v *view) inGrace(place uint64) bool {
	for _, b := range v.snap.Batches {
		if place >= b.Start && place < b.End() {
			return true
		}
	}
	return false
}

// admitted signs the pass for a visitor who holds a session. Every pass of one
// session has the same id (SessionPassID), whoever claimed it and on whichever
// node: a ticket shared among clients shares its session, and the origin's
// revoke of any of its passes refuses them all.
func (r *Room) admitted(t Ticket, expires time.Time, now time.Time) (Visit, error) {
	v := r.view.Load()
	if v.supply.Known {
		// Beside what the fan was told, the fairness report counts whether
		// they were let in (PlacesTold).
		r.beats.tell(t.Place, MarkLetIn)
	}
	p := Pass{
		ID:        SessionPassID(r.id, t.Visitor.String(), expires),
		Room:      r.id,
		Subject:   t.Visitor.String(),
		OrderKey:  t.Place,
		IssuedAt:  now,
		ExpiresAt: expires,
		Waitlist:  v.holdsReturns(t.Place),
	}
	tok, err := r.key.IssuePass(p, r.issuer)
	if err != nil {
		return Visit{}, err
	}
	t.Claimed = true
	t.Seen = now
	st := r.AdmittedStatus(p)
	if v.draws() {
		k := t.Key
		st.DrawIndex = &k
	}
	return Visit{Status: st, Ticket: t, Pass: tok, Admission: p}, nil
}

// keyOf is the order key of the ticket cookie that came with pass p, when the
// room draws and it is the ticket the pass was signed for: an admitted fan's
// status shows it as draw_index, as it did while they waited. Opening the
// cookie is local work: no store call.
func (r *Room) keyOf(cookie string, p Pass) *uint64 {
	if cookie == "" || !r.view.Load().draws() {
		return nil
	}
	c, err := r.OpenTicketCookie(cookie)
	if err != nil || c.Ticket.Visitor.String() != p.Subject {
		return nil
	}
	k := c.Ticket.Key
	return &k
}

// OpenTicket reads a ticket cookie for this room.
func (r *Room) OpenTicket(value string) (Ticket, error) {
	return r.keys.OpenTicket(value, r.id, r.now(), r.settings().TicketLifetime)
}

// TicketCookie is a ticket as a visitor's cookie held it: what MustReseal
// sets a poll's ticket against.
type TicketCookie struct {
	Ticket
	current bool // sealed with the room's signing key, not a previous one
}

// OpenTicketCookie is OpenTicket, remembering which key sealed the ticket.
func (r *Room) OpenTicketCookie(value string) (TicketCookie, error) {
	t, current, err := r.keys.openTicketCurrent(value, r.id, r.now(), r.settings().TicketLifetime)
	return TicketCookie{Ticket: t, current: current}, err
}

// SealTicket encodes a ticket as a cookie value.
func (r *Room) SealTicket(t Ticket) string { return r.key.SealTicket(t) }

// AppendSealedTicket appends the ticket's cookie value to dst.
func (r *Room) AppendSealedTicket(dst []byte, t Ticket) []byte {
	return r.key.AppendSealedTicket(dst, t)
}

// CheckPass verifies a pass for this room: a map lookup when this node has seen
// it before, an EdDSA verification otherwise. Revoked passes are refused.
func (r *Room) CheckPass(token string) (Pass, error) {
	now := r.now()
	p, ok := r.passes.get(token, now)
	if !ok {
		var err error
		p, err = r.verifier.Verify(token, r.id)
		if err != nil {
			r.stats.PassesRejected.Add(1)
			return Pass{}, err
		}
		r.passes.put(token, p, now)
	}
	if r.revoked.has(p.ID) {
		r.stats.PassesRejected.Add(1)
		return Pass{}, fmt.Errorf("%w: revoked", ErrInvalidPass)
	}
	if r.idled.voids(p) {
		r.stats.PassesRejected.Add(1)
		return Pass{}, fmt.Errorf("%w: its session idled out", ErrInvalidPass)
	}
	r.beats.session(p.Subject)
	r.notePass(p)
	return p, nil
}

// IssuePassthrough signs a pass with no session behind it, for a room whose
// queueing method is passthrough: everyone goes in, and the origin still gets a
// pass to trust.
func (r *Room) IssuePassthrough() (string, Pass, error) {
	now := r.now()
	p := Pass{
		ID:        pass.NewID(),
		Room:      r.id,
		Subject:   NewVisitorID().String(),
		IssuedAt:  now,
		ExpiresAt: now.Add(r.settings().SessionDuration),
	}
	tok, err := r.key.IssuePass(p, r.issuer)
	return tok, p, err
}

// AdmittedStatus is the status of a visitor holding pass p.
func (r *Room) AdmittedStatus(p Pass) Status {
	zero := uint64(0)
	ends := p.ExpiresAt
	return Status{
		Room:        r.id,
		Title:       r.settings().Title,
		State:       StateAdmitted,
		Position:    &zero,
		Progress:    1,
		SessionEnds: &ends,
	}
}

// frontStatus is the status of a visitor held at the front: nobody ahead.
func (v *view) frontStatus(room string) Status {
	zero := uint64(0)
	return Status{Room: room, Title: v.settings.Title, State: StateQueued, Waiting: v.waiting(), Position: &zero, Progress: 1}
}

// RequeuedStatus is what a fan whose session was just requeued (Requeue)
// is shown: first at the front, asked to look again soon, and told that the
// site had a problem and they keep their turn.
func (r *Room) RequeuedStatus() Status {
	st := r.view.Load().frontStatus(r.id)
	st.RefreshSeconds, st.Requeued = minRefresh, true
	return st
}
