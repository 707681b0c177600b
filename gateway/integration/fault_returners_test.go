package integration

import (
	"fmt"
	"testing"
	"time"

	"github.com/foyer-dev/foyer/gateway"
	"github.com/foyer-dev/foyer/waitingroom"
)

// TestFaultReturnersKeepTheRate: fans coming back at the front are let in
// within new_users_per_minute. Two gateways share a private redis-server; at
// 60 a minute, five shoppers are let in and stop using their sessions (they
// idle out), five fans are let in and never turn up (they lapse), and while
// the room is paused thirty fans join whose pages then stop polling (a
// network outage) until the line skips them all as ghosts. Then all forty
// come back at once, with three newcomers behind them. They go in first,
// ahead of the newcomers, but at the rate: over any 5 s at most five
// seconds' budget and the one second's worth a room may bank
// (MaxCatchUpTicks makes no more), where every one of them used to go in
// the moment they asked, bounded only by the cap.
func TestFaultReturnersKeepTheRate(t *testing.T) {
	t.Parallel()
	clock := newTestClock()
	_, dial := privateRedis(t)
	key := deploymentKey(t)
	const (
		rate     = 60
		capacity = 100
		ghosts   = 30
	)
	cfg := gateway.Handler{Room: "returners-rate", Settings: waitingroom.Settings{
		TotalActiveUsers: capacity, NewUsersPerMinute: rate, SessionDuration: 10 * time.Minute, AdmissionGrace: grace,
		WaitingIdleTimeout: time.Minute, SessionIdleTimeout: time.Minute,
	}}
	a := newNode(t, clock.Now, cfg, redisNodeStore(t, dial, "foyer"), key)
	b := newNode(t, clock.Now, cfg, redisNodeStore(t, dial, "foyer"), key)
	nodes := []*node{a, b}
	truth := redisNodeStore(t, dial, "foyer")
	counters := func() waitingroom.Snapshot {
		t.Helper()
		s, err := truth.Snapshot(t.Context(), cfg.Room, clock.Now(), 0)
		if err != nil {
			t.Fatal(err)
		}
		if s.Active > capacity {
			t.Fatalf("%d live sessions, cap %d", s.Active, capacity)
		}
		return s
	}
	tr := sharedTransport(t)
	join := func(name string, n int) []*lineFan {
		t.Helper()
		var fans []*lineFan
		for i := range n {
			f := &lineFan{name: fmt.Sprintf("%s%d", name, i), v: newVisitor(tr), admitted: -1}
			nd := nodes[i%len(nodes)]
			resp, body, err := f.v.get(nd.url+"/events/42", false)
			if err != nil || code(resp) != 200 || !isWaitingPage(body) {
				t.Fatalf("%s joining: %v %d %.80q, want the waiting page", f.name, err, code(resp), body)
			}
			f.key = f.ticket(t, nd).Key
			fans = append(fans, f)
		}
		return fans
	}
	pause := func(on bool) {
		t.Helper()
		if _, err := a.room().Patch(t.Context(), waitingroom.OverridesOf(waitingroom.Settings{Paused: on}, "paused")); err != nil {
			t.Fatal(err)
		}
		step(t, clock, nodes)
	}

	// Five shoppers go in (the first walks in, the others claim their turn)
	// and then send nothing; five fans behind them are let in and never
	// turn up.
	shoppers := append([]*lineFan{walkIn(t, a, tr)}, join("shopper", 4)...)
	lapsers := join("lapser", 5)
	for round := 0; counters().Admitted < 10; round++ {
		if round > 30 {
			t.Fatalf("setup: %d let in after 30 s, want 10", counters().Admitted)
		}
		step(t, clock, nodes)
		for i, f := range shoppers[1:] {
			if f.admitted < 0 && f.status(t, nodes[i%2]).State == waitingroom.StateAdmitted {
				f.admitted = round
			}
		}
	}
	for _, f := range shoppers[1:] {
		if f.admitted < 0 {
			t.Fatalf("setup: %s not in", f.name)
		}
	}
	// The room pauses; thirty fans join, and their pages go quiet.
	pause(true)
	quiet := join("ghost", ghosts)
	for range 90 {
		step(t, clock, nodes)
	}
	pause(false)
	step(t, clock, nodes) // the other node may have stepped the last second, paused still
	s := counters()
	if s.IdledOut != 5 || s.Abandoned != 5 || s.Skipped != ghosts || s.Active != 0 {
		t.Fatalf("setup: idled out %d abandoned %d skipped %d active %d, want 5, 5, %d, 0", s.IdledOut, s.Abandoned, s.Skipped, s.Active, ghosts)
	}

	// Everyone comes back and polls every second, through either node; three
	// newcomers join behind them once they are back.
	returners := append(append(append([]*lineFan(nil), shoppers...), lapsers...), quiet...)
	for _, f := range returners {
		f.admitted = -1
	}
	var newcomers []*lineFan
	// Fans let in each second, as the store counts them, checked as they
	// go: over any 5 s, five seconds' budget and the one second's worth
	// banked.
	var perSecond []int
	limit := 6 * rate / 60
	since := s.Admitted + s.Returned
	count := func(sec int) {
		t.Helper()
		s := counters()
		for len(perSecond) <= sec {
			perSecond = append(perSecond, 0)
		}
		perSecond[sec] += int(s.Admitted + s.Returned - since)
		since = s.Admitted + s.Returned
		n := 0
		for j := max(0, sec-4); j <= sec; j++ {
			n += perSecond[j]
		}
		if n > limit {
			t.Fatalf("%d fans let in from +%ds to +%ds, over %d at %d a minute (per second: %v)", n, max(0, sec-4), sec+1, limit, rate, perSecond)
		}
	}
	lastReturnerIn := -1
	for sec := 0; ; sec++ {
		if sec > 120 {
			t.Fatalf("not everyone was in after %d s", sec)
		}
		if sec > 0 {
			step(t, clock, nodes)
		}
		out := 0
		for i, f := range returners {
			if f.admitted >= 0 {
				continue
			}
			st := f.status(t, nodes[(i+sec)%2])
			switch {
			case st.State == waitingroom.StateAdmitted:
				f.admitted = sec
				lastReturnerIn = sec
			case st.State != waitingroom.StateQueued || !st.Returned:
				t.Fatalf("%s back at +%ds: %s (returned %v), want in or held at the front", f.name, sec, st.State, st.Returned)
			default:
				out++
			}
		}
		count(sec)
		if sec == 0 {
			newcomers = join("newcomer", 3)
		}
		waiting := 0
		for i, f := range newcomers {
			if f.admitted >= 0 {
				continue
			}
			if f.status(t, nodes[(i+sec)%2]).State == waitingroom.StateAdmitted {
				f.admitted = sec
				if lastReturnerIn < 0 || out > 0 {
					t.Fatalf("%s let in at +%ds with %d returners still held at the front", f.name, sec, out)
				}
				continue
			}
			waiting++
		}
		count(sec)
		if out == 0 && waiting == 0 {
			break
		}
	}
	s = counters()
	if want := uint64(len(returners)); s.Returned != want {
		t.Fatalf("returned %d, want %d", s.Returned, want)
	}
	t.Logf("%d returners and %d newcomers in over %d s; per second %v", len(returners), len(newcomers), len(perSecond), perSecond)
}

// TestFaultGhostTakesNoLiveFansSlot: one slot left, and behind the front a
// fan who stopped looking, then one who keeps polling. The line's step skips
// the first as a ghost and lets the second in. The ghost's page comes back
// first, within that admission's grace: it goes to the front as a returner
// and is told the room is full, and the fan who kept polling goes in on the
// slot the step gave them. It used to be the other way round: the ghost took
// the slot, and the fan who had done everything right was held as a
// returner.
func TestFaultGhostTakesNoLiveFansSlot(t *testing.T) {
	t.Parallel()
	clock := newTestClock()
	_, dial := privateRedis(t)
	key := deploymentKey(t)
	cfg := gateway.Handler{Room: "ghost-slot", Settings: waitingroom.Settings{
		TotalActiveUsers: 2, NewUsersPerMinute: 120, SessionDuration: 10 * time.Minute, AdmissionGrace: grace,
		WaitingIdleTimeout: time.Minute,
	}}
	a := newNode(t, clock.Now, cfg, redisNodeStore(t, dial, "foyer"), key)
	b := newNode(t, clock.Now, cfg, redisNodeStore(t, dial, "foyer"), key)
	nodes := []*node{a, b}
	tr := sharedTransport(t)
	first := walkIn(t, a, tr)
	if _, err := a.room().Patch(t.Context(), waitingroom.OverridesOf(waitingroom.Settings{Paused: true}, "paused")); err != nil {
		t.Fatal(err)
	}
	step(t, clock, nodes)
	fans := joinLine(t, nodes, tr, "fan", 2, 1)
	ghost, polling := fans[0], fans[1]
	for sec := range 90 {
		step(t, clock, nodes)
		if sec%10 == 0 {
			polling.status(t, nodes[sec%2])
			first.visit(t, nodes[sec%2], "/events/42")
		}
	}
	if _, err := a.room().Patch(t.Context(), waitingroom.OverridesOf(waitingroom.Settings{Paused: false}, "paused")); err != nil {
		t.Fatal(err)
	}
	step(t, clock, nodes)
	step(t, clock, nodes) // the other node may have stepped the last second, paused still
	if s := a.room().Snapshot(); s.Skipped != 1 || s.Admitted != 2 {
		t.Fatalf("skipped %d admitted %d, want the ghost skipped and the polling fan let in", s.Skipped, s.Admitted)
	}
	st := ghost.status(t, b)
	if st.State == waitingroom.StateAdmitted {
		t.Fatal("the ghost took the slot of the fan let in past it")
	}
	if st.State != waitingroom.StateQueued || !st.Returned {
		t.Fatalf("the ghost back within the grace: %s (returned %v), want held at the front", st.State, st.Returned)
	}
	if st := polling.status(t, a); st.State != waitingroom.StateAdmitted {
		t.Fatalf("the fan who kept polling: %s (returned %v), want in", st.State, st.Returned)
	}
	if !first.visit(t, a, "/events/42") || !polling.visit(t, b, "/events/42") {
		t.Fatal("a fan inside lost access")
	}
	// The first fan is done: the ghost goes in at the front with the next
	// step's budget.
	if !first.visit(t, b, "/done") {
		t.Fatal("the first fan's checkout did not reach the origin")
	}
	step(t, clock, nodes)
	if st := ghost.status(t, a); st.State != waitingroom.StateAdmitted {
		t.Fatalf("the ghost once a slot freed: %s (returned %v), want in", st.State, st.Returned)
	}
	if s := a.room().Snapshot(); s.Active > 2 {
		t.Fatalf("%d live sessions, cap 2", s.Active)
	}
}
