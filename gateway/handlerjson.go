package gateway

import (
	"bytes"
	"encoding/json"
	"fmt"

	"github.com/caddyserver/caddy/v2"

	"github.com/foyer-dev/foyer/waitingroom"
)

// handlerFields is Handler without its JSON methods: the gateway's own fields,
// which encoding/json reads and writes from their tags.
type handlerFields Handler

// MarshalJSON writes the handler's JSON: the gateway's own fields, and each
// room setting that is set under its name, as its value type writes itself
// (but for durations, in nanoseconds as Caddy writes them). The room's
// settings are not a nested object, so that a Caddyfile adapts to the JSON it
// always did.
func (h Handler) MarshalJSON() ([]byte, error) {
	data, err := json.Marshal(handlerFields(h))
	if err != nil {
		return nil, err
	}
	var obj map[string]json.RawMessage
	if err := json.Unmarshal(data, &obj); err != nil {
		return nil, err
	}
	for _, d := range configSettings() {
		if d.IsZero(h.Settings) {
			continue
		}
		var v any = d.Value(&h.Settings)
		if dur, ok := v.(*waitingroom.Duration); ok {
			v = int64(*dur)
		}
		if obj[d.Name], err = json.Marshal(v); err != nil {
			return nil, fmt.Errorf("%s: %w", d.Name, err)
		}
	}
	return json.Marshal(obj)
}

// UnmarshalJSON reads the handler's JSON as strictly as Caddy reads any
// module: a field that is neither a room setting nor one of the gateway's is
// refused, and every error names the setting at fault. Durations are
// nanoseconds or Go syntax ("10m"), as caddy.Duration reads them.
func (h *Handler) UnmarshalJSON(b []byte) error {
	var obj map[string]json.RawMessage
	if err := json.Unmarshal(b, &obj); err != nil {
		return err
	}
	// Free text is read as its value type, which checks the raw bytes before
	// encoding/json would turn broken UTF-8 into U+FFFD (see waitingroom.DecodeText).
	for _, line := range textLines() {
		if raw, ok := obj[line.name]; ok && string(raw) != "null" {
			if err := waitingroom.DecodeValue(line.field(new(Handler)), waitingroom.Bounds{}, raw); err != nil {
				return fmt.Errorf("%s: %v", line.name, err)
			}
		}
	}
	var s waitingroom.Settings
	for _, d := range configSettings() {
		raw, ok := obj[d.Name]
		delete(obj, d.Name)
		if !ok || string(raw) == "null" {
			continue
		}
		if dur, ok := d.Value(&s).(*waitingroom.Duration); ok {
			if (*caddy.Duration)(dur).UnmarshalJSON(raw) != nil {
				return fmt.Errorf("%s: %s is not a duration such as \"10m\"", d.Name, raw)
			}
		} else if err := d.DecodeJSON(&s, raw); err != nil {
			return fmt.Errorf("%s: %v", d.Name, err)
		}
	}
	rest, err := json.Marshal(obj)
	if err != nil {
		return err
	}
	dec := json.NewDecoder(bytes.NewReader(rest))
	dec.DisallowUnknownFields()
	var f handlerFields
	if err := dec.Decode(&f); err != nil {
		return err
	}
	*h = Handler(f)
	h.Settings = s
	return nil
}

// configSettings are the room settings a configuration gives: all but the
// room state an admin sets (paused, sold_out).
func configSettings() []*waitingroom.Setting {
	var out []*waitingroom.Setting
	for _, line := range caddyfileSettings {
		if line.room != nil {
			out = append(out, line.room)
		}
	}
	return out
}
