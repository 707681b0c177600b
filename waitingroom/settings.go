package waitingroom

import (
	"errors"
	"fmt"
	"regexp"
	"time"
)

// QueueingMethod says how a room orders and admits visitors.
type QueueingMethod string

const (
	// FIFO admits visitors in the order they arrived (after any fair draw).
	FIFO QueueingMethod = "fifo"
	// Passthrough lets everyone through without a queue; passes are still issued.
	Passthrough QueueingMethod = "passthrough"
	// Reject turns new visitors away with the room's closed page; sessions already
	// admitted continue.
	Reject QueueingMethod = "reject"
	// Random admits waiting visitors in a random order: each admission batch is a
	// fresh fair draw over everyone waiting at that moment.
	Random QueueingMethod = "random"
)

// Valid reports whether m is a known method.
func (m QueueingMethod) Valid() bool {
	switch m {
	case FIFO, Passthrough, Reject, Random:
		return true
	}
	return false
}

// Defaults for settings the operator leaves out.
const (
	DefaultNewUsersPerMinute = 200
	DefaultTotalActiveUsers  = 200
	DefaultSessionDuration   = 10 * time.Minute
	DefaultAdmissionGrace    = 30 * time.Second
	DefaultTicketLifetime    = 12 * time.Hour
	DefaultReturnWindow      = 2 * time.Minute
	// DefaultWaitingIdleTimeout is six times the longest a waiting page waits
	// between two polls: a fan who lost a few polls to a bad connection is
	// still counted.
	DefaultWaitingIdleTimeout = 2 * time.Minute
)

// Settings are everything that governs a room. The configuration gives a room
// its Settings; an admin may override some of them at runtime (see Overrides).
type Settings struct {
	// Title names the event on the waiting page.
	Title string `json:"title,omitempty"`
	// NewUsersPerMinute is the admission rate: how many waiting visitors may be let
	// in per minute, smoothed per second.
	NewUsersPerMinute int `json:"new_users_per_minute"`
	// TotalActiveUsers caps the visitors holding a live session at once.
	TotalActiveUsers int `json:"total_active_users"`
	// SessionDuration is how long a pass is valid once a visitor is admitted.
	SessionDuration time.Duration `json:"session_duration"`
	// QueueingMethod is fifo, random, passthrough or reject.
	QueueingMethod QueueingMethod `json:"queueing_method"`
	// QueueAll holds everyone in the queue: nobody is admitted.
	QueueAll bool `json:"queue_all,omitempty"`
	// PrequeueStart opens the pre-queue: from then until EventStart visitors register.
	PrequeueStart time.Time `json:"prequeue_start,omitzero"`
	// EventStart is when admission begins. Zero: the room is open now.
	EventStart time.Time `json:"event_start,omitzero"`
	// EventEnd closes the room. Zero: it never closes on its own.
	EventEnd time.Time `json:"event_end,omitzero"`
	// ShuffleAtEventStart orders the pre-queue by a fair, verifiable random draw.
	ShuffleAtEventStart bool `json:"shuffle_at_event_start,omitempty"`
	// AdmissionGrace is how long an admitted visitor has to claim their session
	// before the slot is counted as abandoned and freed.
	AdmissionGrace time.Duration `json:"admission_grace,omitempty"`
	// ReturnWindow is how long after their grace ended a visitor whose
	// admission lapsed unclaimed may still come back at the front. After it
	// their turn has passed and they rejoin at the back, so an early ticket
	// cannot be banked and cashed in ahead of the line later.
	ReturnWindow time.Duration `json:"return_window,omitempty"`
	// WaitingIdleTimeout is how long a waiting place may go unseen (no poll,
	// no page, no live WebSocket) before it counts as a ghost: left out of
	// every position and skipped by the controller without a slot.
	WaitingIdleTimeout time.Duration `json:"waiting_idle_timeout,omitempty"`
	// SessionIdleTimeout ends a session that sent no request through the room
	// for this long, freeing its slot. Zero: off (a session lasts its
	// SessionDuration).
	SessionIdleTimeout time.Duration `json:"session_idle_timeout,omitempty"`
	// TicketLifetime is how long a ticket stays valid after it was last seen.
	TicketLifetime time.Duration `json:"ticket_lifetime,omitempty"`
	// Challenge is what a newcomer must solve before a place is made for
	// them: nothing (off), or a proof of work of a number of bits.
	Challenge Challenge `json:"challenge,omitzero"`
	// Phases are the room's scheduled phases, each overriding some runtime
	// settings while it is in force (see At).
	Phases Phases `json:"phases,omitzero"`
	// Paused stops admission; waiting visitors keep their place.
	Paused bool `json:"paused,omitempty"`
	// JoinLimit caps the new places one client address may take, counted
	// for every node sharing the store; zero is no limit.
	JoinLimit JoinLimit `json:"join_limit,omitzero"`
	// SoldOut shows the sold-out page to everyone waiting and to new visitors.
	SoldOut bool `json:"sold_out,omitempty"`
	// Waitlist keeps the line at sold out: fans keep their places on a
	// waitlist and are let in, in order, as units come back
	// (docs/waitlist.md).
	Waitlist bool `json:"waitlist,omitempty"`
	// RequeueOnOriginError requeues an admitted fan whose request the origin
	// fails (5xx, upstream timeout), at most this many times a ticket, which
	// also bounds the origin's retry command (once while 0). Zero: off.
	RequeueOnOriginError int `json:"requeue_on_origin_error,omitempty"`
	// CodesRequired gives places to holders of an access code only.
	CodesRequired bool `json:"codes_required,omitempty"`
	// Lanes are the priority lanes of the line and their weights (lanes.go);
	// zero: one line.
	Lanes Lanes `json:"lanes,omitzero"`
}

// WithDefaults fills in zero values that have a default (see settingDefs).
func (s Settings) WithDefaults() Settings {
	for _, d := range settingDefs {
		if d.deflt != nil && d.isZero(&s) {
			d.deflt(&s)
		}
	}
	return s
}

// Upper bounds that keep arithmetic and memory sane whatever an admin types.
const (
	maxRate    = 10_000_000
	maxActive  = 10_000_000
	maxSession = 24 * time.Hour
)

// SettingError names the setting that is wrong, so that an operator reading
// `foyer validate` output knows what to fix.
type SettingError struct {
	Setting string
	Problem string
}

func (e *SettingError) Error() string { return e.Setting + ": " + e.Problem }

func settingErr(name, format string, args ...any) error {
	return &SettingError{Setting: name, Problem: fmt.Sprintf(format, args...)}
}

// Validate checks settings after defaults were applied: each setting's own
// limits as settingDefs gives them, then the rules between settings.
func (s Settings) Validate() error {
	var errs []error
	for _, d := range settingDefs {
		if err := d.Check(&s); err != nil {
			errs = append(errs, err)
		}
	}
	if !s.PrequeueStart.IsZero() && s.EventStart.IsZero() {
		errs = append(errs, settingErr("prequeue_start", "needs event_start"))
	}
	if !s.PrequeueStart.IsZero() && !s.EventStart.IsZero() && !s.PrequeueStart.Before(s.EventStart) {
		errs = append(errs, settingErr("prequeue_start", "must be before event_start"))
	}
	if !s.EventEnd.IsZero() && !s.EventStart.IsZero() && !s.EventStart.Before(s.EventEnd) {
		errs = append(errs, settingErr("event_end", "must be after event_start"))
	}
	if s.ShuffleAtEventStart && s.EventStart.IsZero() {
		errs = append(errs, settingErr("shuffle_at_event_start", "needs event_start"))
	}
	if s.Phases.Len() > 0 && len(errs) == 0 {
		errs = append(errs, s.Phases.validateIn(s)...)
	}
	if s.RoomLanes().On() && s.drawn() {
		// A draw places fans anew; lanes keep each lane first come, first
		// served (docs/line.md, "Priority lanes").
		errs = append(errs, settingErr("lanes", "needs queueing_method fifo without shuffle_at_event_start"))
	}
	if s.Lanes.On() && s.Waitlist {
		// The waitlist lets places in by the one line's order, and tells a
		// pass it came from the waitlist by its place (docs/waitlist.md).
		errs = append(errs, settingErr("waitlist", "needs one line: not with lanes"))
	}
	if s.Waitlist && s.QueueingMethod == Random {
		// The seed is public once the room is sold out (docs/fairness.md):
		// later rolling draws could be computed, and joins timed to land
		// early in them.
		errs = append(errs, settingErr("waitlist", "needs queueing_method fifo: the draw's seed is public at sold out"))
	}
	return errors.Join(errs...)
}

var roomIDPattern = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9_.-]{0,63}$`)

// ValidRoomID reports whether id can name a room: 1 to 64 letters, digits, '_', '.'
// or '-', starting with a letter or digit. Room IDs appear in store keys, URLs and
// pass audiences, so they are kept plain.
func ValidRoomID(id string) bool { return roomIDPattern.MatchString(id) }
