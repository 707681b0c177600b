package waitingroom_test

import (
	"testing"
	"time"

	"github.com/foyer-dev/foyer/waitingroom"
)

// TestTicketResealedOnlyWhenItChanged: a poll that changes nothing but when
// the ticket was seen leaves the cookie as it is; a new position, a claim, a
// ticket sealed with a previous key or one due for renewal is sealed again.
func TestTicketResealedOnlyWhenItChanged(t *testing.T) {
	e := newEnv(t)
	r := e.node("concert", waitingroom.Settings{TotalActiveUsers: 1, NewUsersPerMinute: 60, TicketLifetime: 12 * time.Hour})
	e.join(r) // takes the only slot
	e.join(r)
	fan := e.join(r) // two ahead
	sealed := r.SealTicket(fan.Ticket)
	open := func(v string) waitingroom.TicketCookie {
		tk, err := r.OpenTicketCookie(v)
		if err != nil {
			t.Fatal(err)
		}
		return tk
	}
	was := open(sealed)
	e.clock.Advance(10 * time.Second)
	v := e.poll(r, was.Ticket)
	if r.MustReseal(was, v.Ticket) {
		t.Fatalf("nothing moved in 10 s, yet the ticket must be sealed again: %+v -> %+v", was, v.Ticket)
	}
	e.clock.Advance(time.Hour - 10*time.Second)
	if v = e.poll(r, was.Ticket); !r.MustReseal(was, v.Ticket) {
		t.Fatal("a ticket last renewed an hour ago (a twelfth of its 12 h lifetime) was not renewed")
	}
	if v.Ticket.LastAhead == 0 {
		t.Fatal("no position was shown")
	}
	was = open(r.SealTicket(v.Ticket))
	changed := was.Ticket
	changed.LastAhead--
	if !r.MustReseal(was, changed) {
		t.Fatal("a lower position shown was not sealed again")
	}
	changed = was.Ticket
	changed.Claimed = true
	if !r.MustReseal(was, changed) {
		t.Fatal("a claim was not sealed again")
	}
	if !r.MustReseal(waitingroom.TicketCookie{}, v.Ticket) {
		t.Fatal("a ticket that did not come from the cookie was not sealed")
	}
}
