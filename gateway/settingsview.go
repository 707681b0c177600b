package gateway

import (
	"encoding/json"
	"fmt"
	"time"

	"github.com/foyer-dev/foyer/waitingroom"
)

// settingsView is how the admin API shows a room's settings: every setting of
// the room's table, in its order, in the configuration's own notation
// (durations "10m", times RFC 3339); empty text and times are left out. The
// command line reads it back.
type settingsView struct{ waitingroom.Settings }

// MarshalJSON writes the settings.
func (v settingsView) MarshalJSON() ([]byte, error) {
	return waitingroom.EncodeSettings(
		func(d *waitingroom.SettingDef) bool {
			omitEmpty := d.Kind() == waitingroom.KindString || d.Kind() == waitingroom.KindTime
			return !omitEmpty || !d.IsZero(v.Settings)
		},
		func(d *waitingroom.SettingDef) ([]byte, error) { return json.Marshal(adminValue(d, v.Settings)) })
}

// UnmarshalJSON reads what MarshalJSON writes. A setting it does not know is
// skipped: the command line may talk to a newer node.
func (v *settingsView) UnmarshalJSON(b []byte) error {
	var fields map[string]json.RawMessage
	if err := json.Unmarshal(b, &fields); err != nil {
		return err
	}
	var s waitingroom.Settings
	for _, d := range waitingroom.SettingDefs() {
		raw, ok := fields[d.Name]
		if !ok {
			continue
		}
		var val any
		var err error
		switch d.Kind() {
		case waitingroom.KindInt:
			var n int
			err, val = json.Unmarshal(raw, &n), n
		case waitingroom.KindBool:
			var f bool
			err, val = json.Unmarshal(raw, &f), f
		default:
			var str string
			if err = json.Unmarshal(raw, &str); err == nil {
				val, err = fromAdminText(d, str)
			}
		}
		if err != nil {
			return fmt.Errorf("%s: %w", d.Name, err)
		}
		d.Set(&s, val)
	}
	v.Settings = s
	return nil
}

// adminValue is a setting's value in s as the admin API shows it.
func adminValue(d *waitingroom.SettingDef, s waitingroom.Settings) any {
	switch v := d.Get(s).(type) {
	case time.Duration:
		return shortDuration(v)
	case time.Time:
		return rfc3339(v)
	case waitingroom.QueueingMethod:
		return string(v)
	case waitingroom.JoinLimit:
		return v.String()
	default:
		return v
	}
}

// fromAdminText reads a text, duration, time or join limit setting as
// adminValue writes it.
func fromAdminText(d *waitingroom.SettingDef, str string) (any, error) {
	switch d.Kind() {
	case waitingroom.KindDuration:
		return time.ParseDuration(str)
	case waitingroom.KindTime:
		if str == "" {
			return time.Time{}, nil
		}
		return time.Parse(time.RFC3339, str)
	case waitingroom.KindRate:
		return waitingroom.ParseJoinLimit(str)
	}
	return str, nil
}

// overridesView lists the overrides that are set, under their JSON names, in
// the notation a PATCH takes. A cleared time shows as "".
func overridesView(o waitingroom.Overrides) map[string]any {
	m := make(map[string]any)
	for _, d := range waitingroom.SettingDefs() {
		if o.Has(d.Name) {
			m[d.Name] = adminValue(d, o.Values())
		}
	}
	return m
}
