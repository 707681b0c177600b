package waitingroom_test

import (
	"errors"
	"testing"
	"time"

	"github.com/foyer-dev/foyer/waitingroom"
)

// TestRotationKeepsPlacesAndSessions: a room restarted with a new signing key
// and the old one as previous keeps the old key's ticket holders in their place
// and its pass holders in their session, signs everything new with the new key,
// and refuses keys it was not given. Once the old key is dropped, what it signed
// is refused.
func TestRotationKeepsPlacesAndSessions(t *testing.T) {
	e := newEnv(t)
	oldKey, newKey, stranger := e.key, mustKey(t), mustKey(t)
	s := waitingroom.Settings{TotalActiveUsers: 1, NewUsersPerMinute: 60}
	before := e.node("concert", s)
	admitted := e.join(before)
	waiting := e.join(before)
	if admitted.Pass == "" || waiting.Pass != "" {
		t.Fatalf("want one admitted and one waiting, got %s and %s", admitted.Status.State, waiting.Status.State)
	}
	ticketA := before.SealTicket(waiting.Ticket)
	e.step(1, before)

	rotated := e.roomWith(s, newKey, oldKey)
	if got := rotated.KeyIDs(); len(got) != 2 || got[0] != newKey.KeyID() || got[1] != oldKey.KeyID() {
		t.Fatalf("key ids %v, want the new key then the old", got)
	}
	if p := e.pass(rotated, admitted.Pass); p.Subject != admitted.Ticket.Visitor.String() {
		t.Fatalf("old key's pass verified as %+v", p)
	}
	tk, err := rotated.OpenTicket(ticketA)
	if err != nil || tk.Key != waiting.Ticket.Key || tk.Visitor != waiting.Ticket.Visitor {
		t.Fatalf("old key's ticket: %+v, %v; want the same place", tk, err)
	}
	e.step(1, rotated)
	v := e.poll(rotated, tk)
	if v.Status.State != waitingroom.StateQueued || *v.Status.Position != 0 {
		t.Fatalf("waiting fan after the rotation: %s at %d, want queued, next", v.Status.State, *v.Status.Position)
	}
	// The answer re-seals the ticket with the new key, even when nothing in
	// it changed: the old key is no longer needed to open it.
	cookie, err := rotated.OpenTicketCookie(ticketA)
	if err != nil {
		t.Fatal(err)
	}
	unchanged := cookie.Ticket
	if !rotated.MustReseal(cookie, unchanged) {
		t.Fatal("a ticket sealed with the previous key, unchanged, is not sealed again")
	}
	newOnly := e.roomWith(s, newKey)
	if _, err := newOnly.OpenTicket(rotated.SealTicket(v.Ticket)); err != nil {
		t.Fatalf("re-sealed ticket does not open with the new key alone: %v", err)
	}

	forged, err := stranger.IssuePass(waitingroom.Pass{Room: "concert", Subject: "x", IssuedAt: e.clock.Now(), ExpiresAt: e.clock.Now().Add(time.Minute)}, waitingroom.DefaultIssuer)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := rotated.CheckPass(forged); !errors.Is(err, waitingroom.ErrInvalidPass) {
		t.Fatalf("pass of a key not configured: %v, want ErrInvalidPass", err)
	}
	if _, err := rotated.OpenTicket(stranger.SealTicket(waiting.Ticket)); !errors.Is(err, waitingroom.ErrInvalidTicket) {
		t.Fatalf("ticket of a key not configured: %v, want ErrInvalidTicket", err)
	}

	// The admitted fan's session ends; the waiting fan's pass is signed by the
	// new key.
	if err := rotated.Revoke(e.ctx, e.pass(rotated, admitted.Pass)); err != nil {
		t.Fatal(err)
	}
	e.step(1, rotated)
	v = e.poll(rotated, v.Ticket)
	if v.Pass == "" {
		t.Fatalf("waiting fan after the slot freed: %s", v.Status.State)
	}
	if _, err := newOnly.CheckPass(v.Pass); err != nil {
		t.Fatalf("pass issued after the rotation does not verify with the new key alone: %v", err)
	}

	if _, err := newOnly.CheckPass(admitted.Pass); !errors.Is(err, waitingroom.ErrInvalidPass) {
		t.Fatalf("old key's pass once the old key is dropped: %v, want ErrInvalidPass", err)
	}
	if _, err := newOnly.OpenTicket(ticketA); !errors.Is(err, waitingroom.ErrInvalidTicket) {
		t.Fatalf("old key's ticket once the old key is dropped: %v, want ErrInvalidTicket", err)
	}
}

// roomWith starts a node of the room signing with key and trusting previous.
func (e *roomEnv) roomWith(s waitingroom.Settings, key *waitingroom.SigningKey, previous ...*waitingroom.SigningKey) *waitingroom.Room {
	e.t.Helper()
	r, err := waitingroom.NewRoom(waitingroom.Config{ID: "concert", Settings: s, Store: e.store, Key: key, Previous: previous, Now: e.clock.Now})
	if err != nil {
		e.t.Fatal(err)
	}
	if err := r.Start(e.ctx); err != nil {
		e.t.Fatal(err)
	}
	return r
}
