package waitingroom_test

import (
	"context"
	"encoding/json"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/foyer-dev/foyer/waitingroom"
	"github.com/foyer-dev/foyer/waitingroom/memstore"
)

var phaseT0 = time.Date(2026, 6, 1, 10, 0, 0, 0, time.UTC)

// phaseOf makes a phase from T0+from to T0+to that sets the named settings
// to their values in vals.
func phaseOf(name string, from, to time.Duration, vals waitingroom.Settings, names ...string) waitingroom.ScheduledPhase {
	return waitingroom.ScheduledPhase{Name: name, Start: phaseT0.Add(from), End: phaseT0.Add(to), Settings: waitingroom.OverridesOf(vals, names...)}
}

func phasedSettings() waitingroom.Settings {
	return waitingroom.Settings{
		Title: "Tour", NewUsersPerMinute: 600, TotalActiveUsers: 100,
		Phases: waitingroom.NewPhases(
			phaseOf("general", 2*time.Hour, 3*time.Hour, waitingroom.Settings{TotalActiveUsers: 5, QueueingMethod: waitingroom.Reject}, "total_active_users", "queueing_method"),
			phaseOf("presale", 0, time.Hour, waitingroom.Settings{NewUsersPerMinute: 60, Title: "Presale"}, "new_users_per_minute", "title"),
		),
	}.WithDefaults()
}

// TestSettingsAtPhaseBoundaries: the settings in effect are the room's with
// the phase in force laid over them, from its start (included) to its end
// (excluded), whatever instant the settings were worked out for before; the
// runtime switches stay on top.
func TestSettingsAtPhaseBoundaries(t *testing.T) {
	s := phasedSettings()
	type want struct {
		rate, cap int
		title     string
		method    waitingroom.QueueingMethod
		current   string
		next      string
	}
	for _, tc := range []struct {
		at   time.Duration
		want want
	}{
		{-time.Nanosecond, want{600, 100, "Tour", waitingroom.FIFO, "", "presale"}},
		{0, want{60, 100, "Presale", waitingroom.FIFO, "presale", "general"}},
		{time.Hour - time.Nanosecond, want{60, 100, "Presale", waitingroom.FIFO, "presale", "general"}},
		{time.Hour, want{600, 100, "Tour", waitingroom.FIFO, "", "general"}},
		{2 * time.Hour, want{600, 5, "Tour", waitingroom.Reject, "general", ""}},
		{3 * time.Hour, want{600, 100, "Tour", waitingroom.FIFO, "", ""}},
	} {
		now := phaseT0.Add(tc.at)
		// From the room's settings, and from those of every other
		// instant: a phase laid over them is taken off first.
		for _, from := range []waitingroom.Settings{s, s.At(phaseT0), s.At(phaseT0.Add(2 * time.Hour))} {
			got := from.At(now)
			cur, next := got.Phases.At(now)
			name := func(p *waitingroom.ScheduledPhase) string {
				if p == nil {
					return ""
				}
				return p.Name
			}
			g := want{got.NewUsersPerMinute, got.TotalActiveUsers, got.Title, got.QueueingMethod, name(cur), name(next)}
			if g != tc.want {
				t.Errorf("at T0%+v: got %+v, want %+v", tc.at, g, tc.want)
			}
		}
	}
	paused := s
	paused.Paused, paused.SoldOut = true, true
	if got := paused.At(phaseT0); !got.Paused || !got.SoldOut || got.NewUsersPerMinute != 60 {
		t.Errorf("the switches must stay on top of a phase: %+v", got)
	}
	if at := s.Phases.NextSwitch(phaseT0.Add(30 * time.Minute)); !at.Equal(phaseT0.Add(time.Hour)) {
		t.Errorf("next switch after T0+30m: %v", at)
	}
	if pre, ok := s.At(phaseT0.Add(2 * time.Hour)).WithPhase("presale"); !ok || pre.Title != "Presale" || pre.TotalActiveUsers != 100 {
		t.Errorf("WithPhase(presale) from the general phase: %+v %v", pre, ok)
	}
	if err := s.Validate(); err != nil {
		t.Fatal(err)
	}
}

// TestPhasesJSON: the phases read back what they write, in the order of
// their start, as the admin API and stored overrides carry them.
func TestPhasesJSON(t *testing.T) {
	s := phasedSettings()
	b, err := json.Marshal(s.Phases)
	if err != nil {
		t.Fatal(err)
	}
	const want = `[{"name":"presale","start":"2026-06-01T10:00:00Z","end":"2026-06-01T11:00:00Z","title":"Presale","new_users_per_minute":60},` +
		`{"name":"general","start":"2026-06-01T12:00:00Z","end":"2026-06-01T13:00:00Z","total_active_users":5,"queueing_method":"reject"}]`
	if string(b) != want {
		t.Fatalf("got %s\nwant %s", b, want)
	}
	var back waitingroom.Phases
	if err := json.Unmarshal(b, &back); err != nil {
		t.Fatal(err)
	}
	again, _ := json.Marshal(back)
	if string(again) != want {
		t.Fatalf("round trip: %s", again)
	}
	o, err := waitingroom.DecodeOverride("phases", b)
	if err != nil || !o.Has("phases") || o.Values().Phases.Len() != 2 {
		t.Fatalf("as an override: %v %v", o, err)
	}
	cleared, err := waitingroom.DecodeOverride("phases", []byte(`[]`))
	if err != nil || cleared.Values().Phases.Len() != 0 {
		t.Fatalf("[] clears: %v", err)
	}
}

// TestPhasesValidation says what each bad list of phases gets.
func TestPhasesValidation(t *testing.T) {
	base := waitingroom.Settings{Title: "Tour"}.WithDefaults()
	rate := func(n int) waitingroom.Settings { return waitingroom.Settings{NewUsersPerMinute: n} }
	ok := func(name string, from, to time.Duration) waitingroom.ScheduledPhase {
		return phaseOf(name, from, to, rate(60), "new_users_per_minute")
	}
	var nine []waitingroom.ScheduledPhase
	for i := range 9 {
		nine = append(nine, ok(string(rune('a'+i)), time.Duration(i)*time.Hour, time.Duration(i)*time.Hour+time.Minute))
	}
	for _, tc := range []struct {
		name   string
		phases []waitingroom.ScheduledPhase
		want   string
	}{
		{"nine", nine, "at most 8 phases, got 9"},
		{"bad name", []waitingroom.ScheduledPhase{ok("Pre Sale", 0, time.Hour)}, `phase name "Pre Sale": 1 to 32 of a-z, 0-9, _ and -`},
		{"no name", []waitingroom.ScheduledPhase{ok("", 0, time.Hour)}, `phase name "": 1 to 32`},
		{"same name", []waitingroom.ScheduledPhase{ok("a", 0, time.Hour), ok("a", 2*time.Hour, 3*time.Hour)}, `phase "a": named twice`},
		{"end before start", []waitingroom.ScheduledPhase{ok("a", time.Hour, 0)}, `phase "a": start must be before end`},
		{"empty", []waitingroom.ScheduledPhase{ok("a", time.Hour, time.Hour)}, `phase "a": start must be before end`},
		{"no end", []waitingroom.ScheduledPhase{{Name: "a", Start: phaseT0}}, `phase "a": needs a start and an end`},
		{"overlap", []waitingroom.ScheduledPhase{ok("a", 0, 2*time.Hour), ok("b", time.Hour, 3*time.Hour)}, `phase "b" overlaps phase "a"`},
		{"out of bounds", []waitingroom.ScheduledPhase{phaseOf("a", 0, time.Hour, rate(0), "new_users_per_minute")}, `phases: phase "a": new_users_per_minute: must be between 1 and`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := base
			s.Phases = waitingroom.NewPhases(tc.phases...)
			err := s.Validate()
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("got %v, want %q", err, tc.want)
			}
		})
	}
	// A phase may not switch the line between first come and draws: fans
	// already shown a place would move, at its start or at its end.
	for _, tc := range []struct{ room, phase waitingroom.QueueingMethod }{
		{waitingroom.FIFO, waitingroom.Random}, {waitingroom.Random, waitingroom.FIFO}, {waitingroom.Random, waitingroom.Reject},
	} {
		s := base
		s.QueueingMethod = tc.room
		s.Phases = waitingroom.NewPhases(phaseOf("a", 0, time.Hour, waitingroom.Settings{QueueingMethod: tc.phase}, "queueing_method"))
		if err := s.Validate(); err == nil || !strings.Contains(err.Error(), `phase "a": queueing_method `+string(tc.phase)+`: a phase cannot switch the room (`+string(tc.room)+`) between first come and draws`) {
			t.Errorf("room %s, phase %s: got %v", tc.room, tc.phase, err)
		}
	}
	for _, tc := range []struct{ room, phase waitingroom.QueueingMethod }{
		{waitingroom.FIFO, waitingroom.Reject}, {waitingroom.FIFO, waitingroom.Passthrough}, {waitingroom.Random, waitingroom.Random},
	} {
		s := base
		s.QueueingMethod = tc.room
		s.Phases = waitingroom.NewPhases(phaseOf("a", 0, time.Hour, waitingroom.Settings{QueueingMethod: tc.phase}, "queueing_method"))
		if err := s.Validate(); err != nil {
			t.Errorf("room %s, phase %s: %v", tc.room, tc.phase, err)
		}
	}

	// Touching phases (one after the other) is no overlap.
	s := base
	s.Phases = waitingroom.NewPhases(ok("a", 0, time.Hour), ok("b", time.Hour, 2*time.Hour))
	if err := s.Validate(); err != nil {
		t.Fatalf("back to back: %v", err)
	}

	// Settings a phase may not set are refused as the JSON is read, naming
	// the phase; a setting unknown to this version is kept for Validate.
	for _, tc := range []struct{ json, want string }{
		{`{"name":"a","start":"2026-06-01T10:00:00Z","end":"2026-06-01T11:00:00Z","admission_grace":"1m"}`,
			`phase "a": admission_grace cannot change while the room runs, so no phase can set it: set it for the room`},
		{`{"name":"a","start":"2026-06-01T10:00:00Z","end":"2026-06-01T11:00:00Z","paused":true}`,
			`phase "a": paused is a switch an admin throws, not a phase's setting`},
		{`{"name":"a","start":"2026-06-01T10:00:00Z","end":"2026-06-01T11:00:00Z","event_start":"2026-06-01T10:00:00Z"}`,
			`phase "a": event_start is the room's schedule`},
		{`{"name":"a","start":"2026-06-01T10:00:00Z","end":"2026-06-01T11:00:00Z","phases":[]}`,
			`phase "a": phases a phase cannot hold phases`},
		{`{"name":"a","start":"2026-06-01T10:00:00Z","end":"2026-06-01T11:00:00Z","lanes":"presale=0 general=0"}`,
			`phase "a": lanes: at least one lane needs a weight above 0`},
		{`{"name":"a","start":"2026-06-01T10:00:00Z","end":"2026-06-01T11:00:00Z","new_users_per_minute":"fast"}`,
			`phase "a": new_users_per_minute: must be a whole number`},
		{`{"name":"a","start":"10am","end":"2026-06-01T11:00:00Z"}`, `phase "a": start: "10am" is not an RFC 3339 time`},
		{`{"name":"a","end":"2026-06-01T11:00:00Z"}`, `phase "a": needs start`},
		{`{"start":"2026-06-01T10:00:00Z","end":"2026-06-01T11:00:00Z"}`, `phase 1: needs a name`},
	} {
		_, err := waitingroom.DecodeOverride("phases", []byte("["+tc.json+"]"))
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: got %v, want %q", tc.json, err, tc.want)
		}
	}
	if _, err := waitingroom.DecodeOverride("phases", []byte(`{"name":"a"}`)); err == nil || !strings.Contains(err.Error(), "must be an array of phases") {
		t.Errorf("an object: got %v", err)
	}
	o, err := waitingroom.DecodeOverride("phases", []byte(`[{"name":"a","start":"2026-06-01T10:00:00Z","end":"2026-06-01T11:00:00Z","lanes_of_tomorrow":3}]`))
	if err != nil {
		t.Fatalf("an unknown setting is kept for Validate: %v", err)
	}
	if err := o.Apply(base).Validate(); err == nil || !strings.Contains(err.Error(), `phase "a": "lanes_of_tomorrow" is not a setting`) {
		t.Errorf("unknown setting: got %v", err)
	}
}

// limitsLog is a store that records the limits each call was made with.
type limitsLog struct {
	waitingroom.Store
	mu  sync.Mutex
	log []loggedLimits
}

type loggedLimits struct {
	call string
	at   time.Time
	lim  waitingroom.Limits
}

func (l *limitsLog) add(call string, at time.Time, lim waitingroom.Limits) {
	l.mu.Lock()
	l.log = append(l.log, loggedLimits{call, at, lim})
	l.mu.Unlock()
}

func (l *limitsLog) last(call string) loggedLimits {
	l.mu.Lock()
	defer l.mu.Unlock()
	for i := len(l.log) - 1; i >= 0; i-- {
		if l.log[i].call == call {
			return l.log[i]
		}
	}
	return loggedLimits{}
}

func (l *limitsLog) Advance(ctx context.Context, room string, now time.Time, lim waitingroom.Limits) error {
	l.add("advance", now, lim)
	return l.Store.Advance(ctx, room, now, lim)
}

func (l *limitsLog) Join(ctx context.Context, room, v string, now time.Time, lim waitingroom.Limits) (waitingroom.JoinResult, error) {
	l.add("join", now, lim)
	return l.Store.Join(ctx, room, v, now, lim)
}

func (l *limitsLog) JoinMany(ctx context.Context, room string, js []waitingroom.Joiner, now time.Time, lim waitingroom.Limits) ([]waitingroom.JoinResult, error) {
	l.add("join", now, lim)
	return l.Store.JoinMany(ctx, room, js, now, lim)
}

// TestPhaseSwitchAtTheStoreInstant: two nodes of a room call the store with
// the limits of the phase in force at the instant they pass it, whatever
// their views' age: a nanosecond before the start the room's, at the start
// the phase's, on both; places and positions stay as they were.
func TestPhaseSwitchAtTheStoreInstant(t *testing.T) {
	env := newEnv(t)
	shared := memstore.New()
	logs := [2]*limitsLog{{Store: shared}, {Store: shared}}
	start := env.clock.Now().Add(10 * time.Second)
	s := waitingroom.Settings{
		NewUsersPerMinute: 60, TotalActiveUsers: 2, SessionDuration: 5 * time.Minute,
		Phases: waitingroom.NewPhases(waitingroom.ScheduledPhase{
			Name: "wide", Start: start, End: start.Add(time.Hour),
			Settings: waitingroom.OverridesOf(waitingroom.Settings{NewUsersPerMinute: 600, TotalActiveUsers: 5}, "new_users_per_minute", "total_active_users"),
		}),
	}
	var nodes []*waitingroom.Room
	for i := range 2 {
		env.store = logs[i]
		nodes = append(nodes, env.node("phased", s))
	}
	var tickets []waitingroom.Ticket
	for i := range 12 {
		tickets = append(tickets, env.join(nodes[i%2]).Ticket)
	}
	positions := make([]uint64, len(tickets))
	look := func() {
		t.Helper()
		for i, tk := range tickets {
			st := env.poll(nodes[i%2], tk).Status
			if st.Position == nil {
				positions[i] = 0
				continue
			}
			if p := *st.Position; positions[i] != 0 && p > positions[i] {
				t.Fatalf("ticket %d: position rose from %d to %d", i, positions[i], p)
			}
			positions[i] = *st.Position
		}
	}
	for env.clock.Now().Before(start.Add(-time.Second)) {
		env.step(1, nodes...)
		look()
	}
	// The views are half a second old at the start: the calls still take
	// the instant's limits.
	env.clock.Advance(start.Add(-time.Nanosecond).Sub(env.clock.Now()))
	for i, r := range nodes {
		if err := r.Tick(env.ctx); err != nil {
			t.Fatal(err)
		}
		if got := logs[i].last("advance"); got.lim.Rate != 60 || got.lim.Cap != 2 {
			t.Fatalf("node %d before the phase: %+v", i, got)
		}
	}
	env.clock.Advance(start.Add(time.Second).Sub(env.clock.Now()))
	for i, r := range nodes {
		env.join(r)
		if got := logs[i].last("join"); !got.at.Equal(start.Add(time.Second)) || got.lim.Rate != 600 || got.lim.Cap != 5 {
			t.Fatalf("node %d, a join at the phase's start, before any tick: %+v", i, got)
		}
		if err := r.Tick(env.ctx); err != nil {
			t.Fatal(err)
		}
		if got := logs[i].last("advance"); got.lim.Rate != 600 || got.lim.Cap != 5 {
			t.Fatalf("node %d in the phase: %+v", i, got)
		}
		in := r.Info()
		if in.CurrentPhase == nil || in.CurrentPhase.Name != "wide" || in.Settings.TotalActiveUsers != 5 {
			t.Fatalf("node %d: info %+v", i, in.CurrentPhase)
		}
	}
	for range 20 {
		env.step(1, nodes...)
		look()
	}
	if snap := nodes[0].Snapshot(); snap.Active+snap.Pending > 5 {
		t.Fatalf("cap 5 exceeded: %+v", snap)
	}
}

// BenchmarkSettingsAt measures what a store call pays to work out the
// settings of its instant: nothing without phases, one phase laid over the
// room's settings within one.
func BenchmarkSettingsAt(b *testing.B) {
	s := phasedSettings()
	for _, bc := range []struct {
		name string
		s    waitingroom.Settings
		at   time.Time
	}{{"no_phases", waitingroom.Settings{}.WithDefaults(), phaseT0}, {"between_phases", s, phaseT0.Add(90 * time.Minute)}, {"in_a_phase", s, phaseT0},
		// A request's calls within a phase: the room's view holds the
		// settings at the phase already.
		{"in_the_phase_laid", s.At(phaseT0), phaseT0.Add(time.Second)}} {
		b.Run(bc.name, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				_ = bc.s.At(bc.at)
			}
		})
	}
}
