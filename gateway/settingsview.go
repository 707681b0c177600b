package gateway

import "github.com/foyer-dev/foyer/waitingroom"

// settingsView is how the admin API shows a room's settings: every setting of
// the room's table, in its order, as its value type writes itself (durations
// "10m", times RFC 3339); empty text and times are left out. The command line
// reads it back.
type settingsView struct{ waitingroom.Settings }

// MarshalJSON writes the settings.
func (v settingsView) MarshalJSON() ([]byte, error) {
	return waitingroom.EncodeSettings(&v.Settings, func(d *waitingroom.Setting) bool {
		text, err := d.Value(&v.Settings).MarshalText()
		return err != nil || len(text) > 0
	})
}

// UnmarshalJSON reads what MarshalJSON writes. A setting it does not know is
// skipped: the command line may talk to a newer node.
func (v *settingsView) UnmarshalJSON(b []byte) error {
	var s waitingroom.Settings
	if _, err := waitingroom.DecodeSettings(b, &s, func(*waitingroom.Setting) bool { return true }); err != nil {
		return err
	}
	v.Settings = s
	return nil
}

// overridesView lists the overrides that are set, under their JSON names, in
// the notation a PATCH takes. A cleared time shows as "".
func overridesView(o waitingroom.Overrides) map[string]any {
	m := make(map[string]any)
	vals := o.Values()
	for _, d := range waitingroom.SettingDefs() {
		if o.Has(d.Name) {
			m[d.Name] = d.Value(&vals)
		}
	}
	return m
}
