package waitingroom

import (
	"encoding/json"
	"fmt"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"
)

// Kind is what a setting's value is, which decides how it is written in the
// Caddyfile, in JSON and in docs/configuration.md.
type Kind int

// The kinds of setting.
const (
	KindString   Kind = iota // text
	KindChoice               // one of a few words, listed in Choices
	KindInt                  // a whole number
	KindBool                 // on or off; a bare flag in the Caddyfile
	KindDuration             // Go duration syntax: "90s", "10m"
	KindTime                 // RFC 3339; empty for none
	KindRate                 // a JoinLimit: "<n>/<period> [burst <b>]"; "off" for none
	// KindPhrase is a few words with a grammar of their own ("pow 20"): the
	// Caddyfile line's arguments, one string in JSON; see ParseText.
	KindPhrase
)

// SettingDef describes one room setting. The table of them is settingDefs.
type SettingDef struct {
	// Name is the public name: the Caddyfile's, the JSON's and the admin API's.
	Name string
	// Arg is the Caddyfile argument as docs/configuration.md shows it, for text settings
	// (other kinds have a standard one; see Syntax).
	Arg string
	// Choices are the accepted words of a KindChoice setting.
	Choices []string
	// Default is the value a zero setting takes (typed as the Settings field),
	// or nil; DefaultDoc says in words what a setting without one defaults to.
	Default    any
	DefaultDoc string
	// Min and Max bound a number or duration (nanoseconds) when Max > 0.
	Min, Max int64
	// ZeroOff: zero is allowed beside Min–Max, and turns the setting off.
	ZeroOff bool
	// MaxLen bounds a text setting's length when > 0.
	MaxLen int
	// Rule is a check against other settings, in words for docs/configuration.md; the
	// check itself is in Settings.Validate.
	Rule string
	// Runtime: an admin may change it while the room runs (see Overrides).
	Runtime bool
	// RuntimeOnly: it is room state an admin sets, not configuration.
	RuntimeOnly bool
	// Doc is the one line docs/configuration.md shows.
	Doc string

	// field points into a Settings at this setting's field: a *string, *int,
	// *bool, *time.Duration, *time.Time or *QueueingMethod.
	field func(*Settings) any
	kind  Kind
	bit   uint64
}

// SettingDefs lists every room setting, in the order of docs/configuration.md.
func SettingDefs() []*SettingDef { return settingDefs }

// LookupSetting finds a room setting by its public name.
func LookupSetting(name string) (*SettingDef, bool) {
	d, ok := settingsByName[name]
	return d, ok
}

var settingsByName = make(map[string]*SettingDef, len(settingDefs))

// init types every entry from its field and checks the table, so that a
// mistake in it stops every test and every start rather than misbehaving.
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
		var s Settings
		switch d.field(&s).(type) {
		case *string:
			d.kind = KindString
		case *QueueingMethod:
			d.kind = KindChoice
		case *int:
			d.kind = KindInt
		case *bool:
			d.kind = KindBool
		case *time.Duration:
			d.kind = KindDuration
		case *time.Time:
			d.kind = KindTime
		case *JoinLimit:
			d.kind = KindRate
		case *Challenge:
			d.kind = KindPhrase
		default:
			panic(fmt.Sprintf("waitingroom: setting %s has a field of unsupported type %T", d.Name, d.field(&s)))
		}
		if (d.kind == KindChoice) != (len(d.Choices) > 0) {
			panic("waitingroom: setting " + d.Name + ": choices go with a choice field, and only there")
		}
		if d.Default != nil {
			var probe Settings
			if !d.Set(&probe, d.Default) {
				panic(fmt.Sprintf("waitingroom: setting %s: default %T does not fit its field", d.Name, d.Default))
			}
		}
	}
}

// Kind says what the setting's value is.
func (d *SettingDef) Kind() Kind { return d.kind }

// Get returns the setting's value in s, typed as its field is.
func (d *SettingDef) Get(s Settings) any {
	switch p := d.field(&s).(type) {
	case *string:
		return *p
	case *QueueingMethod:
		return *p
	case *int:
		return *p
	case *bool:
		return *p
	case *time.Duration:
		return *p
	case *time.Time:
		return *p
	case *JoinLimit:
		return *p
	case *Challenge:
		return *p
	}
	return nil
}

// Set stores v, typed as the field is (a choice may also be given as a
// string), in s; false if the type is wrong.
func (d *SettingDef) Set(s *Settings, v any) bool {
	switch p := d.field(s).(type) {
	case *string:
		x, ok := v.(string)
		*p = x
		return ok
	case *QueueingMethod:
		if x, ok := v.(string); ok { // as the configuration writes it
			v = QueueingMethod(x)
		}
		x, ok := v.(QueueingMethod)
		*p = x
		return ok
	case *int:
		x, ok := v.(int)
		*p = x
		return ok
	case *bool:
		x, ok := v.(bool)
		*p = x
		return ok
	case *time.Duration:
		x, ok := v.(time.Duration)
		*p = x
		return ok
	case *time.Time:
		x, ok := v.(time.Time)
		*p = x
		return ok
	case *JoinLimit:
		x, ok := v.(JoinLimit)
		*p = x
		return ok
	case *Challenge:
		if x, ok := v.(string); ok { // as the configuration writes it
			c, err := ParseChallenge(x)
			*p = c
			return err == nil
		}
		x, ok := v.(Challenge)
		*p = x
		return ok
	}
	return false
}

// ParseText sets a phrase setting (KindPhrase) from its words, as the
// Caddyfile and JSON write them, and says what is wrong with them if they do
// not parse.
func (d *SettingDef) ParseText(s *Settings, text string) error {
	p, ok := d.field(s).(*Challenge)
	if !ok {
		return settingErr(d.Name, "is not a phrase setting")
	}
	c, err := ParseChallenge(text)
	if err != nil {
		return settingErr(d.Name, "%v", err)
	}
	*p = c
	return nil
}

// copyField sets the setting in dst to its value in src.
func (d *SettingDef) copyField(dst, src *Settings) {
	switch p := d.field(dst).(type) {
	case *string:
		*p = *d.field(src).(*string)
	case *QueueingMethod:
		*p = *d.field(src).(*QueueingMethod)
	case *int:
		*p = *d.field(src).(*int)
	case *bool:
		*p = *d.field(src).(*bool)
	case *time.Duration:
		*p = *d.field(src).(*time.Duration)
	case *time.Time:
		*p = *d.field(src).(*time.Time)
	case *JoinLimit:
		*p = *d.field(src).(*JoinLimit)
	case *Challenge:
		*p = *d.field(src).(*Challenge)
	}
}

// IsZero reports whether the setting is unset (zero) in s.
func (d *SettingDef) IsZero(s Settings) bool { return d.isZero(&s) }

// isZero reports whether the setting is unset in s.
func (d *SettingDef) isZero(s *Settings) bool {
	switch p := d.field(s).(type) {
	case *string:
		return *p == ""
	case *QueueingMethod:
		return *p == ""
	case *int:
		return *p == 0
	case *bool:
		return !*p
	case *time.Duration:
		return *p == 0
	case *time.Time:
		return p.IsZero()
	case *JoinLimit:
		return p.IsZero()
	case *Challenge:
		return !p.On()
	}
	return true
}

// check returns what is wrong with the setting's own value in s, if anything:
// its bounds, length or choices. Rules between settings are Validate's.
func (d *SettingDef) check(s *Settings) error {
	switch p := d.field(s).(type) {
	case *int:
		if d.Max > 0 && (int64(*p) < d.Min || int64(*p) > d.Max) {
			return settingErr(d.Name, "must be between %d and %d, got %d", d.Min, d.Max, *p)
		}
	case *time.Duration:
		if d.ZeroOff && *p == 0 {
			return nil
		}
		if d.Max > 0 && (int64(*p) < d.Min || int64(*p) > d.Max) {
			off := ""
			if d.ZeroOff {
				off = " (or 0: off)"
			}
			return settingErr(d.Name, "must be between %s and %s%s, got %s",
				ShortDuration(time.Duration(d.Min)), ShortDuration(time.Duration(d.Max)), off, *p)
		}
	case *string:
		if err := CheckText(*p); err != nil {
			return settingErr(d.Name, "%v", err)
		}
		// Characters, as docs/configuration.md says, not bytes: a title in a script
		// of three bytes a character has the same room as one in ASCII.
		if n := utf8.RuneCountInString(*p); d.MaxLen > 0 && n > d.MaxLen {
			return settingErr(d.Name, "must be at most %d characters, got %d", d.MaxLen, n)
		}
	case *QueueingMethod:
		if !d.chosen(string(*p)) {
			return settingErr(d.Name, "must be %s, got %q", d.ChoiceList(), *p)
		}
	case *JoinLimit:
		if err := p.check(); err != nil {
			return settingErr(d.Name, "%v", err)
		}
	case *Challenge:
		return p.check(d.Name)
	}
	return nil
}

func (d *SettingDef) chosen(v string) bool {
	for _, c := range d.Choices {
		if v == c {
			return true
		}
	}
	return false
}

// ChoiceList writes the choices as a sentence does: "a, b or c".
func (d *SettingDef) ChoiceList() string {
	n := len(d.Choices)
	if n < 2 {
		return strings.Join(d.Choices, "")
	}
	return strings.Join(d.Choices[:n-1], ", ") + " or " + d.Choices[n-1]
}

// Limits says in words what values the setting takes beyond its kind, for the
// docs/configuration.md: its bounds, its length, its rule against other settings.
func (d *SettingDef) Limits() string {
	var parts []string
	switch {
	case d.Max > 0 && d.kind == KindDuration && d.ZeroOff:
		parts = append(parts, "0 (off) or "+ShortDuration(time.Duration(d.Min))+"–"+ShortDuration(time.Duration(d.Max)))
	case d.Max > 0 && d.kind == KindDuration:
		parts = append(parts, ShortDuration(time.Duration(d.Min))+"–"+ShortDuration(time.Duration(d.Max)))
	case d.Max > 0 && d.kind == KindPhrase:
		parts = append(parts, fmt.Sprintf("`<bits>` %d–%d", d.Min, d.Max))
	case d.Max > 0:
		parts = append(parts, groupThousands(d.Min)+"–"+groupThousands(d.Max))
	case d.kind == KindString && d.MaxLen > 0:
		parts = append(parts, fmt.Sprintf("one line of at most %d characters: no tab, line break or other control character", d.MaxLen))
	case d.kind == KindString:
		parts = append(parts, "one line: no tab, line break or other control character")
	case d.kind == KindChoice:
		parts = append(parts, "one of "+strings.Join(quoteAll(d.Choices), ", "))
	case d.kind == KindBool:
		parts = append(parts, "a flag: on when written (JSON `true`)")
	case d.kind == KindTime:
		parts = append(parts, "a time with its offset, such as `2026-12-01T10:00:00Z`")
	case d.kind == KindRate:
		parts = append(parts, joinLimitBounds)
	}
	if d.Rule != "" {
		parts = append(parts, d.Rule)
	}
	return strings.Join(parts, "; ")
}

func quoteAll(ss []string) []string {
	out := make([]string, len(ss))
	for i, s := range ss {
		out[i] = "`" + s + "`"
	}
	return out
}

// DefaultText says the default as docs/configuration.md shows it.
func (d *SettingDef) DefaultText() string {
	switch v := d.Default.(type) {
	case nil:
		return d.DefaultDoc
	case int:
		return strconv.Itoa(v)
	case time.Duration:
		return "`" + ShortDuration(v) + "`"
	default:
		return fmt.Sprintf("`%v`", v)
	}
}

// Syntax is the setting as written in a Caddyfile, such as
// "session_duration <d>" or "queue_all".
func (d *SettingDef) Syntax() string {
	switch d.kind {
	case KindChoice:
		return d.Name + " " + strings.Join(d.Choices, " | ")
	case KindInt:
		return d.Name + " <n>"
	case KindBool:
		return d.Name
	case KindDuration:
		return d.Name + " <d>"
	case KindTime:
		return d.Name + " <RFC 3339>"
	case KindRate:
		return d.Name + " <n>/<period> [burst <b>]"
	}
	arg := d.Arg
	if arg == "" {
		arg = "<text>"
	}
	return d.Name + " " + arg
}

// encode writes the setting's value in s as stored overrides and the admin
// API's PATCH take it: durations as "10m0s", times as RFC 3339 or "".
func (d *SettingDef) encode(s *Settings) ([]byte, error) {
	switch p := d.field(s).(type) {
	case *time.Duration:
		return json.Marshal(p.String())
	case *time.Time:
		if p.IsZero() {
			return []byte(`""`), nil
		}
		return json.Marshal(p.UTC().Format(time.RFC3339Nano))
	default:
		return json.Marshal(p)
	}
}

// decode reads the setting's value from JSON into s. A value of the wrong
// JSON type is a *json.UnmarshalTypeError for numbers, text and flags.
func (d *SettingDef) decode(s *Settings, raw []byte) error {
	switch p := d.field(s).(type) {
	case *time.Duration:
		var str string
		if err := json.Unmarshal(raw, &str); err != nil {
			return fmt.Errorf("duration must be a string such as \"10m\"")
		}
		v, err := time.ParseDuration(str)
		if err != nil {
			return fmt.Errorf("invalid duration %q", str)
		}
		*p = v
	case *time.Time:
		var str string
		if err := json.Unmarshal(raw, &str); err != nil {
			return fmt.Errorf("time must be an RFC 3339 string or \"\"")
		}
		if str == "" {
			*p = time.Time{}
			return nil
		}
		v, err := time.Parse(time.RFC3339, str)
		if err != nil {
			return fmt.Errorf("invalid RFC 3339 time %q", str)
		}
		*p = v
	default:
		return json.Unmarshal(raw, p)
	}
	return nil
}

// ShortDuration writes d as a Caddyfile would: "10m", "1h30m", "45s", rather
// than Go's "10m0s".
func ShortDuration(d time.Duration) string {
	s := d.String()
	if strings.HasSuffix(s, "m0s") {
		s = strings.TrimSuffix(s, "0s")
	}
	if strings.HasSuffix(s, "h0m") {
		s = strings.TrimSuffix(s, "0m")
	}
	return s
}

// groupThousands writes n with commas between groups of three digits.
func groupThousands(n int64) string {
	s := strconv.FormatInt(n, 10)
	for i := len(s) - 3; i > 0 && s[i-1] != '-'; i -= 3 {
		s = s[:i] + "," + s[i:]
	}
	return s
}
