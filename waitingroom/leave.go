package waitingroom

import (
	"context"
	"errors"
	"fmt"
)

// Leave gives up, at once, the place and the session a fan's cookies hold:
// the fan left the line from the page. It works out the state the ticket
// and pass are in as Admit does and follows the admission table's row for
// EventLeave: a live session is revoked (its pass refused on every node
// within a refresh) and the store frees what the place held, in one round
// trip (Store.Leave). The ticket is spent from then on: a copy of it rejoins
// at the back once the store is asked about it. Cookies that open nothing
// hold nothing: no store call. The caller clears the cookies whatever the
// outcome but an error, after which the fan may try again.
func (r *Room) Leave(ctx context.Context, a Arrival) (*Transition, error) {
	from := TicketNew
	var visitor string
	var place uint64
	var pass Pass
	hasPass := false
	if a.Pass != "" {
		if p, err := r.CheckPass(a.Pass); err == nil {
			pass, hasPass, from = p, true, TicketInSession
		}
	}
	if c, err := r.OpenTicketCookie(a.Ticket); a.Ticket != "" && err == nil {
		t := c.Ticket
		visitor, place = t.Visitor.String(), t.Place
		switch {
		case hasPass && pass.Subject != visitor:
			// A pass and a ticket of two visitors: the ticket is the
			// place to give up; the pass is revoked all the same.
		case hasPass:
		case t.Claimed && r.idled.has(visitor):
			from = TicketIdledOut
		case t.Claimed:
			from = TicketInSession
		default:
			from = TicketWaiting
			if st, _ := r.view.Load().status(t, r.now()); st.State == StateAdmitted {
				from = TicketAtFront
			} else if st.State == StateWaitlist {
				from = TicketWaitlisted
			}
		}
	} else if hasPass {
		visitor = pass.Subject
		place = ^uint64(0) // no place known: only the session ends
	}
	tr, err := follow(from, EventLeave)
	if err != nil {
		return nil, err
	}
	if tr.Action != ActionLeave {
		return tr, nil
	}
	if hasPass {
		if err := r.Revoke(ctx, pass); err != nil && !errors.Is(err, ErrRevocationDeferred) {
			return nil, err
		}
	}
	now := r.now()
	lim := r.settings().limitsAt(now)
	err = r.store.Leave(ctx, r.id, visitor, place, now, lim)
	if errors.Is(err, ErrNoRoom) {
		if err = r.reseed(ctx, now); err == nil {
			err = r.store.Leave(ctx, r.id, visitor, place, now, lim)
		}
	}
	if err != nil {
		r.storeFailed()
		return nil, fmt.Errorf("%w: %w", ErrStoreUnavailable, err)
	}
	return tr, nil
}
