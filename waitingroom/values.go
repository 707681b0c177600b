package waitingroom

import (
	"encoding"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"
)

// Value is what a setting holds: a type that reads and writes itself as
// text, the notation of the Caddyfile, the command line and (as a JSON
// string, but for numbers and flags) the admin API. A Settings field of a
// plain Go type is reached as its value type by a pointer conversion, such as
// (*Duration)(&s.SessionDuration). A value type may also check its bounds
// (a check(Bounds) error method) and say how it is written (a
// notation(Bounds) Notation method); see docs/ARCHITECTURE.md, "Settings".
type Value interface {
	encoding.TextMarshaler
	encoding.TextUnmarshaler
}

// Bounds bound a setting's value, as its table entry gives them.
type Bounds struct {
	// Min and Max bound a number, a duration (in nanoseconds) or the bits of a
	// challenge, when Max > 0.
	Min, Max int64
	// ZeroOff: zero is allowed beside Min–Max, and turns the setting off.
	ZeroOff bool
	// MaxLen bounds text, in characters, when > 0.
	MaxLen int
}

// Notation says how a value is written, for the settings table (docs/configuration.md), the command
// line's help and the admin API's errors.
type Notation struct {
	Arg    string // the Caddyfile's argument, such as "<d>"; "" for a bare flag
	Words  bool   // the argument is several words, joined by one space
	Limits string // the values it takes, in words
	CLI    string // the command line's form, when not Arg
	Note   string // the command line's note; <setting> stands for the name
	JSON   string // what a PATCH must give, when not "a string"
	Patch  string // docs/configuration.md's note on its PATCH form
}

// NotationOf is v's notation under l; a value type without one is written
// "<value>".
func NotationOf(v Value, l Bounds) Notation {
	n := Notation{Arg: "<value>"}
	if x, ok := v.(interface{ notation(Bounds) Notation }); ok {
		n = x.notation(l)
	}
	if n.CLI == "" {
		n.CLI = n.Arg
	}
	if n.JSON == "" {
		n.JSON = "a string"
	}
	return n
}

// DecodeValue reads v from JSON, as the admin API writes it. A value of the
// wrong JSON type is told what v takes under l.
func DecodeValue(v Value, l Bounds, raw []byte) error {
	err := json.Unmarshal(raw, v)
	if _, ok := errors.AsType[*json.UnmarshalTypeError](err); ok {
		return errors.New("must be " + NotationOf(v, l).JSON)
	}
	return err
}

// parseInto sets *v to what parse reads from b, and leaves it alone when
// parse refuses b: the UnmarshalText of a value type with a Parse function.
func parseInto[T any](v *T, b []byte, parse func(string) (T, error)) error {
	x, err := parse(string(b))
	if err == nil {
		*v = x
	}
	return err
}

// Text is one line of text: valid UTF-8 without control characters (see
// CheckText).
type Text string

func (t Text) MarshalText() ([]byte, error) { return []byte(t), nil }

func (t *Text) UnmarshalText(b []byte) error {
	if err := CheckText(string(b)); err != nil {
		return err
	}
	*t = Text(b)
	return nil
}

// UnmarshalJSON reads strictly: encoding/json would turn broken text into
// U+FFFD (see DecodeText).
func (t *Text) UnmarshalJSON(raw []byte) error {
	s, err := DecodeText(raw)
	*t = Text(s)
	return err
}

func (t Text) check(l Bounds) error {
	if err := CheckText(string(t)); err != nil {
		return err
	}
	// Characters, as docs/configuration.md says, not bytes: a title in a script of
	// three bytes a character has the same room as one in ASCII.
	if n := utf8.RuneCountInString(string(t)); l.MaxLen > 0 && n > l.MaxLen {
		return fmt.Errorf("must be at most %d characters, got %d", l.MaxLen, n)
	}
	return nil
}

func (Text) notation(l Bounds) Notation {
	at := ""
	if l.MaxLen > 0 {
		at = fmt.Sprintf(" of at most %d characters", l.MaxLen)
	}
	return Notation{Arg: "<text>", Note: "one line",
		Limits: "one line" + at + ": no tab, line break or other control character"}
}

// Count is a whole number; JSON writes it as a number.
type Count int

func (c Count) MarshalText() ([]byte, error) { return strconv.AppendInt(nil, int64(c), 10), nil }

func (c *Count) UnmarshalText(b []byte) error {
	n, err := strconv.Atoi(string(b))
	if err != nil {
		return fmt.Errorf("%q is not a whole number", b)
	}
	*c = Count(n)
	return nil
}

func (c Count) MarshalJSON() ([]byte, error)    { return c.MarshalText() }
func (c *Count) UnmarshalJSON(raw []byte) error { return json.Unmarshal(raw, (*int)(c)) }

func (c Count) check(l Bounds) error {
	if l.Max > 0 && (int64(c) < l.Min || int64(c) > l.Max) {
		return fmt.Errorf("must be between %d and %d, got %d", l.Min, l.Max, c)
	}
	return nil
}

func (Count) notation(l Bounds) Notation {
	n := Notation{Arg: "<n>", JSON: "a whole number"}
	if l.Max > 0 {
		n.Limits = groupThousands(l.Min) + "–" + groupThousands(l.Max)
	}
	return n
}

// Flag is on or off: a bare word in the Caddyfile, true or false elsewhere.
type Flag bool

func (f Flag) MarshalText() ([]byte, error) { return strconv.AppendBool(nil, bool(f)), nil }

func (f *Flag) UnmarshalText(b []byte) error {
	v, err := strconv.ParseBool(string(b))
	if err != nil {
		return fmt.Errorf("%q is not true or false", b)
	}
	*f = Flag(v)
	return nil
}

func (f Flag) MarshalJSON() ([]byte, error)    { return f.MarshalText() }
func (f *Flag) UnmarshalJSON(raw []byte) error { return json.Unmarshal(raw, (*bool)(f)) }

func (Flag) notation(Bounds) Notation {
	return Notation{CLI: "true|false", JSON: "true or false", Limits: "a flag: on when written (JSON `true`)"}
}

// Duration is written as the Caddyfile does: "90s", "10m", "1h30m". It may
// start with days, as Caddy's durations may: "1d12h".
type Duration time.Duration

func (d Duration) MarshalText() ([]byte, error) { return []byte(ShortDuration(time.Duration(d))), nil }

func (d *Duration) UnmarshalText(b []byte) error {
	s, days, dayErr := string(b), 0.0, error(nil)
	if n, rest, ok := strings.Cut(s, "d"); ok {
		if s = rest; s == "" {
			s = "0s"
		}
		days, dayErr = strconv.ParseFloat(n, 64)
	}
	v, err := time.ParseDuration(s)
	if err != nil || dayErr != nil || days < 0 || days > 1e4 || math.IsNaN(days) {
		return fmt.Errorf("%q is not a duration such as \"10m\"", b)
	}
	*d = Duration(v + time.Duration(days*float64(24*time.Hour)))
	return nil
}

func (d Duration) check(l Bounds) error {
	if l.Max == 0 || l.ZeroOff && d == 0 || int64(d) >= l.Min && int64(d) <= l.Max {
		return nil
	}
	off := ""
	if l.ZeroOff {
		off = " (or 0: off)"
	}
	return fmt.Errorf("must be between %s%s, got %s", durationRange(l, " and "), off, time.Duration(d))
}

func durationRange(l Bounds, sep string) string {
	return ShortDuration(time.Duration(l.Min)) + sep + ShortDuration(time.Duration(l.Max))
}

func (Duration) notation(l Bounds) Notation {
	n := Notation{Arg: "<d>", Note: "such as 15m", Patch: "(`\"15m\"`)", Limits: durationRange(l, "–")}
	if l.ZeroOff {
		n.Note += "; 0s turns it off"
		n.Limits = "0 (off) or " + n.Limits
	}
	return n
}

// Time is an RFC 3339 time; "" is none. It is written in UTC.
type Time time.Time

func (t Time) MarshalText() ([]byte, error) {
	if time.Time(t).IsZero() {
		return nil, nil
	}
	return []byte(time.Time(t).UTC().Format(time.RFC3339Nano)), nil
}

func (t *Time) UnmarshalText(b []byte) error {
	if len(b) == 0 {
		*t = Time{}
		return nil
	}
	v, err := time.Parse(time.RFC3339, string(b))
	if err != nil {
		return fmt.Errorf("%q is not an RFC 3339 time such as 2026-12-01T10:00:00Z", b)
	}
	*t = Time(v)
	return nil
}

func (Time) notation(Bounds) Notation {
	return Notation{Arg: "<RFC 3339>", Note: "empty (<setting>=) clears it", Patch: "(RFC 3339; `\"\"` clears)",
		Limits: "a time with its offset, such as `2026-12-01T10:00:00Z`"}
}

// queueingMethods are the methods in the order docs/configuration.md gives them.
var queueingMethods = []string{string(FIFO), string(Random), string(Passthrough), string(Reject)}

func (m QueueingMethod) MarshalText() ([]byte, error) { return []byte(m), nil }

// UnmarshalText takes a method, or "" for the default.
func (m *QueueingMethod) UnmarshalText(b []byte) error {
	v := QueueingMethod(b)
	if v != "" && !v.Valid() {
		return v.check(Bounds{})
	}
	*m = v
	return nil
}

func (m QueueingMethod) check(Bounds) error {
	if !m.Valid() {
		n := len(queueingMethods)
		return fmt.Errorf("must be %s or %s, got %q", strings.Join(queueingMethods[:n-1], ", "), queueingMethods[n-1], string(m))
	}
	return nil
}

func (QueueingMethod) notation(Bounds) Notation {
	return Notation{Arg: strings.Join(queueingMethods, " | "), CLI: strings.Join(queueingMethods, "|"),
		Patch:  "(`" + strings.Join(queueingMethods, "`, `") + "`)",
		Limits: "one of `" + strings.Join(queueingMethods, "`, `") + "`"}
}

func (l JoinLimit) check(Bounds) error { return l.bounds() }

func (JoinLimit) notation(Bounds) Notation {
	return Notation{Arg: "<n>/<period> [burst <b>]", Words: true, Limits: joinLimitBounds,
		CLI: "'<n>/<period> [burst <b>]'|off", JSON: `a string such as "20/m burst 40", or "off"`,
		Patch: "(`\"20/m burst 40\"`; `\"off\"` removes it)"}
}

func (c Challenge) check(l Bounds) error {
	if c.PoWBits < 0 {
		return fmt.Errorf("pow bits cannot be negative")
	}
	if c.On() && (int64(c.PoWBits) < l.Min || int64(c.PoWBits) > l.Max) {
		return fmt.Errorf("pow takes %d to %d bits, got %d", l.Min, l.Max, c.PoWBits)
	}
	return nil
}

func (Challenge) notation(l Bounds) Notation {
	return Notation{Arg: "pow [<bits>] | off", Words: true, CLI: "pow|'pow <bits>'|off",
		Limits: fmt.Sprintf("`<bits>` %d–%d", l.Min, l.Max)}
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
