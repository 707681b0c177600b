package gateway

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"slices"
	"strings"

	"github.com/foyer-dev/foyer/waitingroom"
)

// maxPatchBody bounds a PATCH body. Every runtime setting at once fits in well
// under a kilobyte; anything much larger is a mistake or an attack.
const maxPatchBody = 64 << 10

// lookupSetting finds a setting an admin may change while the room runs: the
// runtime entries of the room's settings table.
func lookupSetting(name string) (*waitingroom.Setting, bool) {
	d, ok := waitingroom.LookupSetting(name)
	return d, ok && d.Runtime
}

// configOnly reports whether name is a setting of the configuration that a
// running room cannot change, so that a PATCH naming one is told why it failed.
func configOnly(name string) bool {
	s, ok := lookupCaddyfileSetting(name)
	return ok && !s.runtime()
}

func runtimeSettingNames() string {
	var names []string
	for _, d := range waitingroom.SettingDefs() {
		if d.Runtime {
			names = append(names, d.Name)
		}
	}
	return strings.Join(names, ", ")
}

// patchError is a PATCH body that cannot be applied, with the code and message
// the admin API answers.
type patchError struct {
	code    string
	message string
}

func (e *patchError) Error() string { return e.message }

func badBody(code, format string, args ...any) *patchError {
	return &patchError{code: code, message: fmt.Sprintf(format, args...)}
}

// decodePatch reads a PATCH body strictly: a JSON object of runtime settings,
// each named once, with a value of its type. Anything else is refused, naming
// the setting at fault, so that a typo never passes for a change that did not
// happen. It returns the overrides and the names of the settings they set.
func decodePatch(body []byte) (waitingroom.Overrides, []string, *patchError) {
	var o waitingroom.Overrides
	if len(bytes.TrimSpace(body)) == 0 {
		return o, nil, badBody("empty_body", `the body is empty; send a JSON object of settings, such as {"paused": true}`)
	}
	dec := json.NewDecoder(bytes.NewReader(body))
	tok, err := dec.Token()
	if err != nil {
		return o, nil, malformed(err)
	}
	if d, ok := tok.(json.Delim); !ok || d != '{' {
		return o, nil, badBody("invalid_body", "the body must be a JSON object of settings")
	}
	var names []string
	for dec.More() {
		tok, err := dec.Token()
		if err != nil {
			return o, nil, malformed(err)
		}
		name, _ := tok.(string)
		var raw json.RawMessage
		if err := dec.Decode(&raw); err != nil {
			// Name the setting whose value broke the JSON (a raw control
			// character in a title, say), so the admin knows where to look.
			e := malformed(err)
			e.message = name + ": " + e.message
			return o, nil, e
		}
		if slices.Contains(names, name) {
			return o, nil, badBody("invalid_body", "%s: given twice", name)
		}
		rs, ok := lookupSetting(name)
		switch {
		case !ok && configOnly(name):
			return o, nil, badBody("unknown_setting", "%s: cannot be changed at runtime; change it in the configuration", name)
		case !ok:
			return o, nil, badBody("unknown_setting", "%q is not a runtime setting; they are: %s", name, runtimeSettingNames())
		case string(raw) == "null":
			return o, nil, badBody("invalid_setting", "%s: must be %s, not null", name, rs.Notation().JSON)
		}
		one, err := waitingroom.DecodeOverride(name, raw)
		if err != nil {
			return o, nil, badBody("invalid_setting", "%s: %v", name, err)
		}
		o = o.Merge(one)
		names = append(names, name)
	}
	if _, err := dec.Token(); err != nil {
		return o, nil, malformed(err)
	}
	if _, err := dec.Token(); err != io.EOF {
		return o, nil, badBody("malformed_json", "malformed JSON: unexpected data after the object")
	}
	if len(names) == 0 {
		return o, nil, badBody("no_settings", "the body names no setting to change; runtime settings are: %s", runtimeSettingNames())
	}
	return o, names, nil
}

func malformed(err error) *patchError {
	if se, ok := errors.AsType[*json.SyntaxError](err); ok {
		return badBody("malformed_json", "malformed JSON at byte %d: %v", se.Offset, err)
	}
	if errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) {
		return badBody("malformed_json", "malformed JSON: the body ends too soon")
	}
	return badBody("malformed_json", "malformed JSON: %v", err)
}
