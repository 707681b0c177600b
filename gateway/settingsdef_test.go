package gateway

import (
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/caddyserver/caddy/v2"
	"github.com/caddyserver/caddy/v2/caddyconfig/caddyfile"

	"github.com/foyer-dev/foyer/waitingroom"
)

// sampleValue is a Caddyfile value for a line read by its value type,
// other than the zero value; "" for a bare flag.
func sampleValue(s caddyfileSetting) string {
	var v waitingroom.Value
	if s.room != nil {
		v = s.room.Value(new(waitingroom.Settings))
	} else {
		v = s.field(new(Handler))
	}
	switch v.(type) {
	case *waitingroom.Count:
		return "7"
	case *waitingroom.Duration:
		return "7m"
	case *waitingroom.Flag:
		return ""
	case *waitingroom.Time:
		return "2026-12-01T10:00:00Z"
	case *waitingroom.QueueingMethod:
		return "reject"
	case *waitingroom.JoinLimit:
		return "20/m burst 40"
	case *waitingroom.Challenge:
		return "pow 20"
	case *waitingroom.Phases:
		return "x {\nstart 2026-12-01T10:00:00Z\nend 2026-12-01T11:00:00Z\nnew_users_per_minute 60\n}"
	case *waitingroom.Lanes:
		return "general=1 presale=3"
	}
	return "x"
}

// lineOf is the Caddyfile line of a room setting (phases have the line
// phase, one block each).
func lineOf(d *waitingroom.Setting) (caddyfileSetting, bool) {
	for _, s := range caddyfileSettings {
		if s.room == d {
			return s, true
		}
	}
	return caddyfileSetting{}, false
}

// sameSettings compares settings by their values as the admin API writes
// them: a list (phases) by its contents, not its identity.
func sameSettings(t *testing.T, a, b waitingroom.Settings) bool {
	t.Helper()
	ja, err1 := json.Marshal(settingsView{a})
	jb, err2 := json.Marshal(settingsView{b})
	if err1 != nil || err2 != nil {
		t.Fatalf("settings as JSON: %v %v", err1, err2)
	}
	return string(ja) == string(jb)
}

// TestEveryCaddyfileSettingIsItsJSONTwin: every line of the table parses
// into the Handler field it names, and that field's JSON name is the line's
// own, so the Caddyfile and the JSON twin cannot drift apart.
func TestEveryCaddyfileSettingIsItsJSONTwin(t *testing.T) {
	for _, s := range caddyfileSettings {
		if s.parse != nil {
			continue // store and previous_signing_keys: see TestCaddyfileAdapt
		}
		var h Handler
		src := "waiting_room {\n" + s.name + " " + sampleValue(s) + "\n}"
		if err := h.UnmarshalCaddyfile(caddyfile.NewTestDispenser(src)); err != nil {
			t.Errorf("%s: %v", s.name, err)
			continue
		}
		data, err := json.Marshal(h)
		if err != nil {
			t.Fatal(err)
		}
		var fields map[string]any
		if err := json.Unmarshal(data, &fields); err != nil {
			t.Fatal(err)
		}
		if _, ok := fields[s.name]; !ok || len(fields) != 1 {
			t.Errorf("%s: parsed into JSON %s, want the one key %q", s.name, data, s.name)
		}
	}
}

// TestEveryRoomSettingIsConfigured: each room setting that is configuration
// (not room state an admin sets, such as paused) has its Caddyfile line, and
// the line's value reaches the room's settings.
func TestEveryRoomSettingIsConfigured(t *testing.T) {
	for _, d := range waitingroom.SettingDefs() {
		s, ok := lineOf(d)
		if d.RuntimeOnly {
			if ok {
				t.Errorf("%s: room state, yet a Caddyfile line", d.Name)
			}
			continue
		}
		if !ok || s.room != d {
			t.Errorf("%s: no Caddyfile line for this room setting", d.Name)
			continue
		}
		var h Handler
		src := "waiting_room {\n" + s.name + " " + sampleValue(s) + "\n}"
		if err := h.UnmarshalCaddyfile(caddyfile.NewTestDispenser(src)); err != nil {
			t.Fatalf("%s: %v", d.Name, err)
		}
		if d.IsZero(h.Settings) {
			t.Errorf("%s: the line did not reach the handler's settings", d.Name)
		}
		h.Room = "r"
		got, err := h.roomSettings()
		text := func(s waitingroom.Settings) string { b, _ := d.Value(&s).MarshalText(); return string(b) }
		if text(got) != text(h.Settings) {
			t.Errorf("%s: the room has %s (%v), want %s", d.Name, text(got), err, text(h.Settings))
		}
	}
}

// TestHandlerJSONRoundTrip: the JSON twin of a handler with every setting
// reads back as the same handler, and Caddy's strict loading accepts it.
func TestHandlerJSONRoundTrip(t *testing.T) {
	var h Handler
	for _, s := range caddyfileSettings {
		var src string
		switch s.name {
		case "store":
			src = "waiting_room {\nstore redis redis://127.0.0.1:6379\n}"
		case "previous_signing_keys":
			src = "waiting_room {\nprevious_signing_keys a.pem b.pem\n}"
		case "account":
			src = "waiting_room {\naccount {\njwks_url https://login.example/jwks.json\ncookie session\nrequired\nlogin_url /login\n}\n}"
		case "languages":
			src = "waiting_room {\nlanguages de en\n}"
		default:
			src = "waiting_room {\n" + s.name + " " + sampleValue(s) + "\n}"
		}
		if err := h.UnmarshalCaddyfile(caddyfile.NewTestDispenser(src)); err != nil {
			t.Fatalf("%s: %v", s.name, err)
		}
	}
	data, err := json.Marshal(h)
	if err != nil {
		t.Fatal(err)
	}
	var back Handler
	if err := caddy.StrictUnmarshalJSON(data, &back); err != nil {
		t.Fatalf("%s: %v", data, err)
	}
	again, _ := json.Marshal(back)
	if string(again) != string(data) || !sameSettings(t, back.Settings, h.Settings) {
		t.Errorf("round trip:\n got %s\nwant %s", again, data)
	}
	for _, s := range caddyfileSettings {
		key := s.name
		if s.room != nil {
			key = s.room.Name // phase blocks are the list phases
		}
		if !strings.Contains(string(data), `"`+key+`":`) {
			t.Errorf("%s is missing from %s", key, data)
		}
	}
}

// TestAdminViewShowsEverySetting: the admin API's view of a room names every
// room setting, and the command line reads back what it wrote.
func TestAdminViewShowsEverySetting(t *testing.T) {
	at := time.Date(2026, 12, 1, 10, 0, 0, 0, time.UTC)
	s := waitingroom.Settings{Title: "t", PrequeueStart: at, EventStart: at.Add(time.Hour), EventEnd: at.Add(2 * time.Hour),
		ShuffleAtEventStart: true, QueueAll: true, Paused: true, SoldOut: true,
		JoinLimit: waitingroom.JoinLimit{N: 20, Per: time.Minute, Burst: 40},
		Phases: waitingroom.NewPhases(waitingroom.ScheduledPhase{Name: "presale", Start: at, End: at.Add(time.Hour),
			Settings: waitingroom.OverridesOf(waitingroom.Settings{NewUsersPerMinute: 60}, "new_users_per_minute")}),
	}.WithDefaults()
	data, err := json.Marshal(settingsView{s})
	if err != nil {
		t.Fatal(err)
	}
	for _, d := range waitingroom.SettingDefs() {
		if !strings.Contains(string(data), `"`+d.Name+`":`) {
			t.Errorf("the admin view %s does not show %s", data, d.Name)
		}
	}
	var back settingsView
	if err := json.Unmarshal(data, &back); err != nil || !sameSettings(t, back.Settings, s) {
		t.Errorf("read back %+v %v\nwant %+v", back.Settings, err, s)
	}
}

// TestPatchKnowsEverySetting: a PATCH takes every runtime setting and
// refuses every other line of the Caddyfile saying it cannot change at runtime.
func TestPatchKnowsEverySetting(t *testing.T) {
	for _, d := range waitingroom.SettingDefs() {
		if !d.Runtime {
			continue
		}
		s := caddyfileSetting{room: d}
		raw := `"` + sampleValue(s) + `"`
		switch d.Value(new(waitingroom.Settings)).(type) {
		case *waitingroom.Count:
			raw = "7"
		case *waitingroom.Flag:
			raw = "true"
		case *waitingroom.Phases:
			raw = `[{"name":"x","start":"2026-12-01T10:00:00Z","end":"2026-12-01T11:00:00Z","new_users_per_minute":60}]`
		}
		if _, names, err := decodePatch([]byte(`{"` + d.Name + `": ` + raw + `}`)); err != nil || len(names) != 1 {
			t.Errorf("%s = %s: %v", d.Name, raw, err)
		}
	}
	for _, s := range caddyfileSettings {
		if s.runtime() {
			continue
		}
		_, _, err := decodePatch([]byte(`{"` + s.name + `": "x"}`))
		if err == nil || err.code != "unknown_setting" || !strings.Contains(err.message, s.name+": cannot be changed at runtime") {
			t.Errorf("%s: %v, want refused as configuration only", s.name, err)
		}
	}
}

// TestEverySettingStatesItsLimits: the settings table of docs/configuration.md says, for every line of
// the waiting_room block, what it accepts; an empty cell left the reader to
// find out from an error.
func TestEverySettingStatesItsLimits(t *testing.T) {
	for _, s := range caddyfileSettings {
		if strings.TrimSpace(s.limits) == "" {
			t.Errorf("%s: no limits stated", s.syntax)
		}
	}
}
