package waitingroom_test

import (
	"testing"

	"github.com/foyer-dev/foyer/waitingroom"
	"github.com/foyer-dev/foyer/waitingroom/memstore"
)

// TestSupplyNotedOnOneNodeToldOnBoth: a supply the origin reported through
// one node reaches the store with that node's next step, not before (the
// admitted path never waits on it), and every node's polls then tell the
// waiting fans their outcome; the measure of units per fan follows the fall
// of supply against claims over injected time, and a fan keeps their place
// when the supply runs out.
func TestSupplyNotedOnOneNodeToldOnBoth(t *testing.T) {
	e := newEnv(t)
	s := waitingroom.Settings{NewUsersPerMinute: 60, TotalActiveUsers: 1000, QueueAll: true}
	a, b := e.node("supply", s), e.node("supply", s)
	var fans []waitingroom.Ticket
	for range 50 {
		fans = append(fans, e.join(a).Ticket)
	}
	if st := e.poll(b, fans[0]).Status; st.Outcome != "" || st.Chance != nil || st.SupplyEnds != nil {
		t.Fatalf("before any supply: %+v", st)
	}
	a.NoteSupply(400)
	if _, ok := b.Supply(); ok {
		t.Fatal("the supply reached the other node before a step")
	}
	e.step(1, a, b)
	for _, r := range []*waitingroom.Room{a, b} {
		est, ok := r.Supply()
		if !ok || est.Last.Units != 400 || est.Last.N != 1 {
			t.Fatalf("after a step: %+v %v", est.Last, ok)
		}
	}
	// The prior: 400 units at 1 to 8 a fan reach 50 to 400 fans.
	if st := e.poll(b, fans[10]).Status; st.Outcome != waitingroom.OutcomeLikely || st.Chance == nil || *st.Chance != (waitingroom.Chance{Low: 0.9, High: 1}) {
		t.Fatalf("fan 10 of 50 with 400 left: %+v", st)
	}

	// The line moves and fans buy two each; the supply reported every 5 s.
	if _, err := a.Patch(e.ctx, waitingroom.OverridesOf(waitingroom.Settings{QueueAll: false}, "queue_all")); err != nil {
		t.Fatal(err)
	}
	units := uint64(400)
	for range 8 {
		e.step(5, a, b)
		claimed := uint64(0)
		for i := range fans {
			v := e.poll([]*waitingroom.Room{a, b}[i%2], fans[i])
			fans[i] = v.Ticket
			if v.Status.State == waitingroom.StateAdmitted {
				claimed++
			}
		}
		a.NoteSupply(units - min(units, 2*claimed))
	}
	e.step(1, a, b)
	est, _ := b.Supply()
	if !est.Measured || est.PerFan[0] > 2 || est.PerFan[1] < 2 {
		t.Fatalf("units per fan %v (measured %v), want a range around 2", est.PerFan, est.Measured)
	}

	// Sold: the fans still waiting are told so, and keep their places.
	b.NoteSupply(0)
	e.step(1, a, b)
	for i, tk := range fans {
		st := e.poll(a, tk).Status
		if st.State != waitingroom.StateQueued {
			continue
		}
		if st.Outcome != waitingroom.OutcomeUnlikely || st.Position == nil {
			t.Fatalf("fan %d after the supply ran out: %+v", i, st)
		}
	}
}

// TestFairnessCountsWhatEachFanWasTold: the fairness report's count, place
// by place, of the outcomes fans were told equals what the fans themselves
// saw, polled through two nodes, told at their join and at their polls, and
// whether they were let in; a node sends each place's marks once, whatever
// it is asked.
func TestFairnessCountsWhatEachFanWasTold(t *testing.T) {
	e := newEnv(t)
	s := waitingroom.Settings{NewUsersPerMinute: 120, TotalActiveUsers: 1000, QueueAll: true}
	a, b := e.node("told", s), e.node("told", s)
	nodes := []*waitingroom.Room{a, b}
	a.NoteSupply(40)
	e.step(1, a, b)

	type seen struct {
		told  [3]bool
		letIn bool
	}
	index := map[waitingroom.Outcome]int{waitingroom.OutcomeLikely: 0, waitingroom.OutcomeAtRisk: 1, waitingroom.OutcomeUnlikely: 2}
	var fans []waitingroom.Ticket
	var saw []seen
	note := func(i int, v waitingroom.Visit) {
		if k, ok := index[v.Status.Outcome]; ok {
			saw[i].told[k] = true
		}
		if v.Pass != "" {
			saw[i].letIn = true
		}
	}
	for i := range 60 {
		v := e.join(nodes[i%2])
		fans, saw = append(fans, v.Ticket), append(saw, seen{})
		note(i, v)
	}
	// Five more join, are told where they stand, and never look again.
	for i := range 5 {
		v := e.join(nodes[i%2])
		saw = append(saw, seen{})
		note(len(saw)-1, v)
	}
	if _, err := a.Patch(e.ctx, waitingroom.OverridesOf(waitingroom.Settings{QueueAll: false}, "queue_all")); err != nil {
		t.Fatal(err)
	}
	units := uint64(40)
	for round := range 6 {
		e.step(2, a, b)
		bought := uint64(0)
		for i := range fans {
			if saw[i].letIn {
				continue
			}
			// Every fan polls three times a round, through either node.
			for k := range 3 {
				v := e.poll(nodes[(i+k+round)%2], fans[i])
				fans[i] = v.Ticket
				note(i, v)
			}
			if saw[i].letIn {
				bought += 3
			}
		}
		units -= min(units, bought)
		nodes[round%2].NoteSupply(units)
	}
	if err := a.DeclareSoldOut(e.ctx); err != nil {
		t.Fatal(err)
	}
	e.step(2, a, b) // the marks go with the nodes' next beats

	var want waitingroom.PlacesTold
	for _, f := range saw {
		any := false
		for k, c := range []*waitingroom.ToldLetIn{&want.Likely, &want.AtRisk, &want.Unlikely} {
			if f.told[k] {
				any = true
				c.Told++
				if f.letIn {
					c.LetIn++
				}
			}
		}
		if any {
			want.Told++
			if f.letIn {
				want.LetIn++
			}
		}
	}
	if want.Likely.Told == 0 || want.AtRisk.Told == 0 || want.Unlikely.Told == 0 || want.LetIn == 0 {
		t.Fatalf("the fans' count %+v: every outcome should have been told, and some let in", want)
	}
	rep, err := b.Fairness(e.ctx)
	if err != nil {
		t.Fatal(err)
	}
	if rep.Supply == nil || rep.Supply.Places == nil {
		t.Fatalf("the report has no count of places told: %+v", rep.Supply)
	}
	if got := *rep.Supply.Places; got != want {
		t.Fatalf("the report counts %+v; the fans saw %+v", got, want)
	}
}

// TestToldMarksSentAgainAfterALoss: a node sends each place's marks once;
// when the store loses the room, and the marks with it, the node's next
// answers to the fans still waiting send them again.
func TestToldMarksSentAgainAfterALoss(t *testing.T) {
	e := newEnv(t)
	r := e.node("told-loss", waitingroom.Settings{NewUsersPerMinute: 60, TotalActiveUsers: 10, QueueAll: true})
	var fans []waitingroom.Ticket
	for range 3 {
		fans = append(fans, e.join(r).Ticket)
	}
	r.NoteSupply(1)
	e.step(2, r)
	told := func() uint64 {
		t.Helper()
		tally, err := e.store.ToldTally(e.ctx, "told-loss")
		if err != nil {
			t.Fatal(err)
		}
		var n uint64
		for m, c := range tally {
			if m != 0 {
				n += c
			}
		}
		return n
	}
	for i := range fans {
		e.poll(r, fans[i])
	}
	e.step(2, r)
	if n := told(); n != 3 {
		t.Fatalf("the store counts %d places told, want 3", n)
	}
	e.store.(*memstore.Store).Drop("told-loss")
	e.step(2, r) // the node re-seeds the room
	r.NoteSupply(1)
	e.step(2, r)
	for i := range fans {
		if st := e.poll(r, fans[i]).Status; st.Outcome == "" {
			t.Fatalf("fan %d after the loss: %+v; want told an outcome", i, st)
		}
	}
	e.step(2, r)
	if n := told(); n != 3 {
		t.Fatalf("after the loss, the store counts %d places told, want the 3 still waiting again", n)
	}
}
