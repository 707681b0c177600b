package waitingroom

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"regexp"
	"slices"
	"strings"
	"time"
)

// Scheduled phases (docs/configuration.md, "Phases"): stretches of time in
// which some of the room's runtime settings take other values, such as a
// presale at a lower rate under another title. The effective settings at an
// instant are the room's (configuration and overrides), with the phase in
// force at that instant laid over them; the runtime switches (paused,
// sold_out), which no phase may set, stay on top. The instant is the one a
// node passes to the store with each call, as for event_start (see
// limitsAt), so every node switches at once. A switch changes the limits the
// store is called with, never an order key or a place.

// MaxPhases bounds a room's phases.
const MaxPhases = 8

// ScheduledPhase is one phase: from Start (included) until End (excluded),
// the settings it names override the room's.
type ScheduledPhase struct {
	Name       string
	Start, End time.Time
	// PrequeueStart opens the phase's own pre-queue, before Start (zero:
	// none), and ShuffleAtStart draws it at Start (phasequeue.go).
	PrequeueStart  time.Time
	ShuffleAtStart bool
	Settings       Overrides
}

// Active reports whether the phase is in force at now.
func (p ScheduledPhase) Active(now time.Time) bool {
	return !now.Before(p.Start) && now.Before(p.End)
}

// Phases are a room's phases, in the order of their start. The value is
// immutable and comparable, as a Settings field of the settings table must
// be; copies of a Settings share it.
type Phases struct {
	list *phaseList
	// unphased is set in settings a phase was laid over (see Settings.At):
	// the settings before it, so that the settings at another instant are
	// worked out from them, not over the phase.
	unphased *Settings
	// laid is the phase laid over them, in the list: settings already at
	// the phase in force are returned as they are, at no cost, on every
	// call a request makes within the phase.
	laid *ScheduledPhase
}

type phaseList struct {
	phases []ScheduledPhase
	// unknown are settings that phases name and this version does not know
	// (a newer node's may): kept out of the phases, and reported by
	// Validate, so that stored overrides stay readable.
	unknown []string
}

// NewPhases makes the phases of list, ordered by their start.
func NewPhases(list ...ScheduledPhase) Phases {
	if len(list) == 0 {
		return Phases{}
	}
	l := slices.Clone(list)
	slices.SortStableFunc(l, func(a, b ScheduledPhase) int { return a.Start.Compare(b.Start) })
	return Phases{list: &phaseList{phases: l}}
}

// List returns the phases, in the order of their start.
func (p Phases) List() []ScheduledPhase {
	if p.list == nil {
		return nil
	}
	return slices.Clone(p.list.phases)
}

// Len is the number of phases.
func (p Phases) Len() int {
	if p.list == nil {
		return 0
	}
	return len(p.list.phases)
}

// At returns the phase in force at now, and the next one to start after
// now; nil for none.
func (p Phases) At(now time.Time) (current, next *ScheduledPhase) {
	if p.list == nil {
		return nil, nil
	}
	for i := range p.list.phases {
		ph := p.list.phases[i]
		switch {
		case ph.Active(now):
			current = &ph
		case next == nil && now.Before(ph.Start):
			next = &ph
		}
	}
	return current, next
}

// active is the phase in force at now, in the list itself (not a copy: the
// list is never changed); nil for none.
func (p Phases) active(now time.Time) *ScheduledPhase {
	if p.list == nil {
		return nil
	}
	for i := range p.list.phases {
		if p.list.phases[i].Active(now) {
			return &p.list.phases[i]
		}
	}
	return nil
}

// Find returns the phase named name.
func (p Phases) Find(name string) (ScheduledPhase, bool) {
	if p.list != nil {
		for _, ph := range p.list.phases {
			if ph.Name == name {
				return ph, true
			}
		}
	}
	return ScheduledPhase{}, false
}

// NextSwitch is the first start or end of a phase after now; zero if none.
func (p Phases) NextSwitch(now time.Time) time.Time {
	var at time.Time
	if p.list == nil {
		return at
	}
	for _, ph := range p.list.phases {
		for _, t := range []time.Time{ph.Start, ph.End} {
			if t.After(now) && (at.IsZero() || t.Before(at)) {
				at = t
			}
		}
	}
	return at
}

// At returns the settings in effect at now: s with the phase in force at now
// laid over it. s may itself be the settings of another instant: the phase
// laid over them is taken off first. A room's view holds the settings of
// the instant it was made, and each store call takes its limits from the
// settings at the call's own instant (limitsAt), so that a switch falls at
// the same instant of the time passed to the store on every node.
func (s Settings) At(now time.Time) Settings {
	cur := s.Phases.active(now)
	if cur == s.Phases.laid {
		return s // the phase in force (or none) is the one laid over s
	}
	s = s.Unphased()
	if cur == nil {
		return s
	}
	base := s
	eff := cur.Settings.Apply(s)
	eff.Phases.unphased, eff.Phases.laid = &base, cur
	return eff
}

// configured is the phases as configured, also when a phase is laid over
// the settings that hold them (At): what Unphased().Phases is, without
// copying the settings, which polls would pay for.
func (p Phases) configured() Phases {
	if p.unphased != nil {
		return p.unphased.Phases
	}
	return p
}

// Unphased returns s without the phase laid over it, if one was.
func (s Settings) Unphased() Settings {
	if b := s.Phases.unphased; b != nil {
		return *b
	}
	return s
}

// WithPhase returns s with the named phase laid over it, whatever the time:
// the settings the phase will run under (a preview shows its page).
func (s Settings) WithPhase(name string) (Settings, bool) {
	s = s.Unphased()
	ph, ok := s.Phases.Find(name)
	if !ok {
		return s, false
	}
	base := s
	eff := ph.Settings.Apply(s)
	eff.Phases.unphased = &base
	return eff, true
}

// notInPhase are the runtime settings a phase may not set, and why.
var notInPhase = map[string]string{
	"phases":         "a phase cannot hold phases",
	"prequeue_start": "is the room's schedule, in which phases run: set it for the room",
	"event_start":    "is the room's schedule, in which phases run: set it for the room",
	"event_end":      "is the room's schedule, in which phases run: set it for the room",
}

// PhaseMaySet says why a phase may not set d, or nil when it may: any
// runtime setting but the runtime switches (paused, sold_out), the schedule
// and the phases themselves.
func PhaseMaySet(d *Setting) error {
	switch why, listed := notInPhase[d.Name]; {
	case !d.Runtime:
		return fmt.Errorf("%s cannot change while the room runs, so no phase can set it: set it for the room", d.Name)
	case d.RuntimeOnly:
		return fmt.Errorf("%s is a switch an admin throws, not a phase's setting", d.Name)
	case listed:
		return fmt.Errorf("%s %s", d.Name, why)
	}
	return nil
}

// phaseNamePattern is what a phase's name is made of: it appears in URLs
// (previews), events and the command line.
var phaseNamePattern = regexp.MustCompile(`^[a-z0-9_-]{1,32}$`)

// CheckPhaseName says what is wrong with a phase's name, if anything.
func CheckPhaseName(name string) error {
	if !phaseNamePattern.MatchString(name) {
		return fmt.Errorf("phase name %q: 1 to 32 of a-z, 0-9, _ and -", name)
	}
	return nil
}

// check holds the rules of the list itself: how many, names, times, no
// overlap. The settings each phase sets are checked by Settings.Validate,
// which sees the room's.
func (p Phases) check(Bounds) error {
	if p.list == nil {
		return nil
	}
	var errs []error
	if n := len(p.list.phases); n > MaxPhases {
		errs = append(errs, fmt.Errorf("at most %d phases, got %d", MaxPhases, n))
	}
	seen := map[string]bool{}
	for i, ph := range p.list.phases {
		if err := CheckPhaseName(ph.Name); err != nil {
			errs = append(errs, err)
		}
		if seen[ph.Name] {
			errs = append(errs, fmt.Errorf("phase %q: named twice", ph.Name))
		}
		seen[ph.Name] = true
		switch {
		case ph.Start.IsZero() || ph.End.IsZero():
			errs = append(errs, fmt.Errorf("phase %q: needs a start and an end", ph.Name))
		case !ph.Start.Before(ph.End):
			errs = append(errs, fmt.Errorf("phase %q: start must be before end", ph.Name))
		}
		if i > 0 {
			if prev := p.list.phases[i-1]; !prev.End.IsZero() && ph.Start.Before(prev.End) {
				errs = append(errs, fmt.Errorf("phase %q overlaps phase %q: it starts at %s, before %q ends at %s",
					ph.Name, prev.Name, rfc3339(ph.Start), prev.Name, rfc3339(prev.End)))
			}
		}
	}
	errs = append(errs, p.checkPrequeue()...)
	for _, u := range p.list.unknown {
		errs = append(errs, errors.New(u))
	}
	return errors.Join(errs...)
}

// validateIn checks each phase's settings as they would be in force: laid
// over s, they must validate as the room's own would. Run only when s
// validates without its phases, so that the room's own faults are told
// once.
func (p Phases) validateIn(s Settings) []error {
	var errs []error
	lanes := s.RoomLanes().On()
	s.Phases = Phases{}
	errs = append(errs, p.validatePrequeues(s, lanes)...)
	for _, ph := range p.List() {
		if m := ph.Settings.Values().QueueingMethod; ph.Settings.Has("queueing_method") && (m == Random) != (s.QueueingMethod == Random) {
			// A first-come place is its key, and the random method draws
			// everyone not yet drawn: a switch between the two, at the
			// phase's start or its end, would move fans already shown a
			// place (docs/configuration.md, "Phases").
			errs = append(errs, settingErr("phases", "phase %q: queueing_method %s: a phase cannot switch the room (%s) between first come and "+
				"draws, which would move fans already in line at the switch; make the room's own queueing_method random to run random phases",
				ph.Name, m, s.QueueingMethod))
		}
		if ph.Settings.Has("lanes") {
			// The room's lanes are the union of the room's and every
			// phase's, numbered once for the whole sale (Settings.RoomLanes).
			names := map[string]bool{GeneralLane: true}
			for _, l := range s.Lanes.List() {
				names[l.Name] = true
			}
			for _, other := range p.List() {
				for _, l := range other.Settings.Values().Lanes.List() {
					names[l.Name] = true
				}
			}
			if len(names) > MaxLanes {
				errs = append(errs, settingErr("phases", "phase %q: lanes: the room's and its phases' lanes together are %d, at most %d (general included)",
					ph.Name, len(names), MaxLanes))
			}
		}
		if err := ph.Settings.Apply(s).Validate(); err != nil {
			for _, e := range unjoin(err) {
				errs = append(errs, settingErr("phases", "phase %q: %v", ph.Name, e))
			}
		}
	}
	return errs
}

// unjoin splits an errors.Join into its errors.
func unjoin(err error) []error {
	if j, ok := err.(interface{ Unwrap() []error }); ok {
		return j.Unwrap()
	}
	return []error{err}
}

func rfc3339(t time.Time) string { return t.UTC().Format(time.RFC3339Nano) }

// phaseOwnKeys are a phase object's keys that are the phase's own, not
// settings it lays over the room's.
var phaseOwnKeys = map[string]bool{"name": true, "start": true, "end": true, "prequeue_start": true, "shuffle_at_start": true}

// MarshalJSON writes the phases as an array of objects: name, start, end,
// its pre-queue (prequeue_start, shuffle_at_start) if it has one, then the
// settings the phase sets, in the table's order and the admin API's
// notation.
func (p Phases) MarshalJSON() ([]byte, error) {
	var buf bytes.Buffer
	buf.WriteByte('[')
	for i, ph := range p.List() {
		if i > 0 {
			buf.WriteByte(',')
		}
		sets, err := json.Marshal(ph.Settings)
		if err != nil {
			return nil, fmt.Errorf("phase %q: %w", ph.Name, err)
		}
		fmt.Fprintf(&buf, `{"name":%q,"start":%q,"end":%q`, ph.Name, rfc3339(ph.Start), rfc3339(ph.End))
		if !ph.PrequeueStart.IsZero() {
			fmt.Fprintf(&buf, `,"prequeue_start":%q`, rfc3339(ph.PrequeueStart))
		}
		if ph.ShuffleAtStart {
			buf.WriteString(`,"shuffle_at_start":true`)
		}
		if inner := bytes.TrimSuffix(bytes.TrimPrefix(sets, []byte("{")), []byte("}")); len(inner) > 0 {
			buf.WriteByte(',')
			buf.Write(inner)
		}
		buf.WriteByte('}')
	}
	buf.WriteByte(']')
	return buf.Bytes(), nil
}

// UnmarshalJSON reads what MarshalJSON writes. A setting a phase may not set
// is an error naming the phase; one this version does not know is kept for
// Validate to report (see phaseList).
func (p *Phases) UnmarshalJSON(b []byte) error {
	var objs []map[string]json.RawMessage
	if err := json.Unmarshal(b, &objs); err != nil {
		return errors.New(`must be an array of phases, such as [{"name":"presale","start":"2026-12-01T10:00:00Z","end":"2026-12-01T11:00:00Z","new_users_per_minute":100}]`)
	}
	var list []ScheduledPhase
	var unknown []string
	for i, obj := range objs {
		var ph ScheduledPhase
		if err := json.Unmarshal(obj["name"], &ph.Name); err != nil || ph.Name == "" {
			return fmt.Errorf("phase %d: needs a name (a string)", i+1)
		}
		for _, end := range []struct {
			key string
			at  *time.Time
		}{{"start", &ph.Start}, {"end", &ph.End}} {
			raw, ok := obj[end.key]
			if !ok {
				return fmt.Errorf("phase %q: needs %s", ph.Name, end.key)
			}
			var t Time
			if err := json.Unmarshal(raw, &t); err != nil {
				return fmt.Errorf("phase %q: %s: %v", ph.Name, end.key, err)
			}
			*end.at = time.Time(t)
		}
		if raw, ok := obj["prequeue_start"]; ok {
			var t Time
			if err := json.Unmarshal(raw, &t); err != nil {
				return fmt.Errorf("phase %q: prequeue_start: %v", ph.Name, err)
			}
			ph.PrequeueStart = time.Time(t)
		}
		if raw, ok := obj["shuffle_at_start"]; ok {
			if err := json.Unmarshal(raw, &ph.ShuffleAtStart); err != nil {
				return fmt.Errorf("phase %q: shuffle_at_start: must be true or false", ph.Name)
			}
		}
		names := make([]string, 0, len(obj))
		for name := range obj {
			if !phaseOwnKeys[name] {
				names = append(names, name)
			}
		}
		slices.Sort(names)
		for _, name := range names {
			d, known := LookupSetting(name)
			if !known {
				unknown = append(unknown, fmt.Sprintf("phase %q: %q is not a setting", ph.Name, name))
				continue
			}
			if err := PhaseMaySet(d); err != nil {
				return fmt.Errorf("phase %q: %v", ph.Name, err)
			}
			one, err := DecodeOverride(name, obj[name])
			if err != nil {
				return fmt.Errorf("phase %q: %s: %v", ph.Name, name, err)
			}
			ph.Settings = ph.Settings.Merge(one)
		}
		list = append(list, ph)
	}
	*p = NewPhases(list...)
	if len(unknown) > 0 {
		if p.list == nil {
			p.list = &phaseList{}
		}
		p.list.unknown = unknown
	}
	return nil
}

// MarshalText writes the phases as their JSON, and none as "".
func (p Phases) MarshalText() ([]byte, error) {
	if p.list == nil {
		return nil, nil
	}
	return p.MarshalJSON()
}

// UnmarshalText reads the JSON array (the command line's form); "" is none.
func (p *Phases) UnmarshalText(b []byte) error {
	if len(bytes.TrimSpace(b)) == 0 {
		*p = Phases{}
		return nil
	}
	return p.UnmarshalJSON(b)
}

func (Phases) notation(Bounds) Notation {
	return Notation{
		Arg:   "<name> { start <RFC 3339>; end <RFC 3339>; [prequeue_start <RFC 3339>; shuffle_at_start;] <setting> <value>... }",
		CLI:   `'[{"name":"presale","start":"<RFC 3339>","end":"<RFC 3339>","<setting>":<value>}]'`,
		Note:  "the whole list; empty (<setting>=) removes every phase",
		JSON:  `an array of phases, such as [{"name":"presale","start":"2026-12-01T10:00:00Z","end":"2026-12-01T11:00:00Z","new_users_per_minute":100}]`,
		Patch: "(the whole list, as an array of `{\"name\", \"start\", \"end\", <setting>: <value>...}`; `[]` removes them)",
		Limits: fmt.Sprintf("at most %d, names of `a-z`, `0-9`, `_`, `-`, each once; start before end; none overlapping; "+
			"any runtime setting but `paused`, `sold_out` and the schedule; a pre-queue (`prequeue_start`, `shuffle_at_start`) in first-come rooms "+
			"without lanes, opening after the previous phase's start", MaxPhases),
	}
}

// PhaseSummary says a phase in a few words, for logs and the command line:
// its name and times.
func PhaseSummary(p *ScheduledPhase) string {
	if p == nil {
		return "none"
	}
	return p.Name + " " + strings.Join([]string{rfc3339(p.Start), rfc3339(p.End)}, " to ")
}
