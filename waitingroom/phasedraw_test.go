package waitingroom_test

import (
	"encoding/hex"
	"errors"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/foyer-dev/foyer/waitingroom"
)

// phaseDrawSettings: a first phase admitting from T0, and a second whose
// own pre-queue opens at T0+20s and is drawn at its start, T0+60s.
func phaseDrawSettings(t0 time.Time) waitingroom.Settings {
	return waitingroom.Settings{
		NewUsersPerMinute: 60, TotalActiveUsers: 1000, SessionDuration: 10 * time.Minute,
		Phases: waitingroom.NewPhases(
			waitingroom.ScheduledPhase{Name: "first", Start: t0, End: t0.Add(60 * time.Second)},
			waitingroom.ScheduledPhase{
				Name: "second", Start: t0.Add(60 * time.Second), End: t0.Add(2 * time.Hour),
				PrequeueStart: t0.Add(20 * time.Second), ShuffleAtStart: true,
			},
		),
	}
}

// TestPhasePrequeueDraw: fans in line before a phase's pre-queue opens keep
// being admitted in order while it is open; its fans are registered, shown
// no position and let in by nobody before the start, even once the line
// ahead is empty; at the start the range of their keys is drawn with the
// phase's own seed, committed before the pre-queue opened and revealed
// only then, and they go in by the drawn places, those who came after the
// start behind them.
func TestPhasePrequeueDraw(t *testing.T) {
	env := newEnv(t)
	t0 := env.clock.Now()
	s := phaseDrawSettings(t0)
	nodes := []*waitingroom.Room{env.node("phased", s), env.node("phased", s)}
	info := nodes[0].DrawInfo()
	if !info.Enabled || len(info.PhaseDraws) != 1 {
		t.Fatalf("draw endpoint before the pre-queue: %+v, want the phase's draw", info)
	}
	pd := info.PhaseDraws[0]
	if pd.Phase != "second" || pd.Commitment == "" || pd.CommittedAt == nil || !pd.CommittedAt.Before(t0.Add(20*time.Second)) || pd.Seed != "" || pd.DrawSize != nil {
		t.Fatalf("the phase's draw before its pre-queue: %+v, want a commitment made before it opens and no seed", pd)
	}
	if other := nodes[1].DrawInfo().PhaseDraws[0]; other.Commitment != pd.Commitment {
		t.Fatalf("the two nodes publish commitments %s and %s: the first write wins", other.Commitment, pd.Commitment)
	}

	var early []waitingroom.Ticket
	for i := range 12 {
		early = append(early, env.join(nodes[i%2]).Ticket)
	}
	lastPos := map[int]uint64{}
	admittedAt := map[uint64]time.Time{} // by key
	pollAll := func(tickets []waitingroom.Ticket, from int) {
		t.Helper()
		for i, tk := range tickets {
			v := env.poll(nodes[i%2], tk)
			tickets[i] = v.Ticket
			st := v.Status
			if st.State == waitingroom.StateAdmitted {
				if _, ok := admittedAt[tk.Key]; !ok {
					admittedAt[tk.Key] = env.clock.Now()
				}
				continue
			}
			if st.Position == nil {
				continue
			}
			if p, ok := lastPos[from+i]; ok && *st.Position > p {
				t.Fatalf("ticket %d: position rose from %d to %d", from+i, p, *st.Position)
			}
			lastPos[from+i] = *st.Position
		}
	}
	for env.clock.Now().Before(t0.Add(20500 * time.Millisecond)) {
		env.step(1, nodes...)
		pollAll(early, 0)
	}

	// The pre-queue is open: newcomers register and see no position.
	var pre []waitingroom.Ticket
	for i := range 10 {
		v := env.join(nodes[i%2])
		st := v.Status
		if st.State != waitingroom.StatePrequeue || st.Position != nil || st.OpensAt == nil || !st.OpensAt.Equal(t0.Add(60*time.Second)) ||
			st.DrawIndex == nil || *st.DrawIndex != v.Ticket.Key {
			t.Fatalf("a fan joining the phase's pre-queue: %+v, want registered, no position, places drawn at the phase's start", st)
		}
		pre = append(pre, v.Ticket)
	}
	first := pre[0].Key
	for env.clock.Now().Before(t0.Add(59 * time.Second)) {
		env.step(1, nodes...)
		pollAll(early, 0)
		for i, tk := range pre {
			st := env.poll(nodes[i%2], tk).Status
			if st.State != waitingroom.StatePrequeue || st.Position != nil {
				t.Fatalf("at %v, pre-queue fan %d: %+v, want registered with no position until the start", env.clock.Now(), i, st)
			}
		}
		if d := nodes[0].DrawInfo().PhaseDraws[0]; d.Seed != "" {
			t.Fatal("the phase's seed was revealed before its start")
		}
	}
	for i, tk := range early {
		if _, ok := admittedAt[tk.Key]; !ok {
			t.Fatalf("early fan %d (key %d) not admitted during the pre-queue: the line ahead of it must go on", i, tk.Key)
		}
	}
	if snap := nodes[0].Snapshot(); snap.Serving != first {
		t.Fatalf("serving %d before the start, want %d: every early fan in, nobody of the pre-queue", snap.Serving, first)
	}

	// The start: the draw.
	env.clock.Advance(t0.Add(60 * time.Second).Sub(env.clock.Now()))
	var late []waitingroom.Ticket
	for i := range 3 {
		late = append(late, env.join(nodes[i%2]).Ticket)
	}
	for range 30 {
		env.step(1, nodes...)
		pollAll(pre, 100)
		pollAll(late, 200)
	}
	info = nodes[1].DrawInfo()
	pd = info.PhaseDraws[0]
	if pd.Seed == "" || pd.FirstKey == nil || *pd.FirstKey != first || pd.DrawSize == nil || *pd.DrawSize != 10 {
		t.Fatalf("the phase's draw after its start: %+v, want the seed and keys %d-%d", pd, first, first+9)
	}
	seed, _ := hex.DecodeString(pd.Seed)
	if waitingroom.DrawCommitment(seed) != pd.Commitment {
		t.Fatal("the revealed seed does not match the commitment")
	}
	d := waitingroom.NewDraw(seed, 10)
	byPlace := slices.Clone(pre)
	slices.SortFunc(byPlace, func(a, b waitingroom.Ticket) int {
		return int(d.Place(a.Key-first)) - int(d.Place(b.Key-first))
	})
	var prev time.Time
	for _, tk := range byPlace {
		at, ok := admittedAt[tk.Key]
		if !ok || at.Before(t0.Add(60*time.Second)) || at.Before(prev) {
			t.Fatalf("pre-queue key %d (place %d): admitted at %v (ok %v), want in drawn order after the start", tk.Key, first+d.Place(tk.Key-first), at, ok)
		}
		prev = at
		if tk.Place != first+d.Place(tk.Key-first) {
			t.Fatalf("key %d placed %d, want %d", tk.Key, tk.Place, first+d.Place(tk.Key-first))
		}
		v, err := waitingroom.VerifyDrawInfo(info, tk.Key)
		if err != nil || v.By != waitingroom.PlacedByPhase || v.Place != tk.Place {
			t.Fatalf("verifying key %d from the draw endpoint: %+v %v, want place %d", tk.Key, v, err, tk.Place)
		}
	}
	for _, tk := range late {
		if at, ok := admittedAt[tk.Key]; !ok || at.Before(prev) {
			t.Fatalf("a fan who came after the start (key %d) admitted at %v (ok %v), before the drawn ones", tk.Key, at, ok)
		}
	}
}

// TestPhasePrequeueValidation says what each bad phase pre-queue gets.
func TestPhasePrequeueValidation(t *testing.T) {
	t0 := time.Date(2026, 6, 1, 10, 0, 0, 0, time.UTC)
	at := func(sec int) time.Time { return t0.Add(time.Duration(sec) * time.Second) }
	phase := func(name string, opens, start, end int, shuffle bool) waitingroom.ScheduledPhase {
		ph := waitingroom.ScheduledPhase{Name: name, Start: at(start), End: at(end), ShuffleAtStart: shuffle}
		if opens >= 0 {
			ph.PrequeueStart = at(opens)
		}
		return ph
	}
	good := func() waitingroom.Settings {
		return waitingroom.Settings{Phases: waitingroom.NewPhases(phase("a", -1, 0, 60, false), phase("b", 30, 60, 120, true))}.WithDefaults()
	}
	if err := good().Validate(); err != nil {
		t.Fatalf("a valid phase pre-queue: %v", err)
	}
	for _, tc := range []struct {
		name string
		s    func() waitingroom.Settings
		want string
	}{
		{"shuffle without a pre-queue", func() waitingroom.Settings {
			return waitingroom.Settings{Phases: waitingroom.NewPhases(phase("a", -1, 0, 60, true))}.WithDefaults()
		}, `phase "a": shuffle_at_start needs prequeue_start`},
		{"opens at the start", func() waitingroom.Settings {
			return waitingroom.Settings{Phases: waitingroom.NewPhases(phase("a", 60, 60, 120, true))}.WithDefaults()
		}, `phase "a": prequeue_start 2026-06-01T10:01:00Z must be before the phase's start`},
		{"opens before the previous phase starts", func() waitingroom.Settings {
			return waitingroom.Settings{Phases: waitingroom.NewPhases(phase("a", -1, 10, 60, false), phase("b", 5, 60, 120, true))}.WithDefaults()
		}, `phase "b": prequeue_start 2026-06-01T10:00:05Z must be after the start of phase "a"`},
		{"random room", func() waitingroom.Settings {
			s := good()
			s.QueueingMethod = waitingroom.Random
			return s
		}, `phase "b": prequeue_start needs a first-come room`},
		{"lanes", func() waitingroom.Settings {
			s := good()
			s.Lanes, _ = waitingroom.ParseLanes("presale=2")
			return s
		}, `phase "b": prequeue_start needs a room without lanes`},
		{"before the room's event_start", func() waitingroom.Settings {
			s := good()
			s.EventStart = at(40)
			return s
		}, `phase "b": prequeue_start 2026-06-01T10:00:30Z must not be before the room's event_start`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			err := tc.s().Validate()
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("got %v, want %q", err, tc.want)
			}
		})
	}
}

// TestPhasePrequeueKept: while a phase's pre-queue is open, a change that
// would move it is refused (400 invalid_setting); one that keeps it is not.
func TestPhasePrequeueKept(t *testing.T) {
	env := newEnv(t)
	t0 := env.clock.Now()
	r := env.node("kept", phaseDrawSettings(t0))
	env.step(25, r)
	moved := phaseDrawSettings(t0).Phases.List()
	moved[1].Start = moved[1].Start.Add(time.Minute)
	moved[1].End = moved[1].End.Add(time.Minute)
	_, err := r.Patch(env.ctx, waitingroom.OverridesOf(waitingroom.Settings{Phases: waitingroom.NewPhases(moved...)}, "phases"))
	var se *waitingroom.SettingError
	if !errors.As(err, &se) || se.Setting != "phases" || !strings.Contains(err.Error(), `phase "second"'s pre-queue is open`) {
		t.Fatalf("moving an open pre-queue's start: %v, want refused", err)
	}
	kept := phaseDrawSettings(t0).Phases.List()
	kept[1].End = kept[1].End.Add(time.Hour)
	if _, err := r.Patch(env.ctx, waitingroom.OverridesOf(waitingroom.Settings{Phases: waitingroom.NewPhases(kept...)}, "phases")); err != nil {
		t.Fatalf("moving the phase's end only: %v", err)
	}
}

// TestPhasePrequeueWithoutDraw: a phase's pre-queue without
// shuffle_at_start holds its fans until the phase's start, showing them
// their first-come positions meanwhile, and lets them in in the order
// they came; nothing is drawn and no seed is committed for it.
func TestPhasePrequeueWithoutDraw(t *testing.T) {
	env := newEnv(t)
	t0 := env.clock.Now()
	s := phaseDrawSettings(t0)
	list := s.Phases.List()
	list[1].ShuffleAtStart = false
	s.Phases = waitingroom.NewPhases(list...)
	r := env.node("held", s)
	if info := r.DrawInfo(); info.Enabled || len(info.PhaseDraws) != 0 {
		t.Fatalf("draw endpoint of a room that draws nobody: %+v", info)
	}
	env.step(21, r)
	var pre []waitingroom.Ticket
	for range 3 {
		pre = append(pre, env.join(r).Ticket)
	}
	last := map[int]uint64{}
	for env.clock.Now().Before(t0.Add(59 * time.Second)) {
		env.step(1, r)
		for i, tk := range pre {
			st := env.poll(r, tk).Status
			if st.State != waitingroom.StatePrequeue || st.Position == nil || st.OpensAt == nil || !st.OpensAt.Equal(t0.Add(60*time.Second)) || st.DrawIndex != nil {
				t.Fatalf("at %v, pre-queue fan %d: %+v, want held with a first-come position until the phase's start", env.clock.Now(), i, st)
			}
			if p, ok := last[i]; ok && *st.Position > p {
				t.Fatalf("fan %d: position rose from %d to %d", i, p, *st.Position)
			}
			last[i] = *st.Position
		}
	}
	env.step(5, r)
	for i, tk := range pre {
		v := env.poll(r, tk)
		if v.Status.State != waitingroom.StateAdmitted || v.Ticket.Place != tk.Key {
			t.Fatalf("pre-queue fan %d after the start: %+v place %d, want let in at its own key %d", i, v.Status, v.Ticket.Place, tk.Key)
		}
	}
	if snap := r.Snapshot(); len(snap.PhaseRanges) != 1 || !snap.PhaseRanges[0].Closed || snap.PhaseRanges[0].Draw || snap.PhaseRanges[0].Count != 3 {
		t.Fatalf("the store's phase pre-queues: %+v, want one closed of 3 keys, not drawn", snap.PhaseRanges)
	}
}
