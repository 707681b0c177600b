package waitingroom_test

import (
	"testing"

	"github.com/foyer-dev/foyer/waitingroom"
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
