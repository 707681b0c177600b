package waitingroom

import (
	"strconv"
	"time"
)

// settingDefs describes every room setting once: its public name, its field
// in Settings as a value type (values.go), its default and limits, whether an
// admin may change it while the room runs, and the line docs/configuration.md
// shows for it. Defaults, validation of limits, runtime overrides, the admin API and the
// command line all read this table, and the gateway builds its Caddyfile
// parser, its JSON and the settings table of docs/configuration.md from it, so a new setting
// is one entry here plus its field in Settings. The order is the order of
// stored overrides and of the admin API's view, and docs/configuration.md's unless the
// gateway places a setting elsewhere.
var settingDefs = []*Setting{
	field(Setting{
		Name: "title", Bounds: Bounds{MaxLen: 200}, Runtime: true,
		Doc: "the event's name on the waiting page",
	}, func(s *Settings) *Text { return (*Text)(&s.Title) }, ""),
	field(Setting{
		Name: "new_users_per_minute", Runtime: true,
		Bounds: Bounds{Min: 1, Max: maxRate},
		Doc:    "admission rate, smoothed per second",
	}, func(s *Settings) *Count { return (*Count)(&s.NewUsersPerMinute) }, DefaultNewUsersPerMinute),
	field(Setting{
		Name: "total_active_users", Runtime: true,
		Bounds: Bounds{Min: 1, Max: maxActive},
		Doc:    "cap on fans holding a session at once",
	}, func(s *Settings) *Count { return (*Count)(&s.TotalActiveUsers) }, DefaultTotalActiveUsers),
	field(Setting{
		Name: "session_duration", Runtime: true,
		Bounds: Bounds{Min: int64(time.Minute), Max: int64(maxSession)},
		Doc:    "how long a pass lasts once admitted",
	}, func(s *Settings) *Duration { return (*Duration)(&s.SessionDuration) }, Duration(DefaultSessionDuration)),
	field(Setting{
		Name: "queueing_method", Runtime: true,
		Doc: "fifo: first come, first served; random: whenever a group is in, everyone waiting " +
			"is placed by a fresh fair draw; passthrough lets all in with a pass; reject shows the closed page",
	}, func(s *Settings) *QueueingMethod { return &s.QueueingMethod }, FIFO),
	field(Setting{
		Name: "queue_all", Runtime: true, DefaultDoc: "off",
		Doc: "everyone waits, nobody is admitted",
	}, func(s *Settings) *Flag { return (*Flag)(&s.QueueAll) }, false),
	field(Setting{
		Name: "prequeue_start", Runtime: true, Rule: "before `event_start`, which it needs",
		Doc: "the pre-queue opens; before it, visitors are told when it will",
	}, func(s *Settings) *Time { return (*Time)(&s.PrequeueStart) }, Time{}),
	field(Setting{
		Name: "event_start", Runtime: true, DefaultDoc: "now",
		Doc: "admission begins",
	}, func(s *Settings) *Time { return (*Time)(&s.EventStart) }, Time{}),
	field(Setting{
		Name: "event_end", Runtime: true, DefaultDoc: "never", Rule: "after `event_start`",
		Doc: "the room closes to newcomers",
	}, func(s *Settings) *Time { return (*Time)(&s.EventEnd) }, Time{}),
	field(Setting{
		Name: "shuffle_at_event_start", DefaultDoc: "off", Rule: "needs `event_start`",
		Doc: "fair random draw of everyone registered in the pre-queue",
	}, func(s *Settings) *Flag { return (*Flag)(&s.ShuffleAtEventStart) }, false),
	field(Setting{
		Name:   "admission_grace",
		Bounds: Bounds{Min: int64(5 * time.Second), Max: int64(10 * time.Minute)},
		Doc:    "time an admitted fan has to turn up",
	}, func(s *Settings) *Duration { return (*Duration)(&s.AdmissionGrace) }, Duration(DefaultAdmissionGrace)),
	field(Setting{
		Name: "return_window", Runtime: true,
		Bounds: Bounds{Min: int64(10 * time.Second), Max: int64(time.Hour)},
		Doc: "how long after their grace a fan who did not turn up may still come back at the front " +
			"(only while the room admits); later, their turn has passed and they rejoin at the back",
	}, func(s *Settings) *Duration { return (*Duration)(&s.ReturnWindow) }, Duration(DefaultReturnWindow)),
	field(Setting{
		Name:   "waiting_idle_timeout",
		Bounds: Bounds{Min: int64(time.Minute), Max: int64(time.Hour)},
		Doc: "a place whose holder has not been seen (poll, page, WebSocket) for this long is a ghost: " +
			"not counted ahead of anyone, and skipped without spending a slot",
	}, func(s *Settings) *Duration { return (*Duration)(&s.WaitingIdleTimeout) }, Duration(DefaultWaitingIdleTimeout)),
	field(Setting{
		Name: "session_idle_timeout", Runtime: true,
		Bounds: Bounds{Min: int64(time.Minute), Max: int64(maxSession), ZeroOff: true},
		Doc: "an admitted fan who sends no request for this long loses the session and the slot " +
			"(`session_duration` stays the hard limit); back within `return_window` they resume that session's remaining time, once per idle-out",
		DefaultDoc: "off",
	}, func(s *Settings) *Duration { return (*Duration)(&s.SessionIdleTimeout) }, Duration(0)),
	field(Setting{
		Name:   "ticket_lifetime",
		Bounds: Bounds{Min: int64(time.Minute), Max: int64(7 * 24 * time.Hour)},
		Doc:    "a ticket not seen for this long is void",
	}, func(s *Settings) *Duration { return (*Duration)(&s.TicketLifetime) }, Duration(DefaultTicketLifetime)),
	field(Setting{
		Name: "join_limit", Runtime: true, DefaultDoc: "off",
		Doc: "new places one client address (IPv6: its /64) may take, n per period, in bursts of up to b (default n), " +
			"counted for every node sharing a Redis store (per node on the memory store); " +
			"polls and admitted fans are never limited: see [Bots and abuse](bots.md)",
	}, func(s *Settings) *JoinLimit { return &s.JoinLimit }, JoinLimit{}),
	field(Setting{
		Name: "challenge", Runtime: true, DefaultDoc: "off",
		Bounds: Bounds{Min: MinPoWBits, Max: MaxPoWBits},
		Doc: "newcomers solve a proof of work before a place is made: a SHA-256 hash with `<bits>` leading " +
			"zero bits (default " + strconv.Itoa(DefaultPoWBits) + "); JSON and the admin API: `\"pow 20\"` or `\"off\"`; " +
			"see [Bots and abuse](bots.md)",
	}, func(s *Settings) *Challenge { return &s.Challenge }, Challenge{}),
	field(Setting{
		Name: "requeue_on_origin_error", Runtime: true, DefaultDoc: "0 (off)",
		Bounds: Bounds{Min: 0, Max: MaxRequeues},
		Doc: "an admitted fan whose request the origin answers with a 5xx, or that times out upstream, is put back " +
			"at the front with their place and a new session, at most n times a ticket; the origin's " +
			"`X-Waiting-Room-Command: retry` does the same (once a ticket while this is 0): see " +
			"[the fair-draw protocol, Requeue](PROTOCOL.md#requeue)",
	}, func(s *Settings) *Count { return (*Count)(&s.RequeueOnOriginError) }, 0),
	field(Setting{
		Name: "codes_required", Runtime: true, DefaultDoc: "off",
		Doc: "invite-only: a newcomer without a valid access code gets no place, and the page asks for one; " +
			"see [Access codes](codes.md)",
	}, func(s *Settings) *Flag { return (*Flag)(&s.CodesRequired) }, false),
	field(Setting{
		Name: "phases", Runtime: true, DefaultDoc: "none",
		Doc: "scheduled phases: from `start` until `end`, the settings a phase names override the room's, " +
			"on every node at the same instant; see [Phases](#phases)",
	}, func(s *Settings) *Phases { return &s.Phases }, Phases{}),
	field(Setting{
		Name: "lanes", Runtime: true, DefaultDoc: "off: one line",
		Doc: "priority lanes, each first come first served, sharing every second's admissions by weight among " +
			"those with fans waiting; `general` (fans with no code) is always one, weight 1 unless given; " +
			"see [Priority lanes](line.md#priority-lanes)",
	}, func(s *Settings) *Lanes { return &s.Lanes }, Lanes{}),
	field(Setting{
		Name: "waitlist", Runtime: true, DefaultDoc: "off", Rule: "not with `lanes` or `queueing_method random`",
		Doc: "at sold out the line becomes a waitlist: fans keep their places and are let in, in order, " +
			"as units come back (expired holds, refunds, releases); see [The waitlist](waitlist.md)",
	}, func(s *Settings) *Flag { return (*Flag)(&s.Waitlist) }, false),
	field(Setting{
		Name: "paused", Runtime: true, RuntimeOnly: true,
		Doc: "admission stops; waiting fans keep their place",
	}, func(s *Settings) *Flag { return (*Flag)(&s.Paused) }, false),
	field(Setting{
		Name: "sold_out", Runtime: true, RuntimeOnly: true,
		Doc: "everyone waiting and every newcomer sees the sold-out page",
	}, func(s *Settings) *Flag { return (*Flag)(&s.SoldOut) }, false),
}
