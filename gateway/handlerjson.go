package gateway

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/caddyserver/caddy/v2"

	"github.com/foyer-dev/foyer/waitingroom"
)

// handlerFields is Handler without its JSON methods: the gateway's own fields,
// which encoding/json reads and writes from their tags.
type handlerFields Handler

// MarshalJSON writes the handler's JSON twin: the gateway's own fields, and
// each room setting that is set under its name in Caddy's notation
// (durations in nanoseconds, times in RFC 3339).
func (h Handler) MarshalJSON() ([]byte, error) {
	data, err := json.Marshal(handlerFields(h))
	if err != nil {
		return nil, err
	}
	var obj map[string]json.RawMessage
	if err := json.Unmarshal(data, &obj); err != nil {
		return nil, err
	}
	for _, line := range caddyfileSettings {
		d := line.room
		if d == nil || d.IsZero(h.Settings) {
			continue
		}
		if obj[d.Name], err = encodeConfigValue(d, h.Settings); err != nil {
			return nil, fmt.Errorf("%s: %w", d.Name, err)
		}
	}
	return json.Marshal(obj)
}

// UnmarshalJSON reads the JSON twin as strictly as Caddy reads any module: a
// field that is neither a room setting nor one of the gateway's is refused,
// and every error names the setting at fault.
func (h *Handler) UnmarshalJSON(b []byte) error {
	var obj map[string]json.RawMessage
	if err := json.Unmarshal(b, &obj); err != nil {
		return err
	}
	// Free text is checked on the raw bytes, before encoding/json turns
	// broken UTF-8 into U+FFFD (see waitingroom.DecodeText).
	for _, line := range textLines() {
		if raw, ok := obj[line.name]; ok && string(raw) != "null" {
			if _, err := waitingroom.DecodeText(raw); err != nil {
				return textError(line.name, err)
			}
		}
	}
	var s waitingroom.Settings
	for _, line := range caddyfileSettings {
		d := line.room
		if d == nil {
			continue
		}
		raw, ok := obj[d.Name]
		if !ok {
			continue
		}
		delete(obj, d.Name)
		if string(raw) == "null" {
			continue
		}
		if err := decodeConfigValue(d, &s, raw); err != nil {
			return err
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

// encodeConfigValue writes a room setting's value as Caddy's JSON has it.
func encodeConfigValue(d *waitingroom.SettingDef, s waitingroom.Settings) (json.RawMessage, error) {
	switch v := d.Get(s).(type) {
	case time.Duration:
		return json.Marshal(caddy.Duration(v))
	case time.Time:
		return json.Marshal(v.Format(time.RFC3339Nano))
	default:
		return json.Marshal(v)
	}
}

// decodeConfigValue reads a room setting's value from Caddy's JSON into s:
// durations as nanoseconds or Go syntax ("10m"), times as RFC 3339.
func decodeConfigValue(d *waitingroom.SettingDef, s *waitingroom.Settings, raw json.RawMessage) error {
	var v any
	switch d.Kind() {
	case waitingroom.KindDuration:
		var dur caddy.Duration
		if err := dur.UnmarshalJSON(raw); err != nil {
			return fmt.Errorf("%s: %s is not a duration such as \"10m\"", d.Name, raw)
		}
		v = time.Duration(dur)
	case waitingroom.KindTime:
		var str string
		if err := json.Unmarshal(raw, &str); err != nil {
			return fmt.Errorf("%s: must be a string, an RFC 3339 time", d.Name)
		}
		t, err := parseTime(d.Name, str)
		if err != nil {
			return err
		}
		v = t
	case waitingroom.KindRate:
		var str string
		if err := json.Unmarshal(raw, &str); err != nil {
			return fmt.Errorf("%s: must be a string such as \"20/m\"", d.Name)
		}
		l, err := waitingroom.ParseJoinLimit(str)
		if err != nil {
			return fmt.Errorf("%s: %v", d.Name, err)
		}
		v = l
	case waitingroom.KindInt:
		var n int
		if err := json.Unmarshal(raw, &n); err != nil {
			return fmt.Errorf("%s: must be a whole number", d.Name)
		}
		v = n
	case waitingroom.KindBool:
		var b bool
		if err := json.Unmarshal(raw, &b); err != nil {
			return fmt.Errorf("%s: must be true or false", d.Name)
		}
		v = b
	case waitingroom.KindPhrase:
		var str string
		if err := json.Unmarshal(raw, &str); err != nil {
			return fmt.Errorf("%s: must be a string such as %q", d.Name, "pow 18")
		}
		return d.ParseText(s, str)
	default:
		str, err := waitingroom.DecodeText(raw)
		if err != nil {
			return textError(d.Name, err)
		}
		v = str
	}
	if !d.Set(s, v) {
		return fmt.Errorf("%s: a value of type %T does not fit the room setting", d.Name, v)
	}
	return nil
}

// textError names the setting whose text DecodeText refused.
func textError(name string, err error) error {
	if _, ok := errors.AsType[*json.UnmarshalTypeError](err); ok {
		return fmt.Errorf("%s: must be a string", name)
	}
	return fmt.Errorf("%s: %v", name, err)
}
