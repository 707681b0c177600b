package waitingroom

import (
	"encoding/json"
	"fmt"
)

// Overrides are runtime changes an admin made to a room's settings. They are kept
// in the store with a version, so every node serving the room applies the same
// ones; a setting they do not name keeps its configured value.
//
// They are a set of runtime settings (one bit per entry of settingDefs) and
// the values given to them, so that a new setting needs no code here. Their
// JSON is an object of the settings they name, in the table's order, in the
// admin API's notation.
type Overrides struct {
	set  uint64
	vals Settings
}

// OverridesOf returns overrides that set each named runtime setting to its
// value in values. A name that is not a runtime setting is a programming
// error, and panics.
func OverridesOf(values Settings, names ...string) Overrides {
	var o Overrides
	for _, name := range names {
		d, ok := LookupSetting(name)
		if !ok || !d.Runtime {
			panic("waitingroom: " + name + " is not a runtime setting")
		}
		d.copy(&o.vals, &values)
		o.set |= d.bit
	}
	return o
}

// Has reports whether the overrides set the named setting.
func (o Overrides) Has(name string) bool {
	d, ok := LookupSetting(name)
	return ok && o.set&d.bit != 0
}

// Values returns the values the overrides give, zero for settings they leave
// alone; read them together with Has.
func (o Overrides) Values() Settings { return o.vals }

// IsZero reports whether the overrides change nothing.
func (o Overrides) IsZero() bool { return o.set == 0 }

// Apply returns s with the overrides laid over it.
func (o Overrides) Apply(s Settings) Settings {
	return o.lay(s, &o.vals)
}

// Merge lays patch over o: settings set in patch win.
func (o Overrides) Merge(patch Overrides) Overrides {
	o.vals = patch.lay(o.vals, &patch.vals)
	o.set |= patch.set
	return o
}

// lay copies the settings o names from vals over s.
func (o Overrides) lay(s Settings, vals *Settings) Settings {
	for _, d := range settingDefs {
		if o.set&d.bit != 0 {
			d.copy(&s, vals)
		}
	}
	return s
}

// DecodeOverride reads one runtime setting's JSON value, as a PATCH gives it.
// A value the setting does not take is an error saying what it takes, text
// that is not one line of valid UTF-8 among them (see DecodeText). Bounds are
// left to Settings.Validate, which sees the settings the change leads to.
func DecodeOverride(name string, raw json.RawMessage) (Overrides, error) {
	var o Overrides
	d, ok := LookupSetting(name)
	if !ok || !d.Runtime {
		return o, fmt.Errorf("%q is not a runtime setting", name)
	}
	if err := d.DecodeJSON(&o.vals, raw); err != nil {
		return o, err
	}
	o.set |= d.bit
	return o, nil
}

// MarshalJSON writes the settings the overrides name, in the table's order.
func (o Overrides) MarshalJSON() ([]byte, error) {
	return EncodeSettings(&o.vals, func(d *Setting) bool { return o.set&d.bit != 0 })
}

// UnmarshalJSON reads what MarshalJSON writes, and what nodes wrote before
// the settings table (durations "15m0s"). A setting this version does not
// know, or one given as null, is left out, so that overrides written by a
// newer node still apply here.
func (o *Overrides) UnmarshalJSON(b []byte) error {
	var fields map[string]json.RawMessage
	if err := json.Unmarshal(b, &fields); err != nil {
		return err
	}
	var out Overrides
	for _, d := range settingDefs {
		raw, ok := fields[d.Name]
		if !ok || !d.Runtime || string(raw) == "null" {
			continue
		}
		if err := d.DecodeJSON(&out.vals, raw); err != nil {
			return fmt.Errorf("%s: %w", d.Name, err)
		}
		out.set |= d.bit
	}
	*o = out
	return nil
}
