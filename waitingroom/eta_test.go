package waitingroom_test

import (
	"fmt"
	"testing"
	"time"

	"github.com/foyer-dev/foyer/waitingroom"
)

// The estimated wait, tested against recorded scenarios: a real room on the
// memory store, its controller stepped by an injected clock, and fans whose
// statuses are read as the page would read them. The fans here only look
// (Peek), which the room does not count as being seen, so waiting_idle_timeout
// is an hour: they stay live, and the line is what each scenario says.

// idle keeps the scenarios' fans live (see above).
const idle = time.Hour

// etaOf is a status's ETA in seconds, or -1 for "we can't estimate yet".
func etaOf(st waitingroom.Status) int64 {
	if st.ETASeconds == nil {
		return -1
	}
	return *st.ETASeconds
}

// fill admits n fans one after the other (joining, then claiming when the
// controller lets them in) and returns their passes.
func (e *roomEnv) fill(n int, nodes ...*waitingroom.Room) []waitingroom.Pass {
	e.t.Helper()
	r := nodes[0]
	var tickets []waitingroom.Ticket
	var passes []waitingroom.Pass
	for range n {
		v := e.join(r)
		if v.Pass != "" {
			passes = append(passes, e.pass(r, v.Pass))
			continue
		}
		tickets = append(tickets, v.Ticket)
	}
	for range 120 {
		if len(tickets) == 0 {
			return passes
		}
		e.step(1, nodes...)
		var still []waitingroom.Ticket
		for _, tk := range tickets {
			if v := e.poll(r, tk); v.Pass != "" {
				passes = append(passes, e.pass(r, v.Pass))
			} else {
				still = append(still, v.Ticket)
			}
		}
		tickets = still
	}
	e.t.Fatalf("%d fans were not admitted in two minutes", len(tickets))
	return nil
}

// TestETACapLimitedDoesNotLeap reproduces the climbing estimate: the cap, not
// the rate, holds the line back, and a fan with three ahead watches a line that
// does not move. Before, they read "under a minute" and then 2, 4 and 10
// minutes within 80 s (eta 12→15→60→150), a second node told them something
// else again, and once the line had stood still long enough the estimate fell
// back to "under a minute".
func TestETACapLimitedDoesNotLeap(t *testing.T) {
	e := newEnv(t)
	s := waitingroom.Settings{WaitingIdleTimeout: idle, NewUsersPerMinute: 60, TotalActiveUsers: 4, SessionDuration: 10 * time.Minute}
	a := e.node("cap", s)
	e.fill(4, a)
	var fan waitingroom.Ticket
	for range 4 {
		fan = e.join(a).Ticket
	}
	e.step(1, a)
	var b *waitingroom.Room
	prev, prevAt := int64(-1), e.clock.Now()
	stillSince := e.clock.Now()
	for i := range 40 { // ten minutes, a look every 15 s
		if i == 4 {
			b = e.node("cap", s) // a node that started after the line stopped
		}
		st, next := a.Peek(fan)
		fan = next
		eta := etaOf(st)
		if *st.Position != 3 {
			t.Fatalf("look %d: %d ahead, want 3: the line is full and must not move", i, *st.Position)
		}
		standing := e.clock.Now().Sub(stillSince)
		if eta >= 0 && eta < 60 && standing >= time.Minute {
			t.Errorf("look %d: told %d s after the line stood still for %v", i, eta, standing)
		}
		if b != nil {
			if other, _ := b.Peek(fan); etaOf(other) != eta {
				t.Errorf("look %d: one node says %d s, another %d s", i, eta, etaOf(other))
			}
		}
		if prev >= 0 && eta >= 0 {
			passed := int64(e.clock.Now().Sub(prevAt).Seconds())
			if eta-prev > passed*3/2 {
				t.Errorf("look %d: the estimate leapt from %d s to %d s in %d s", i, prev, eta, passed)
			}
		}
		if standing >= waitingroom.PaceStale && eta >= 0 {
			t.Errorf("look %d: told %d s after the line stood still for %v: nothing measured supports a figure", i, eta, standing)
		}
		t.Logf("%4.0fs still: eta %d", standing.Seconds(), eta)
		prev, prevAt = eta, e.clock.Now()
		if b != nil {
			e.step(15, a, b)
		} else {
			e.step(15, a)
		}
	}
}

// TestETANothingMovedYet: a line that has never moved gives no figure, however
// the settings would have it move.
func TestETANothingMovedYet(t *testing.T) {
	e := newEnv(t)
	r := e.node("still", waitingroom.Settings{WaitingIdleTimeout: idle, NewUsersPerMinute: 60, TotalActiveUsers: 1, SessionDuration: 10 * time.Minute})
	e.fill(1, r) // walks straight in: nobody waited, nothing measured
	fan := e.join(r).Ticket
	for i := range 6 {
		e.step(10, r)
		st, _ := r.Peek(fan)
		if st.ETASeconds != nil {
			t.Fatalf("after %d s of a line that never moved: eta %d s, want none", 10*(i+1), *st.ETASeconds)
		}
	}
}

// TestETARateLimitedSteadyState: with the rate holding the line back the
// estimate is the places ahead over the rate, and counts down with the clock.
func TestETARateLimitedSteadyState(t *testing.T) {
	e := newEnv(t)
	r := e.node("steady", waitingroom.Settings{WaitingIdleTimeout: idle, NewUsersPerMinute: 60, TotalActiveUsers: 10000, QueueAll: true})
	var fans []waitingroom.Ticket
	for range 400 {
		fans = append(fans, e.join(r).Ticket)
	}
	if _, err := r.Patch(e.ctx, waitingroom.OverridesOf(waitingroom.Settings{}, "queue_all")); err != nil {
		t.Fatal(err)
	}
	e.step(60, r)
	fan := fans[300]
	prev := int64(-1)
	for i := range 12 {
		st, next := r.Peek(fan)
		fan = next
		// Nobody here claims, so "people ahead" is scaled down by the
		// show-up rate; the wait is for the places ahead.
		places, eta := int64(fan.Key-r.Snapshot().Serving), etaOf(st)
		if eta < 0 {
			t.Fatalf("look %d: no estimate after a minute at a steady pace", i)
		}
		if d := eta - (places + 1); d < -3 || d > 3 {
			t.Errorf("look %d: %d places ahead at one a second, told %d s", i, places, eta)
		}
		if prev >= 0 && (prev-eta < 7 || prev-eta > 13) {
			t.Errorf("look %d: the estimate went from %d s to %d s in 10 s", i, prev, eta)
		}
		prev = eta
		e.step(10, r)
	}
}

// TestETAPauseDoesNotSlowThePace: the minutes a room is paused say nothing of
// its pace; after it resumes, the estimate is what it was before.
func TestETAPauseDoesNotSlowThePace(t *testing.T) {
	e := newEnv(t)
	r := e.node("pause", waitingroom.Settings{WaitingIdleTimeout: idle, NewUsersPerMinute: 120, TotalActiveUsers: 10000, QueueAll: true})
	var fans []waitingroom.Ticket
	for range 600 {
		fans = append(fans, e.join(r).Ticket)
	}
	set := func(paused bool) {
		t.Helper()
		if _, err := r.Patch(e.ctx, waitingroom.OverridesOf(waitingroom.Settings{Paused: paused}, "paused", "queue_all")); err != nil {
			t.Fatal(err)
		}
	}
	set(false)
	e.step(90, r)
	fan := fans[500]
	before, fan := r.Peek(fan)
	set(true)
	e.step(240, r)
	if st, _ := r.Peek(fan); st.State != waitingroom.StatePaused || st.ETASeconds != nil {
		t.Fatalf("paused: %s, eta %v; want paused with no estimate", st.State, st.ETASeconds)
	}
	set(false)
	e.step(1, r)
	after, _ := r.Peek(fan)
	if etaOf(before) < 0 || etaOf(after) < 0 {
		t.Fatalf("no estimate: before the pause %d, after %d", etaOf(before), etaOf(after))
	}
	if d := etaOf(after) - etaOf(before); d < -5 || d > 5 {
		t.Errorf("before a four-minute pause %d s, just after it %d s, with the same people ahead", etaOf(before), etaOf(after))
	}
}

// TestETABurstyIsHonestOnAverage: the origin finishes with shoppers in
// bursts (ten every 30 s), so the line moves by jumps; the estimate follows the
// average pace and the fan is let in near the time they were told.
func TestETABurstyIsHonestOnAverage(t *testing.T) {
	e := newEnv(t)
	r := e.node("bursty", waitingroom.Settings{WaitingIdleTimeout: idle, NewUsersPerMinute: 6000, TotalActiveUsers: 10, SessionDuration: time.Hour})
	inside := e.fill(10, r)
	var fans []waitingroom.Ticket
	for range 200 {
		fans = append(fans, e.join(r).Ticket)
	}
	// bursts lets the ten inside go, then lets the next ten claim.
	burst := func() {
		t.Helper()
		for _, p := range inside {
			if err := r.Revoke(e.ctx, p); err != nil {
				t.Fatal(err)
			}
		}
		inside = inside[:0]
		e.step(1, r)
		for i, tk := range fans {
			if v := e.poll(r, tk); v.Pass != "" {
				inside = append(inside, e.pass(r, v.Pass))
				fans[i] = v.Ticket
			}
		}
	}
	for range 8 { // four minutes of history
		burst()
		e.step(29, r)
	}
	fan := fans[len(fans)-1]
	told, fan := r.Peek(fan)
	eta := etaOf(told)
	start := e.clock.Now()
	for i := 0; ; i++ {
		if i > 100 {
			t.Fatal("never admitted")
		}
		burst()
		if st, _ := r.Peek(fan); st.State == waitingroom.StateAdmitted {
			break
		}
		st, _ := r.Peek(fan)
		if etaOf(st) < 0 {
			t.Errorf("no estimate %v after being told %d s, while the line moves", e.clock.Now().Sub(start), eta)
		}
		e.step(29, r)
	}
	waited := e.clock.Now().Sub(start).Seconds()
	if eta < 0 || float64(eta) < waited*0.6 || float64(eta) > waited*1.5 {
		t.Errorf("told %d s, let in after %.0f s", eta, waited)
	}
	t.Logf("told %d s, let in after %.0f s", eta, waited)
}

func ExamplePace_Wait() {
	var p waitingroom.Pace
	for range 60 { // a minute at two places a second
		p = p.Step(1, 2)
	}
	sec, ok := p.Wait(100, 0)
	fmt.Printf("%.0f s %v\n", sec, ok)
	for range 20 { // then the line stops
		p = p.Step(1, 0)
	}
	_, ok = p.Wait(100, 0)
	fmt.Println(ok)

	p = waitingroom.Pace{}
	for range 8 { // four minutes of ten places let in every thirty seconds
		p = p.Step(1, 10)
		for range 29 {
			p = p.Step(1, 0)
		}
	}
	sec, ok = p.Wait(1, 0)
	fmt.Printf("%.0f s %v\n", sec, ok)
	sec, ok = p.Wait(100, 0)
	fmt.Printf("%.0f s %v\n", sec, ok)
	// Output:
	// 50 s true
	// false
	// 29 s true
	// 340 s true
}

// TestProgressIsThisFansWait: a fan at the front who is told minutes more is
// not shown a full bar; with an estimate the bar is the time waited over the
// whole wait, without one the places gone since their first look, their own
// turn counted.
func TestProgressIsThisFansWait(t *testing.T) {
	e := newEnv(t)
	r := e.node("progress", waitingroom.Settings{WaitingIdleTimeout: idle, NewUsersPerMinute: 6, TotalActiveUsers: 100, QueueAll: true})
	var fans []waitingroom.Ticket
	for range 4 {
		fans = append(fans, e.join(r).Ticket)
	}
	fan := fans[3]
	st, fan := r.Peek(fan)
	if st.Progress != 0 {
		t.Fatalf("first look: progress %v, want 0", st.Progress)
	}
	if _, err := r.Patch(e.ctx, waitingroom.OverridesOf(waitingroom.Settings{}, "queue_all")); err != nil {
		t.Fatal(err)
	}
	// One place every ten seconds: after 25 s, three are in and the fan is
	// at the front, with ten seconds or so to go.
	e.step(25, r)
	st, _ = r.Peek(fan)
	if *st.Position != 0 || st.ETASeconds == nil {
		t.Fatalf("at the front: %d ahead, eta %v", *st.Position, st.ETASeconds)
	}
	waited := e.clock.Now().Sub(fan.Joined).Seconds()
	want := waited / (waited + float64(*st.ETASeconds))
	if st.Progress >= 1 || st.Progress < want-0.01 || st.Progress > want+0.01 {
		t.Errorf("at the front, %v s waited and %d s to go: progress %v, want %.2f", waited, *st.ETASeconds, st.Progress, want)
	}
	if _, err := r.Patch(e.ctx, waitingroom.OverridesOf(waitingroom.Settings{Paused: true}, "paused")); err != nil {
		t.Fatal(err)
	}
	// Paused, no estimate: three of the four places between the first look
	// and the fan's turn are gone.
	if st, _ = r.Peek(fan); st.Progress != 0.75 {
		t.Errorf("paused at the front: progress %v, want 0.75", st.Progress)
	}
}

// TestETASameOnEveryNode: a node that started minutes after another tells a
// fan the same wait, in a line that moves by jumps: the pace is the store's,
// not a node's own memory of it.
func TestETASameOnEveryNode(t *testing.T) {
	e := newEnv(t)
	s := waitingroom.Settings{WaitingIdleTimeout: idle, NewUsersPerMinute: 6000, TotalActiveUsers: 10, SessionDuration: time.Hour}
	a := e.node("nodes", s)
	inside := e.fill(10, a)
	var fans []waitingroom.Ticket
	for range 100 {
		fans = append(fans, e.join(a).Ticket)
	}
	var b *waitingroom.Room
	for round := range 8 { // ten let in every 20 s
		for _, p := range inside {
			if err := a.Revoke(e.ctx, p); err != nil {
				t.Fatal(err)
			}
		}
		inside = inside[:0]
		nodes := []*waitingroom.Room{a}
		if b != nil {
			nodes = append(nodes, b)
		}
		e.step(1, nodes...)
		for i, tk := range fans {
			if v := e.poll(a, tk); v.Pass != "" {
				inside = append(inside, e.pass(a, v.Pass))
				fans[i] = v.Ticket
			}
		}
		e.step(19, nodes...)
		if round == 5 {
			b = e.node("nodes", s)
			e.step(1, a, b)
		}
	}
	fan := fans[len(fans)-1]
	onA, _ := a.Peek(fan)
	onB, _ := b.Peek(fan)
	if onA.ETASeconds == nil || onB.ETASeconds == nil || *onA.ETASeconds != *onB.ETASeconds {
		t.Fatalf("the node that ran all along says %d s, the one started a minute ago %d s", etaOf(onA), etaOf(onB))
	}
	t.Logf("both say %d s", *onA.ETASeconds)
}
