package waitingroom

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strconv"
	"strings"
)

// Setting is one entry of the table of room settings (settingDefs): a field
// of Settings, reached as its value type, with what docs/configuration.md says of it.
type Setting struct {
	// Name is the public name: the Caddyfile's, the JSON's and the admin API's.
	Name string
	Bounds
	// DefaultDoc says in words what a setting without a default defaults to.
	DefaultDoc string
	// Rule is a check against other settings, in words for docs/configuration.md; the
	// check itself is in Settings.Validate.
	Rule string
	// Runtime: an admin may change it while the room runs (see Overrides).
	Runtime bool
	// RuntimeOnly: it is room state an admin sets, not configuration.
	RuntimeOnly bool
	// Doc is the one line docs/configuration.md shows.
	Doc string

	value   func(*Settings) Value
	isZero  func(*Settings) bool
	copy    func(dst, src *Settings)
	deflt   func(*Settings) // sets the default; nil without one
	defText string
	bit     uint64
}

type valuePtr[T any] interface {
	*T
	Value
}

// field completes the entry s for the Settings field that at points to, as a
// value of type T, which a zero field takes as its default unless def is
// zero itself.
func field[T comparable, P valuePtr[T]](s Setting, at func(*Settings) *T, def T) *Setting {
	var zero T
	s.value = func(x *Settings) Value { return P(at(x)) }
	s.isZero = func(x *Settings) bool { return *at(x) == zero }
	s.copy = func(dst, src *Settings) { *at(dst) = *at(src) }
	if def != zero {
		s.deflt = func(x *Settings) { *at(x) = def }
		text, _ := P(&def).MarshalText()
		s.defText = string(text)
	}
	return &s
}

// SettingDefs lists every room setting, in the order of docs/configuration.md.
func SettingDefs() []*Setting { return settingDefs }

// LookupSetting finds a room setting by its public name.
func LookupSetting(name string) (*Setting, bool) {
	d, ok := settingsByName[name]
	return d, ok
}

var settingsByName = make(map[string]*Setting, len(settingDefs))

func init() {
	if len(settingDefs) > 64 {
		panic("waitingroom: more than 64 settings; Overrides keeps one bit each")
	}
	for i, d := range settingDefs {
		if _, dup := settingsByName[d.Name]; dup || d.Name == "" {
			panic("waitingroom: setting " + strconv.Quote(d.Name) + " is unnamed or listed twice")
		}
		settingsByName[d.Name] = d
		d.bit = 1 << i
	}
}

// Value is the setting's field in s, as its value type.
func (d *Setting) Value(s *Settings) Value { return d.value(s) }

// IsZero reports whether the setting is unset (zero) in s.
func (d *Setting) IsZero(s Settings) bool { return d.isZero(&s) }

// Copy sets the setting in dst to its value in src.
func (d *Setting) Copy(dst, src *Settings) { d.copy(dst, src) }

// Notation says how the setting's value is written.
func (d *Setting) Notation() Notation { return NotationOf(d.value(&Settings{}), d.Bounds) }

// Check returns what is wrong with the setting's own value in s, if
// anything: its bounds, length or choices. Rules between settings are
// Validate's.
func (d *Setting) Check(s *Settings) error {
	if c, ok := d.value(s).(interface{ check(Bounds) error }); ok {
		if err := c.check(d.Bounds); err != nil {
			return settingErr(d.Name, "%v", err)
		}
	}
	return nil
}

// DecodeJSON reads the setting's value from JSON, as the admin API and stored
// overrides write it, into s (see DecodeValue).
func (d *Setting) DecodeJSON(s *Settings, raw []byte) error {
	return DecodeValue(d.value(s), d.Bounds, raw)
}

// Syntax is the setting as written in a Caddyfile, such as
// "session_duration <d>" or "queue_all".
func (d *Setting) Syntax() string { return strings.TrimSpace(d.Name + " " + d.Notation().Arg) }

// DefaultText says the default as docs/configuration.md shows it: a number bare, other
// values as code.
func (d *Setting) DefaultText() string {
	if d.defText == "" {
		return d.DefaultDoc
	}
	if _, err := strconv.Atoi(d.defText); err == nil {
		return d.defText
	}
	return "`" + d.defText + "`"
}

// LimitsText says in words what values the setting takes, for docs/configuration.md:
// its bounds or form, and its rule against other settings.
func (d *Setting) LimitsText() string {
	parts := []string{d.Notation().Limits}
	if d.Rule != "" {
		parts = append(parts, d.Rule)
	}
	return strings.Join(parts, "; ")
}

// EncodeSettings writes a JSON object of the settings in s that keep
// selects, in the table's order, in the admin API's notation.
func EncodeSettings(s *Settings, keep func(*Setting) bool) ([]byte, error) {
	var buf bytes.Buffer
	buf.WriteByte('{')
	for _, d := range settingDefs {
		if !keep(d) {
			continue
		}
		v, err := json.Marshal(d.value(s))
		if err != nil {
			return nil, fmt.Errorf("%s: %w", d.Name, err)
		}
		if buf.Len() > 1 {
			buf.WriteByte(',')
		}
		fmt.Fprintf(&buf, "%q:%s", d.Name, v)
	}
	buf.WriteByte('}')
	return buf.Bytes(), nil
}

// DecodeSettings reads what EncodeSettings writes into s: each setting that
// take selects and the object gives, but as null. It returns the settings it
// read. A name it does not know is left out, so that what a newer node
// wrote still reads here.
func DecodeSettings(b []byte, s *Settings, take func(*Setting) bool) ([]*Setting, error) {
	var fields map[string]json.RawMessage
	if err := json.Unmarshal(b, &fields); err != nil {
		return nil, err
	}
	var read []*Setting
	for _, d := range settingDefs {
		raw, ok := fields[d.Name]
		if !ok || !take(d) || string(raw) == "null" {
			continue
		}
		if err := d.DecodeJSON(s, raw); err != nil {
			return nil, fmt.Errorf("%s: %w", d.Name, err)
		}
		read = append(read, d)
	}
	return read, nil
}
