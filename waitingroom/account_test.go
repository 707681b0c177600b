package waitingroom_test

import (
	"context"
	"errors"
	"fmt"
	"net/netip"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/foyer-dev/foyer/waitingroom"
	"github.com/foyer-dev/foyer/waitingroom/storetest"
)

// TestAccountSessionEndsThenOnePlaceAgain: an account admitted in two
// browsers holds one session; when the origin ends it, the first browser
// back rejoins at the back, and the other browser, with its spent ticket,
// finds that same new place rather than taking another.
func TestAccountSessionEndsThenOnePlaceAgain(t *testing.T) {
	e := newEnv(t)
	r := e.node("concert", waitingroom.Settings{TotalActiveUsers: 1, NewUsersPerMinute: 60})
	alice := waitingroom.Arrival{Account: waitingroom.NewAccountKey("concert", "alice"), HasAccount: true}
	b1, err := r.JoinAs(e.ctx, alice)
	if err != nil || b1.Pass == "" {
		t.Fatalf("alice in an empty room: %+v %v, want admitted", b1.Status, err)
	}
	e.step(1, r) // the node's view learns she is in
	b2, err := r.JoinAs(e.ctx, alice)
	if err != nil || b2.Pass == "" || b2.Ticket.Visitor != b1.Ticket.Visitor || b2.Ticket.Key != b1.Ticket.Key {
		t.Fatalf("alice's second browser: %+v (visitor %s key %d) %v, want her session (visitor %s key %d)",
			b2.Status, b2.Ticket.Visitor, b2.Ticket.Key, err, b1.Ticket.Visitor, b1.Ticket.Key)
	}
	if p1, p2 := e.pass(r, b1.Pass), e.pass(r, b2.Pass); p1.Subject != p2.Subject || !p1.ExpiresAt.Equal(p2.ExpiresAt) {
		t.Fatalf("passes %+v and %+v: want one session", p1, p2)
	}
	bob := e.join(r) // waits behind alice's one slot
	if bob.Pass != "" {
		t.Fatal("bob admitted beside alice in a room of one slot")
	}
	if err := r.Revoke(e.ctx, e.pass(r, b1.Pass)); err != nil {
		t.Fatal(err)
	}
	e.step(1, r)
	back1, err := r.PollAs(e.ctx, alice, b1.Ticket)
	if err != nil || !back1.Rejoined || back1.Ticket.Key <= bob.Ticket.Key {
		t.Fatalf("alice's first browser after her session: %+v key %d %v, want a new place behind bob (%d)", back1.Status, back1.Ticket.Key, err, bob.Ticket.Key)
	}
	back2, err := r.PollAs(e.ctx, alice, b2.Ticket)
	if err != nil || back2.Ticket.Key != back1.Ticket.Key || back2.Ticket.Visitor != back1.Ticket.Visitor {
		t.Fatalf("alice's second browser: key %d visitor %s %v, want her new place %d of %s",
			back2.Ticket.Key, back2.Ticket.Visitor, err, back1.Ticket.Key, back1.Ticket.Visitor)
	}
}

// TestAccountJoinStoreDown: an account's join needs the store like any
// other: while it is away the newcomer is told to come back (503), never a
// place made up by the node.
func TestAccountJoinStoreDown(t *testing.T) {
	e := newEnv(t)
	flaky := storetest.NewFlaky(e.store)
	e.store = flaky
	r := e.node("concert", waitingroom.Settings{TotalActiveUsers: 1, NewUsersPerMinute: 60})
	e.join(r) // holds the slot
	flaky.SetDown(true)
	alice := waitingroom.Arrival{Account: waitingroom.NewAccountKey("concert", "alice"), HasAccount: true}
	if _, err := r.JoinAs(e.ctx, alice); !errors.Is(err, waitingroom.ErrStoreUnavailable) {
		t.Fatalf("account join with the store down: %v, want ErrStoreUnavailable", err)
	}
	flaky.SetDown(false)
	e.step(1, r)
	first, err := r.JoinAs(e.ctx, alice)
	if err != nil {
		t.Fatal(err)
	}
	again, err := r.JoinAs(e.ctx, alice)
	if err != nil || again.Ticket.Key != first.Ticket.Key {
		t.Fatalf("after the store came back: keys %d and %d (%v), want one place", first.Ticket.Key, again.Ticket.Key, err)
	}
}

// hangingAccounts is a store whose account joins hang until released, as a
// Redis that stopped answering would.
type hangingAccounts struct {
	waitingroom.Store
	entered chan struct{}
	release chan struct{}
}

func (h *hangingAccounts) JoinAccount(ctx context.Context, room string, req waitingroom.AccountJoin, now time.Time, lim waitingroom.Limits) (waitingroom.AccountPlace, error) {
	h.entered <- struct{}{}
	<-h.release
	return h.Store.JoinAccount(ctx, room, req, now, lim)
}

// TestAccountJoinsBoundedWhileStoreHangs: account joins are not batched, so
// they are bounded on their own: with the store hanging, a node holds at
// most MaxJoinQueue of them, and tells the rest to come back at once.
func TestAccountJoinsBoundedWhileStoreHangs(t *testing.T) {
	e := newEnv(t)
	hang := &hangingAccounts{Store: e.store, entered: make(chan struct{}, 2*waitingroom.MaxJoinQueue), release: make(chan struct{})}
	e.store = hang
	r := e.node("concert", waitingroom.Settings{TotalActiveUsers: 1, NewUsersPerMinute: 60})
	var wg sync.WaitGroup
	for i := range waitingroom.MaxJoinQueue {
		wg.Go(func() {
			fan := waitingroom.Arrival{Account: waitingroom.NewAccountKey("concert", fmt.Sprint("fan-", i)), HasAccount: true}
			if _, err := r.JoinAs(e.ctx, fan); err != nil {
				t.Errorf("held account join: %v", err)
			}
		})
	}
	for range waitingroom.MaxJoinQueue {
		<-hang.entered
	}
	done := make(chan error, 1)
	go func() {
		_, err := r.JoinAs(e.ctx, waitingroom.Arrival{Account: waitingroom.NewAccountKey("concert", "one too many"), HasAccount: true})
		done <- err
	}()
	select {
	case err := <-done:
		if !errors.Is(err, waitingroom.ErrStoreUnavailable) || !errors.Is(err, waitingroom.ErrJoinQueueFull) {
			t.Errorf("account join beyond the bound: %v, want a full queue", err)
		}
	case <-time.After(5 * time.Second):
		t.Errorf("account join beyond the bound still held after 5s: it went to the hanging store")
	}
	close(hang.release)
	wg.Wait()
}

func TestAccountKey(t *testing.T) {
	a := waitingroom.NewAccountKey("concert", "alice")
	if a != waitingroom.NewAccountKey("concert", "alice") {
		t.Fatal("the same account hashed twice differs")
	}
	for _, other := range []waitingroom.AccountKey{
		waitingroom.NewAccountKey("concert", "bob"),
		waitingroom.NewAccountKey("other", "alice"),
		waitingroom.NewAccountKey("concerta", "lice"), // the room and id are separated
		waitingroom.NewAccountKey("concert", strings.Repeat("alice", 100)),
	} {
		if other == a {
			t.Fatalf("%x: another account or room has alice's key", other)
		}
	}
	// The key is part of what stores keep: it must not change between releases.
	// SHA-256("foyer-account-v1\x00concert\x00alice"), first 8 bytes.
	if got := fmt.Sprintf("%x", a); got != "372bd0c0d8664469" {
		t.Fatalf("alice's key in concert: %s, want 372bd0c0d8664469", got)
	}
}

// TestAccountWithProofOfWork: with a proof of work asked of newcomers, an
// account whose session ended answers one puzzle and gets its new place; its
// spent place must not send it back to another puzzle.
func TestAccountWithProofOfWork(t *testing.T) {
	e := newEnv(t)
	r := e.node("pow", powSettings(8))
	client := netip.MustParseAddr("192.0.2.7")
	alice := waitingroom.Arrival{Client: client, Account: waitingroom.NewAccountKey("pow", "alice"), HasAccount: true}
	answer := func() waitingroom.Visit {
		t.Helper()
		st, ok := r.NewChallenge(client)
		if !ok {
			t.Fatal("no challenge asked")
		}
		vis, err := r.AnswerAs(e.ctx, alice, st.Challenge.Seed, solve(t, st.Challenge.Seed, 8))
		if err != nil {
			t.Fatal(err)
		}
		return vis
	}
	first := answer()
	if first.Pass == "" {
		t.Fatalf("alice in an empty room: %+v, want admitted", first.Status)
	}
	e.step(1, r)
	if again := answer(); again.Pass == "" || again.Ticket.Visitor != first.Ticket.Visitor {
		t.Fatalf("alice's second browser after its puzzle: %+v, want her session", again.Status)
	}
	if err := r.Revoke(e.ctx, e.pass(r, first.Pass)); err != nil {
		t.Fatal(err)
	}
	e.step(1, r)
	// Her first browser comes back: its ticket is spent, so it is asked for
	// a puzzle, as any rejoin is.
	back, err := r.PollAs(e.ctx, alice, first.Ticket)
	if err != nil || back.Status.State != waitingroom.StateChallenge {
		t.Fatalf("spent ticket: %+v %v, want a puzzle", back.Status, err)
	}
	// Her other browser, whose ticket for the spent place is gone, answers
	// a puzzle: it gets her new place, not another puzzle.
	next := answer()
	if next.Status.State == waitingroom.StateChallenge || next.Ticket.Key <= first.Ticket.Key {
		t.Fatalf("after answering: %+v key %d, want a new place after %d", next.Status, next.Ticket.Key, first.Ticket.Key)
	}
}
