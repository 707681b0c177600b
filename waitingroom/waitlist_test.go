package waitingroom_test

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/foyer-dev/foyer/waitingroom"
	"github.com/foyer-dev/foyer/waitingroom/memstore"
)

// TestWaitlistTwoNodes: two nodes of a room with the waitlist on, on the
// memory store and on Redis (each node its own client). At sold out every
// fan keeps their place, told "waitlist" with their position, from either
// node; a newcomer joins at the back; units that come back let in exactly as
// many fans, from the front, in order, with passes that say waitlist; a fan
// who leaves the waitlist is passed over without taking a unit; positions
// never rise; turning sold_out off ends the waitlist, and the passes issued
// from then on carry the claim too: what is left, returned or not, is
// anyone's.
func TestWaitlistTwoNodes(t *testing.T) {
	for _, b := range modelBackends {
		t.Run(b.name, func(t *testing.T) {
			stores, _, drop := b.open(t)("waitlist-" + b.name)
			t.Cleanup(drop)
			e := newEnv(t)
			s := waitingroom.Settings{NewUsersPerMinute: 600, TotalActiveUsers: 100, QueueAll: true, Waitlist: true}
			e.store = stores[0]
			a := e.node("waitlist-"+b.name, s)
			e.store = stores[1]
			nb := e.node("waitlist-"+b.name, s)
			nodes := []*waitingroom.Room{a, nb}
			var fans []waitingroom.Ticket
			for range 8 {
				fans = append(fans, e.join(a).Ticket)
			}
			op := func(r *waitingroom.Room, name string, v waitingroom.Settings) {
				t.Helper()
				if _, err := r.Patch(e.ctx, waitingroom.OverridesOf(v, name)); err != nil {
					t.Fatal(err)
				}
			}
			// The origin says 0 left: with the waitlist on, that is sold out.
			a.NoteSupply(0)
			e.step(1, a, nb)
			if !nb.Settings().SoldOut {
				t.Fatal("a supply of 0 with the waitlist on did not declare sold out")
			}
			op(nb, "queue_all", waitingroom.Settings{QueueAll: false})
			e.step(2, a, nb)
			last := make([]uint64, len(fans)+1)
			look := func(i int) waitingroom.Visit {
				t.Helper()
				v := e.poll(nodes[i%2], fans[i])
				fans[i] = v.Ticket
				if p := v.Status.Position; p != nil && v.Status.State == waitingroom.StateWaitlist {
					if last[i] > 0 && *p+1 > last[i] {
						t.Fatalf("fan %d: position rose from %d to %d", i, last[i]-1, *p)
					}
					last[i] = *p + 1
				}
				return v
			}
			for i := range fans {
				v := look(i)
				if v.Status.State != waitingroom.StateWaitlist || v.Status.Position == nil || *v.Status.Position != uint64(i) || v.Pass != "" {
					t.Fatalf("fan %d at sold out: %+v, want waitlist with %d ahead", i, v.Status, i)
				}
			}
			late := e.join(nb)
			if late.Status.State != waitingroom.StateWaitlist || *late.Status.Position != uint64(len(fans)) {
				t.Fatalf("a newcomer at sold out: %+v, want the back of the waitlist", late.Status)
			}
			fans = append(fans, late.Ticket)

			// Fan 3 leaves the waitlist.
			if tr, err := a.Leave(e.ctx, waitingroom.Arrival{Ticket: a.SealTicket(fans[3])}); err != nil || tr.From != waitingroom.TicketWaitlisted {
				t.Fatalf("leaving the waitlist: %v %v", tr, err)
			}
			admitted := func() []int {
				var in []int
				for i := range fans {
					if i == 3 {
						continue
					}
					v := look(i)
					if v.Status.State == waitingroom.StateAdmitted {
						// Let in from the waitlist, or once the sale
						// reopened: the pass may hold what came back.
						if w := nodes[i%2].Snapshot().Waitlist; v.Pass != "" && (w.On() || !w.Ended.IsZero()) && !e.pass(nodes[i%2], v.Pass).Waitlist {
							t.Fatalf("fan %d let in (waitlist %+v) without the claim", i, w)
						}
						in = append(in, i)
					}
				}
				return in
			}
			// Three units come back (refunds), reported through node b.
			nb.NoteSupply(3)
			e.step(2, a, nb)
			if in := admitted(); len(in) != 3 || in[0] != 0 || in[1] != 1 || in[2] != 2 {
				t.Fatalf("3 units back: let in %v, want fans 0, 1, 2", in)
			}
			e.step(3, a, nb)
			if in := admitted(); len(in) != 3 {
				t.Fatalf("the same 3 units let in %v", in)
			}
			// Two more (the three let in hold nothing yet): the next two,
			// past fan 3 who left, without spending a unit on them.
			a.NoteSupply(5)
			e.step(2, a, nb)
			if in := admitted(); len(in) != 5 || in[3] != 4 || in[4] != 5 {
				t.Fatalf("5 units back: let in %v, want 0, 1, 2, 4, 5", in)
			}
			snap, err := stores[0].Snapshot(context.Background(), "waitlist-"+b.name, e.clock.Now(), 0)
			if err != nil {
				t.Fatal(err)
			}
			if snap.Waitlist.Admitted != 5 || snap.Waitlist.Owed != 5 {
				t.Fatalf("the store's waitlist %+v, want 5 let in, 5 owed", snap.Waitlist)
			}
			rep, err := a.Fairness(e.ctx)
			if err != nil {
				t.Fatal(err)
			}
			w := rep.Waitlist
			if w == nil || len(w.Periods) != 1 || w.Admitted != 5 || !w.EachReturnReachesOneFan || !w.InOrder || len(w.Steps) != 2 {
				t.Fatalf("the fairness report's waitlist: %+v", w)
			}
			if len(w.Returns) != 2 || w.Returns[0].Back != 3 || w.Returns[1].Back != 2 ||
				w.Steps[0].Sample != w.Returns[0].Sample || w.Steps[0].Start != 0 || w.Steps[0].Fans != 3 ||
				w.Steps[1].Sample != w.Returns[1].Sample || w.Steps[1].Start != 3 || w.Steps[1].Count != 3 || w.Steps[1].Fans != 2 {
				t.Fatalf("returns %+v, steps %+v: want 3 back reaching places 0-2, 2 back reaching 3-5 (3 left)", w.Returns, w.Steps)
			}
			// The operator reopens the sale: the waitlist ends, the line
			// moves at the rate.
			op(a, "sold_out", waitingroom.Settings{SoldOut: false})
			e.step(2, a, nb)
			for _, n := range nodes {
				if w := n.Snapshot().Waitlist; w.On() || w.Ended.IsZero() {
					t.Fatalf("after reopening, a node sees the waitlist %+v; want it ended", w)
				}
			}
			if in := admitted(); len(in) != len(fans)-1 {
				t.Fatalf("after reopening: let in %v, want everyone left", in)
			}

			// The store loses the room after the reopening. The nodes
			// re-seed it, the end of the waitlist with it, and a fan let
			// in afterwards may still take what came back.
			if m, ok := stores[0].(*memstore.Store); ok {
				m.Drop("waitlist-" + b.name)
			} else {
				drop()
			}
			e.step(2, a, nb)
			for _, n := range nodes {
				if w := n.Snapshot().Waitlist; w.On() || w.Ended.IsZero() {
					t.Fatalf("after the store lost the room, a node sees the waitlist %+v; want it ended", w)
				}
			}
			after := e.join(nb)
			for range 10 {
				if after.Pass != "" {
					break
				}
				e.step(1, a, nb)
				after = e.poll(a, after.Ticket)
			}
			if after.Pass == "" || !e.pass(a, after.Pass).Waitlist {
				t.Fatalf("a fan let in after the loss: %+v, pass %q; want one with the waitlist claim", after.Status, after.Pass)
			}
		})
	}
}

// TestWaitlistNeedsOneFirstComeLine: the waitlist is refused, naming the
// setting, with lanes and with the random method; alone it validates.
func TestWaitlistNeedsOneFirstComeLine(t *testing.T) {
	lanes := mustLanes(t, "presale=3 general=1")
	for name, s := range map[string]waitingroom.Settings{
		"lanes":  {Waitlist: true, Lanes: lanes},
		"random": {Waitlist: true, QueueingMethod: waitingroom.Random},
		// A phase's lanes number the room's lanes as its own do.
		"a phase's lanes": {Waitlist: true, Phases: waitingroom.NewPhases(
			phaseOf("presale", 0, time.Hour, waitingroom.Settings{Lanes: lanes}, "lanes"))},
	} {
		err := s.WithDefaults().Validate()
		var se *waitingroom.SettingError
		if !errors.As(err, &se) || !strings.Contains(err.Error(), "waitlist: needs") {
			t.Errorf("waitlist with %s: %v; want refused, naming waitlist", name, err)
		}
	}
	if err := (waitingroom.Settings{Waitlist: true}).WithDefaults().Validate(); err != nil {
		t.Errorf("waitlist alone: %v", err)
	}
}

// TestReopenedSaleSignsAPassOnce: a session let in before the sell-out,
// still going when the sale reopens, has its pass signed again with the
// waitlist claim on its next request; sent again without the claim (a
// client that never keeps the new cookie), the pass gets the same new pass
// each time, signed once and kept by the node until it expires.
func TestReopenedSaleSignsAPassOnce(t *testing.T) {
	e := newEnv(t)
	r := e.node("resign", waitingroom.Settings{NewUsersPerMinute: 60, TotalActiveUsers: 10, Waitlist: true})
	in := e.join(r)
	if in.Pass == "" || e.pass(r, in.Pass).Waitlist {
		t.Fatalf("the first fan: %+v; want let in without the claim", in.Status)
	}
	r.NoteSupply(0)
	e.step(1, r)
	if !r.Settings().SoldOut {
		t.Fatal("a supply of 0 with the waitlist on did not sell out")
	}
	if _, err := r.Patch(e.ctx, waitingroom.OverridesOf(waitingroom.Settings{SoldOut: false}, "sold_out")); err != nil {
		t.Fatal(err)
	}
	e.step(1, r)
	var first string
	for i := range 3 {
		d, err := r.Admit(e.ctx, waitingroom.Arrival{Kind: waitingroom.RequestPage, Pass: in.Pass})
		if err != nil {
			t.Fatal(err)
		}
		p := e.pass(r, d.Pass)
		if !d.NewPass || !p.Waitlist || p.ID != in.Admission.ID {
			t.Fatalf("request %d with the pass from before the sell-out: new %v, %+v; want the session's pass with the claim", i, d.NewPass, p)
		}
		if i == 0 {
			first = d.Pass
		} else if d.Pass != first {
			t.Fatalf("request %d: another pass than the first re-signing", i)
		}
	}
	if n := r.ResignedPasses(); n != 1 {
		t.Fatalf("the node keeps %d re-signed passes, want 1", n)
	}
	e.step(int(waitingroom.Settings{}.WithDefaults().SessionDuration/time.Second)+2, r)
	if n := r.ResignedPasses(); n != 0 {
		t.Fatalf("after the session's end, the node keeps %d re-signed passes, want none", n)
	}
}

// TestWaitlistDebtSurvivesLoss: the store loses the room while the line is a
// waitlist that owes a unit to the fan it let in: the nodes re-seed it with
// the waitlist and its debt, so the origin reporting the same unit again
// lets nobody else in, and a unit that does come back reaches the next fan.
func TestWaitlistDebtSurvivesLoss(t *testing.T) {
	for _, b := range modelBackends {
		t.Run(b.name, func(t *testing.T) {
			room := "waitlist-debt-" + b.name
			stores, _, drop := b.open(t)(room)
			t.Cleanup(drop)
			e := newEnv(t)
			s := waitingroom.Settings{NewUsersPerMinute: 600, TotalActiveUsers: 100, QueueAll: true, Waitlist: true}
			e.store = stores[0]
			a := e.node(room, s)
			e.store = stores[1]
			nb := e.node(room, s)
			var fans []waitingroom.Ticket
			for range 4 {
				fans = append(fans, e.join(a).Ticket)
			}
			a.NoteSupply(0)
			e.step(1, a, nb)
			if _, err := nb.Patch(e.ctx, waitingroom.OverridesOf(waitingroom.Settings{QueueAll: false}, "queue_all")); err != nil {
				t.Fatal(err)
			}
			e.step(2, a, nb)
			letIn := func() []int {
				var in []int
				for i := range fans {
					v := e.poll([]*waitingroom.Room{a, nb}[i%2], fans[i])
					fans[i] = v.Ticket
					if v.Status.State == waitingroom.StateAdmitted {
						in = append(in, i)
					}
				}
				return in
			}
			nb.NoteSupply(1) // a refund
			e.step(2, a, nb)
			if in := letIn(); len(in) != 1 || in[0] != 0 {
				t.Fatalf("one unit back: let in %v, want fan 0", in)
			}
			if m, ok := stores[0].(*memstore.Store); ok {
				m.Drop(room)
			} else {
				drop()
			}
			e.step(2, a, nb)
			if w := nb.Snapshot().Waitlist; !w.On() || w.Owed != 1 || w.Admitted != 1 {
				t.Fatalf("after the loss, the waitlist %+v; want it taken up, owing 1", w)
			}
			a.NoteSupply(1) // the origin reports the same unit again
			e.step(2, a, nb)
			if in := letIn(); len(in) != 1 {
				t.Fatalf("the same unit reported after the loss: let in %v, want fan 0 alone", in)
			}
			nb.NoteSupply(2) // another refund
			e.step(2, a, nb)
			if in := letIn(); len(in) != 2 || in[1] != 1 {
				t.Fatalf("one more back: let in %v, want fans 0 and 1", in)
			}
		})
	}
}
