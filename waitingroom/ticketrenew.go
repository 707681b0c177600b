package waitingroom

import "time"

// MustReseal reports whether a visitor whose cookie held was must be sent
// their ticket t again. A poll that changed nothing but when the ticket was
// last seen need not re-seal it and set the cookie again: the cookie holds
// what it held, and a status poll that writes no Set-Cookie costs the node
// less (docs/benchmarks.md, "Numbers"). It must when anything else changed (the position
// shown, the draw's place, the claim), when was was sealed with a previous
// signing key, or when was was last renewed a twelfth of the ticket lifetime
// ago, so that a fan who keeps polling never sees their ticket lapse.
func (r *Room) MustReseal(was TicketCookie, t Ticket) bool {
	if !was.current || t.Room == "" {
		return true
	}
	if r.now().Sub(was.Seen) >= ticketRenewal(r.settings().TicketLifetime) {
		return true
	}
	return was.Room != t.Room || was.Visitor != t.Visitor || was.Key != t.Key ||
		was.Joined.Unix() != t.Joined.Unix() ||
		was.FirstAhead != t.FirstAhead || was.LastAhead != t.LastAhead ||
		was.Place != t.Place || was.Placed != t.Placed || was.Claimed != t.Claimed
}

// ticketRenewal is how often a polling fan's ticket is renewed at least, for
// the lifetime given.
func ticketRenewal(lifetime time.Duration) time.Duration { return lifetime / 12 }
