package gateway

import (
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/caddyserver/caddy/v2/caddyconfig/caddyfile"
)

const phasesCaddyfile = `waiting_room concert {
	new_users_per_minute 600
	phase presale {
		start 2026-12-01T10:00:00Z
		end 2026-12-01T11:00:00Z
		new_users_per_minute 60
		title "Presale"
		queueing_method reject
	}
	phase general {
		start 2026-12-01T11:00:00Z
		end 2026-12-01T13:00:00Z
		total_active_users 50
	}
}`

// TestPhaseBlocks: phase blocks give the room's phases, each with the
// settings it names, and the handler's JSON carries them as the admin API
// writes them.
func TestPhaseBlocks(t *testing.T) {
	var h Handler
	if err := h.UnmarshalCaddyfile(caddyfile.NewTestDispenser(phasesCaddyfile)); err != nil {
		t.Fatal(err)
	}
	list := h.Settings.Phases.List()
	if len(list) != 2 || list[0].Name != "presale" || list[1].Name != "general" {
		t.Fatalf("phases: %+v", list)
	}
	pre := list[0]
	if !pre.Start.Equal(time.Date(2026, 12, 1, 10, 0, 0, 0, time.UTC)) || pre.Settings.Values().NewUsersPerMinute != 60 ||
		pre.Settings.Values().Title != "Presale" || pre.Settings.Has("total_active_users") {
		t.Fatalf("presale: %+v", pre)
	}
	s, err := h.roomSettings()
	if err != nil {
		t.Fatal(err)
	}
	if at := s.At(pre.Start.Add(time.Minute)); at.NewUsersPerMinute != 60 || at.TotalActiveUsers != 200 {
		t.Fatalf("in presale: rate %d cap %d", at.NewUsersPerMinute, at.TotalActiveUsers)
	}
	handlerJSONHolds(t, h, `"phases":[{"name":"presale","start":"2026-12-01T10:00:00Z","end":"2026-12-01T11:00:00Z","title":"Presale","new_users_per_minute":60,"queueing_method":"reject"},`+
		`{"name":"general","start":"2026-12-01T11:00:00Z","end":"2026-12-01T13:00:00Z","total_active_users":50}]`)
}

// handlerJSONHolds checks that the handler's JSON holds want, and reads
// back into the same JSON.
func handlerJSONHolds(t *testing.T, h Handler, want string) {
	t.Helper()
	data, err := json.Marshal(h)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(data), want) {
		t.Fatalf("JSON %s\nwant it to hold %s", data, want)
	}
	var back Handler
	if err := json.Unmarshal(data, &back); err != nil {
		t.Fatal(err)
	}
	if again, _ := json.Marshal(back); string(again) != string(data) {
		t.Fatalf("JSON round trip: %s", again)
	}
}

// TestPhaseBlockErrors says what each bad phase block gets: an error naming
// the Caddyfile's line and what is wrong.
func TestPhaseBlockErrors(t *testing.T) {
	block := func(name, body string) string {
		return "waiting_room concert {\n phase " + name + " {\n" + body + "\n }\n}"
	}
	times := " start 2026-12-01T10:00:00Z\n end 2026-12-01T11:00:00Z\n"
	for _, tc := range []struct{ name, src, want string }{
		{"no name", "waiting_room concert {\n phase {\n" + times + " }\n}", "phase: needs a name"},
		{"bad name", block("Pre-Sale", times), `phase name "Pre-Sale": 1 to 32 of a-z, 0-9, _ and -`},
		{"two names", "waiting_room concert {\n phase a b {\n" + times + " }\n}", "wrong argument count"},
		{"unknown setting", block("a", times+" colour blue"), `phase a: unrecognized setting "colour"`},
		{"not at runtime", block("a", times+" admission_grace 1m"), "phase a: admission_grace cannot change while the room runs, so no phase can set it: set it for the room"},
		{"a switch", block("a", times+" paused"), "phase a: paused is a switch an admin throws, not a phase's setting"},
		{"the schedule", block("a", times+" event_end 2026-12-01T12:00:00Z"), "phase a: event_end is the room's schedule"},
		{"out of bounds", block("a", times+" new_users_per_minute 0"), "phase a: new_users_per_minute: must be between 1 and"},
		{"not a number", block("a", times+" total_active_users many"), `total_active_users: "many" is not a whole number`},
		{"bad time", block("a", " start tomorrow\n end 2026-12-01T11:00:00Z"), `start: "tomorrow" is not an RFC 3339 time`},
		{"twice", block("a", times+" title A\n title B"), "phase a: title given twice"},
		{"lanes of no weight", block("a", times+" lanes general=0"), "lanes: at least one lane needs a weight above 0, or nobody is ever let in"},
		{"no end", block("a", " start 2026-12-01T10:00:00Z"), `phase a, from line 2: phases: phase "a": needs a start and an end`},
		{"end first", block("a", " start 2026-12-01T11:00:00Z\n end 2026-12-01T10:00:00Z"), `phase a, from line 2: phases: phase "a": start must be before end`},
		{"same name", "waiting_room concert {\n phase a {\n" + times + " }\n phase a {\n start 2026-12-01T12:00:00Z\n end 2026-12-01T13:00:00Z\n }\n}",
			`phase a, from line 6: phases: phase "a": named twice`},
		{"overlap", "waiting_room concert {\n phase a {\n" + times + " }\n phase b {\n start 2026-12-01T10:30:00Z\n end 2026-12-01T13:00:00Z\n }\n}",
			`phase b, from line 6: phases: phase "b" overlaps phase "a": it starts at 2026-12-01T10:30:00Z, before "a" ends at 2026-12-01T11:00:00Z`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var h Handler
			err := h.UnmarshalCaddyfile(caddyfile.NewTestDispenser(tc.src))
			if err == nil || !strings.Contains(err.Error(), tc.want) || !strings.Contains(err.Error(), ", at Testfile:") {
				t.Fatalf("got %v, want %q at a line", err, tc.want)
			}
		})
	}
	nine := "waiting_room concert {\n"
	for i := range 9 {
		nine += " phase p" + string(rune('0'+i)) + " {\n start 2026-12-0" + string(rune('1'+i)) + "T10:00:00Z\n end 2026-12-0" + string(rune('1'+i)) + "T11:00:00Z\n }\n"
	}
	var h Handler
	if err := h.UnmarshalCaddyfile(caddyfile.NewTestDispenser(nine + "}")); err == nil || !strings.Contains(err.Error(), "at most 8 phases, got 9") {
		t.Fatalf("nine phases: %v", err)
	}
}

// TestPhaseLanesCaddyfile: a phase's lanes are read from its block, and the
// room's lanes (its own and every phase's together) are checked as the
// site loads: nine lanes in all are refused, naming the phase.
func TestPhaseLanesCaddyfile(t *testing.T) {
	src := func(phaseLanes string) string {
		return "waiting_room concert {\n lanes a=1 b=1 c=1 d=1\n phase presale {\n start 2026-12-01T10:00:00Z\n end 2026-12-01T11:00:00Z\n lanes " +
			phaseLanes + "\n }\n}"
	}
	var h Handler
	if err := h.UnmarshalCaddyfile(caddyfile.NewTestDispenser(src("vip=2 general=0"))); err != nil {
		t.Fatal(err)
	}
	s, err := h.roomSettings()
	if err != nil {
		t.Fatalf("room lanes a-d and a presale of vip: %v", err)
	}
	if got := s.RoomLanes().String(); got != "general=1 a=1 b=1 c=1 d=1 vip=0" {
		t.Errorf("the room's lanes %q", got)
	}
	ph, _ := s.Phases.Find("presale")
	if got := s.PhaseLaneWeights(ph).String(); got != "general=0 a=0 b=0 c=0 d=0 vip=2" {
		t.Errorf("the presale's weights %q", got)
	}
	h = Handler{}
	if err := h.UnmarshalCaddyfile(caddyfile.NewTestDispenser(src("e=1 f=1 g=1 h=1"))); err != nil {
		t.Fatal(err)
	}
	if _, err := h.roomSettings(); err == nil || !strings.Contains(err.Error(), `phase "presale": lanes: the room's and its phases' lanes together are 9, at most 8`) {
		t.Fatalf("nine lanes in all: %v", err)
	}
}

// TestPhasePrequeueCaddyfile: a phase block's prequeue_start and
// shuffle_at_start give the phase its own pre-queue and draw, carried by
// the handler's JSON; each bad one is refused naming the line, and one the
// room cannot run (a random room) as the site loads, naming the phase.
func TestPhasePrequeueCaddyfile(t *testing.T) {
	const src = `waiting_room concert {
	phase presale {
		start 2026-12-01T10:00:00Z
		end 2026-12-01T11:00:00Z
	}
	phase general {
		prequeue_start 2026-12-01T10:30:00Z
		start 2026-12-01T11:00:00Z
		end 2026-12-01T13:00:00Z
		shuffle_at_start
		total_active_users 50
	}
}`
	var h Handler
	if err := h.UnmarshalCaddyfile(caddyfile.NewTestDispenser(src)); err != nil {
		t.Fatal(err)
	}
	if _, err := h.roomSettings(); err != nil {
		t.Fatal(err)
	}
	ph, ok := h.Settings.Phases.Find("general")
	if !ok || !ph.ShuffleAtStart || !ph.PrequeueStart.Equal(time.Date(2026, 12, 1, 10, 30, 0, 0, time.UTC)) || ph.Settings.Has("prequeue_start") {
		t.Fatalf("general: %+v", ph)
	}
	handlerJSONHolds(t, h, `{"name":"general","start":"2026-12-01T11:00:00Z","end":"2026-12-01T13:00:00Z","prequeue_start":"2026-12-01T10:30:00Z","shuffle_at_start":true,"total_active_users":50}`)

	block := func(body string) string {
		return "waiting_room concert {\n phase a {\n start 2026-12-01T10:00:00Z\n end 2026-12-01T11:00:00Z\n" + body + "\n }\n}"
	}
	for _, tc := range []struct{ name, src, want string }{
		{"shuffle with a value", block(" prequeue_start 2026-12-01T09:00:00Z\n shuffle_at_start yes"), "phase a: shuffle_at_start takes no value"},
		{"shuffle alone", block(" shuffle_at_start"), `phase a, from line 2: phases: phase "a": shuffle_at_start needs prequeue_start`},
		{"opens after the start", block(" prequeue_start 2026-12-01T10:30:00Z"), `phase "a": prequeue_start 2026-12-01T10:30:00Z must be before the phase's start 2026-12-01T10:00:00Z`},
		{"bad time", block(" prequeue_start soon"), `prequeue_start: "soon" is not an RFC 3339 time`},
		{"before the previous start", "waiting_room concert {\n phase a {\n start 2026-12-01T10:00:00Z\n end 2026-12-01T11:00:00Z\n }\n phase b {\n" +
			" prequeue_start 2026-12-01T09:30:00Z\n start 2026-12-01T11:00:00Z\n end 2026-12-01T12:00:00Z\n shuffle_at_start\n }\n}",
			`phase b, from line 6: phases: phase "b": prequeue_start 2026-12-01T09:30:00Z must be after the start of phase "a"`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var h Handler
			err := h.UnmarshalCaddyfile(caddyfile.NewTestDispenser(tc.src))
			if err == nil || !strings.Contains(err.Error(), tc.want) || !strings.Contains(err.Error(), ", at Testfile:") {
				t.Fatalf("got %v, want %q at a line", err, tc.want)
			}
		})
	}
	h = Handler{}
	if err := h.UnmarshalCaddyfile(caddyfile.NewTestDispenser(strings.Replace(src, "waiting_room concert {", "waiting_room concert {\n\tqueueing_method random", 1))); err != nil {
		t.Fatal(err)
	}
	if _, err := h.roomSettings(); err == nil || !strings.Contains(err.Error(), `phase "general": prequeue_start needs a first-come room`) {
		t.Fatalf("a phase pre-queue in a random room: %v", err)
	}
}
