package waitingroom

import (
	"encoding/json"
	"fmt"
	"time"
)

// Overrides are runtime changes an admin made to a room's settings. They are kept
// in the store with a version, so every node serving the room applies the same
// ones; a nil field leaves the configured value alone.
type Overrides struct {
	Title             *string         `json:"title,omitempty"`
	NewUsersPerMinute *int            `json:"new_users_per_minute,omitempty"`
	TotalActiveUsers  *int            `json:"total_active_users,omitempty"`
	SessionDuration   *Duration       `json:"session_duration,omitempty"`
	QueueingMethod    *QueueingMethod `json:"queueing_method,omitempty"`
	QueueAll          *bool           `json:"queue_all,omitempty"`
	PrequeueStart     *OptionalTime   `json:"prequeue_start,omitempty"`
	EventStart        *OptionalTime   `json:"event_start,omitempty"`
	EventEnd          *OptionalTime   `json:"event_end,omitempty"`
	Paused            *bool           `json:"paused,omitempty"`
	SoldOut           *bool           `json:"sold_out,omitempty"`
}

// Apply returns s with the overrides laid over it.
func (o Overrides) Apply(s Settings) Settings {
	if o.Title != nil {
		s.Title = *o.Title
	}
	if o.NewUsersPerMinute != nil {
		s.NewUsersPerMinute = *o.NewUsersPerMinute
	}
	if o.TotalActiveUsers != nil {
		s.TotalActiveUsers = *o.TotalActiveUsers
	}
	if o.SessionDuration != nil {
		s.SessionDuration = time.Duration(*o.SessionDuration)
	}
	if o.QueueingMethod != nil {
		s.QueueingMethod = *o.QueueingMethod
	}
	if o.QueueAll != nil {
		s.QueueAll = *o.QueueAll
	}
	if o.PrequeueStart != nil {
		s.PrequeueStart = o.PrequeueStart.Time
	}
	if o.EventStart != nil {
		s.EventStart = o.EventStart.Time
	}
	if o.EventEnd != nil {
		s.EventEnd = o.EventEnd.Time
	}
	if o.Paused != nil {
		s.Paused = *o.Paused
	}
	if o.SoldOut != nil {
		s.SoldOut = *o.SoldOut
	}
	return s
}

// Merge lays patch over o: fields set in patch win.
func (o Overrides) Merge(patch Overrides) Overrides {
	if patch.Title != nil {
		o.Title = patch.Title
	}
	if patch.NewUsersPerMinute != nil {
		o.NewUsersPerMinute = patch.NewUsersPerMinute
	}
	if patch.TotalActiveUsers != nil {
		o.TotalActiveUsers = patch.TotalActiveUsers
	}
	if patch.SessionDuration != nil {
		o.SessionDuration = patch.SessionDuration
	}
	if patch.QueueingMethod != nil {
		o.QueueingMethod = patch.QueueingMethod
	}
	if patch.QueueAll != nil {
		o.QueueAll = patch.QueueAll
	}
	if patch.PrequeueStart != nil {
		o.PrequeueStart = patch.PrequeueStart
	}
	if patch.EventStart != nil {
		o.EventStart = patch.EventStart
	}
	if patch.EventEnd != nil {
		o.EventEnd = patch.EventEnd
	}
	if patch.Paused != nil {
		o.Paused = patch.Paused
	}
	if patch.SoldOut != nil {
		o.SoldOut = patch.SoldOut
	}
	return o
}

// Duration is a time.Duration that reads and writes JSON as "90s" or "10m".
type Duration time.Duration

// MarshalJSON writes the duration in Go syntax.
func (d Duration) MarshalJSON() ([]byte, error) { return json.Marshal(time.Duration(d).String()) }

// UnmarshalJSON reads a duration string such as "10m".
func (d *Duration) UnmarshalJSON(b []byte) error {
	var s string
	if err := json.Unmarshal(b, &s); err != nil {
		return fmt.Errorf("duration must be a string such as \"10m\"")
	}
	v, err := time.ParseDuration(s)
	if err != nil {
		return fmt.Errorf("invalid duration %q", s)
	}
	*d = Duration(v)
	return nil
}

// OptionalTime is an RFC 3339 time in an override; the empty string clears the
// configured time (for example, to remove a scheduled end).
type OptionalTime struct{ time.Time }

// MarshalJSON writes RFC 3339, or "" for the zero time.
func (t OptionalTime) MarshalJSON() ([]byte, error) {
	if t.IsZero() {
		return []byte(`""`), nil
	}
	return json.Marshal(t.UTC().Format(time.RFC3339Nano))
}

// UnmarshalJSON reads RFC 3339 or "".
func (t *OptionalTime) UnmarshalJSON(b []byte) error {
	var s string
	if err := json.Unmarshal(b, &s); err != nil {
		return fmt.Errorf("time must be an RFC 3339 string or \"\"")
	}
	if s == "" {
		t.Time = time.Time{}
		return nil
	}
	v, err := time.Parse(time.RFC3339, s)
	if err != nil {
		return fmt.Errorf("invalid RFC 3339 time %q", s)
	}
	t.Time = v
	return nil
}
