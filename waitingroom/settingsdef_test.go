package waitingroom_test

import (
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/foyer-dev/foyer/waitingroom"
)

// TestOverridesJSONKeepsItsNotation: stored overrides read the notation
// older nodes wrote (durations "15m0s", times RFC 3339 or "" for a cleared
// time) and write the admin API's, which older nodes read too (durations
// "15m"), in the same order, so stores and memos written before the settings
// codec still apply.
func TestOverridesJSONKeepsItsNotation(t *testing.T) {
	const stored = `{"title":"Encore","new_users_per_minute":600,"total_active_users":3,` +
		`"session_duration":"15m0s","queueing_method":"random","queue_all":false,` +
		`"prequeue_start":"","event_start":"2026-06-01T10:00:00Z","event_end":"2026-06-01T23:00:00Z",` +
		`"paused":true,"sold_out":false}`
	var o waitingroom.Overrides
	if err := json.Unmarshal([]byte(stored), &o); err != nil {
		t.Fatal(err)
	}
	out, err := json.Marshal(o)
	if want := strings.Replace(stored, "15m0s", "15m", 1); err != nil || string(out) != want {
		t.Fatalf("round trip:\n got %s %v\nwant %s", out, err, want)
	}
	s := o.Apply(waitingroom.Settings{PrequeueStart: time.Now(), TicketLifetime: time.Hour})
	if s.SessionDuration != 15*time.Minute || s.QueueingMethod != waitingroom.Random || !s.PrequeueStart.IsZero() ||
		!s.Paused || s.TicketLifetime != time.Hour || s.EventEnd.Hour() != 23 {
		t.Errorf("applied: %+v", s)
	}
	// Unknown settings (from a newer node) and nulls are left out, not refused.
	if err := json.Unmarshal([]byte(`{"paused":null,"return_window":"2m","sold_out":true}`), &o); err != nil ||
		o.Has("paused") || !o.Has("sold_out") {
		t.Errorf("lenient read: %+v %v", o, err)
	}
}

// TestOverridesCoverEveryRuntimeSetting walks the table: every runtime
// setting, set to a value other than its zero, is carried by Merge, written and
// read back by JSON, and laid over settings by Apply; nothing else is touched.
func TestOverridesCoverEveryRuntimeSetting(t *testing.T) {
	for _, d := range waitingroom.SettingDefs() {
		if !d.Runtime {
			continue
		}
		raw := sampleJSON(d)
		one, err := waitingroom.DecodeOverride(d.Name, json.RawMessage(raw))
		if err != nil {
			t.Fatalf("%s: %v", d.Name, err)
		}
		merged := waitingroom.Overrides{}.Merge(one)
		data, _ := json.Marshal(merged)
		if want := `{"` + d.Name + `":` + raw + `}`; string(data) != want {
			t.Errorf("%s: JSON %s, want %s", d.Name, data, want)
		}
		var back waitingroom.Overrides
		if err := json.Unmarshal(data, &back); err != nil || !back.Has(d.Name) {
			t.Errorf("%s: read back %+v %v", d.Name, back, err)
		}
		base := waitingroom.Settings{}.WithDefaults()
		got := back.Apply(base)
		// As text: a value that holds a list (phases) is compared by its
		// contents, not its identity.
		if valueText(d, got) != valueText(d, one.Values()) || valueText(d, got) == valueText(d, base) {
			t.Errorf("%s: applied %s, want %s", d.Name, valueText(d, got), valueText(d, one.Values()))
		}
		for _, other := range waitingroom.SettingDefs() {
			if other != d && valueText(other, got) != valueText(other, base) {
				t.Errorf("%s: Apply changed %s too", d.Name, other.Name)
			}
		}
	}
}

// TestSettingLimitsComeFromTheTable: the bounds Validate enforces are the
// ones the table (and so docs/configuration.md) gives, inclusive at both ends.
func TestSettingLimitsComeFromTheTable(t *testing.T) {
	for _, d := range waitingroom.SettingDefs() {
		if d.Bounds.Max == 0 {
			continue
		}
		for _, tc := range []struct {
			v  int64
			ok bool
		}{{d.Min, true}, {d.Max, true}, {d.Min - 1, false}, {d.Max + 1, false}} {
			s := waitingroom.Settings{}.WithDefaults()
			var raw string
			switch d.Value(&s).(type) {
			case *waitingroom.Duration:
				raw = `"` + time.Duration(tc.v).String() + `"`
			case *waitingroom.Challenge:
				raw = fmt.Sprintf(`"pow %d"`, tc.v)
			default:
				b, _ := json.Marshal(tc.v)
				raw = string(b)
			}
			o, err := waitingroom.DecodeOverride(d.Name, json.RawMessage(raw))
			if err != nil && d.Runtime {
				t.Fatalf("%s %s: %v", d.Name, raw, err)
			}
			if !d.Runtime {
				continue // checked through the room tests' configurations
			}
			err = o.Apply(s).Validate()
			var se *waitingroom.SettingError
			if tc.ok != (err == nil) || err != nil && (!errors.As(err, &se) || se.Setting != d.Name) {
				t.Errorf("%s = %s: %v", d.Name, raw, err)
			}
		}
	}
}

func TestDecodeOverrideRefuses(t *testing.T) {
	for _, tc := range []struct{ name, raw string }{
		{"queueing_method", `"lifo"`},
		{"session_duration", `600`},
		{"event_start", `"tomorrow"`},
		{"admission_grace", `"10s"`}, // configuration only
		{"colour", `"blue"`},
		{"join_limit", `"20 per minute"`},
		{"join_limit", `20`},
	} {
		if _, err := waitingroom.DecodeOverride(tc.name, json.RawMessage(tc.raw)); err == nil {
			t.Errorf("%s = %s: accepted", tc.name, tc.raw)
		}
	}
	// A value of the wrong JSON type is told what the setting takes.
	for _, tc := range []struct{ name, raw, want string }{
		{"total_active_users", `1.5`, "must be a whole number"},
		{"paused", `"yes"`, "must be true or false"},
		{"session_duration", `600`, "must be a string"},
		{"join_limit", `20`, `must be a string such as "20/m burst 40", or "off"`},
		{"title", `5`, "must be a string"},
		{"queueing_method", `"lifo"`, "must be fifo, random, passthrough or reject"},
		{"event_start", `"tomorrow"`, "is not an RFC 3339 time"},
		{"challenge", `"captcha"`, `must be "off" or "pow <bits>"`},
	} {
		if _, err := waitingroom.DecodeOverride(tc.name, json.RawMessage(tc.raw)); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s = %s: %v, want %q", tc.name, tc.raw, err, tc.want)
		}
	}
}

// sampleJSON is a value of d other than its default and its zero, in the
// admin API's notation.
func sampleJSON(d *waitingroom.Setting) string {
	var s waitingroom.Settings
	switch d.Value(&s).(type) {
	case *waitingroom.Text:
		return `"x"`
	case *waitingroom.Count:
		return `7`
	case *waitingroom.Flag:
		return `true`
	case *waitingroom.Duration:
		return `"7m"`
	case *waitingroom.Time:
		return `"2026-06-01T10:00:00Z"`
	case *waitingroom.QueueingMethod:
		return `"reject"`
	case *waitingroom.JoinLimit:
		return `"20/m burst 5"`
	case *waitingroom.Challenge:
		return `"pow 20"`
	case *waitingroom.Phases:
		return `[{"name":"presale","start":"2026-06-01T10:00:00Z","end":"2026-06-01T11:00:00Z","new_users_per_minute":60}]`
	case *waitingroom.Lanes:
		return `"general=1 presale=3"`
	}
	panic("no sample for " + d.Name)
}

// valueText is d's value in s as text.
func valueText(d *waitingroom.Setting, s waitingroom.Settings) string {
	b, err := d.Value(&s).MarshalText()
	if err != nil {
		return "error: " + err.Error()
	}
	return string(b)
}

// BenchmarkOverridesApply measures what a view refresh pays to lay the
// overrides over the configured settings (status polls read the result and
// pay nothing).
func BenchmarkOverridesApply(b *testing.B) {
	o := waitingroom.OverridesOf(waitingroom.Settings{Paused: true, TotalActiveUsers: 5, SessionDuration: time.Hour},
		"paused", "total_active_users", "session_duration")
	base := waitingroom.Settings{}.WithDefaults()
	b.ReportAllocs()
	for b.Loop() {
		base = o.Apply(base)
	}
}
