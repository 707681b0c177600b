package waitingroom

import (
	"strconv"
	"time"
)

// settingDefs describes every room setting once: its public name, what it
// takes, its default and limits, whether an admin may change it while the room
// runs, and the line the README shows for it. Defaults, validation of limits,
// runtime overrides and the admin API's checks all read this table, and the
// gateway builds its Caddyfile parser and the README's settings table from it,
// so a new setting is one entry here plus its field in Settings. The order is
// the order of stored overrides and of the admin API's view, and the README's
// unless the gateway places a setting elsewhere.
var settingDefs = []*SettingDef{
	{
		Name: "title", Arg: "<text>", MaxLen: 200, Runtime: true,
		Doc:   "the event's name on the waiting page",
		field: func(s *Settings) any { return &s.Title },
	},
	{
		Name: "new_users_per_minute", Runtime: true,
		Default: DefaultNewUsersPerMinute, Min: 1, Max: maxRate,
		Doc:   "admission rate, smoothed per second",
		field: func(s *Settings) any { return &s.NewUsersPerMinute },
	},
	{
		Name: "total_active_users", Runtime: true,
		Default: DefaultTotalActiveUsers, Min: 1, Max: maxActive,
		Doc:   "cap on fans holding a session at once",
		field: func(s *Settings) any { return &s.TotalActiveUsers },
	},
	{
		Name: "session_duration", Runtime: true,
		Default: DefaultSessionDuration, Min: int64(time.Minute), Max: int64(maxSession),
		Doc:   "how long a pass lasts once admitted",
		field: func(s *Settings) any { return &s.SessionDuration },
	},
	{
		Name: "queueing_method", Runtime: true,
		Choices: []string{string(FIFO), string(Random), string(Passthrough), string(Reject)},
		Default: FIFO,
		Doc: "fifo: first come, first served; random: whenever a group is in, everyone waiting " +
			"is placed by a fresh fair draw; passthrough lets all in with a pass; reject shows the closed page",
		field: func(s *Settings) any { return &s.QueueingMethod },
	},
	{
		Name: "queue_all", Runtime: true, DefaultDoc: "off",
		Doc:   "everyone waits, nobody is admitted",
		field: func(s *Settings) any { return &s.QueueAll },
	},
	{
		Name: "prequeue_start", Runtime: true, Rule: "before `event_start`, which it needs",
		Doc:   "the pre-queue opens; before it, visitors are told when it will",
		field: func(s *Settings) any { return &s.PrequeueStart },
	},
	{
		Name: "event_start", Runtime: true, DefaultDoc: "now",
		Doc:   "admission begins",
		field: func(s *Settings) any { return &s.EventStart },
	},
	{
		Name: "event_end", Runtime: true, DefaultDoc: "never", Rule: "after `event_start`",
		Doc:   "the room closes to newcomers",
		field: func(s *Settings) any { return &s.EventEnd },
	},
	{
		Name: "shuffle_at_event_start", DefaultDoc: "off", Rule: "needs `event_start`",
		Doc:   "fair random draw of everyone registered in the pre-queue",
		field: func(s *Settings) any { return &s.ShuffleAtEventStart },
	},
	{
		Name:    "admission_grace",
		Default: DefaultAdmissionGrace, Min: int64(5 * time.Second), Max: int64(10 * time.Minute),
		Doc:   "time an admitted fan has to turn up",
		field: func(s *Settings) any { return &s.AdmissionGrace },
	},
	{
		Name: "return_window", Runtime: true,
		Default: DefaultReturnWindow, Min: int64(10 * time.Second), Max: int64(time.Hour),
		Doc: "how long after their grace a fan who did not turn up may still come back at the front " +
			"(only while the room admits); later, their turn has passed and they rejoin at the back",
		field: func(s *Settings) any { return &s.ReturnWindow },
	},
	{
		Name:    "waiting_idle_timeout",
		Default: DefaultWaitingIdleTimeout, Min: int64(time.Minute), Max: int64(time.Hour),
		Doc: "a place whose holder has not been seen (poll, page, WebSocket) for this long is a ghost: " +
			"not counted ahead of anyone, and skipped without spending a slot",
		field: func(s *Settings) any { return &s.WaitingIdleTimeout },
	},
	{
		Name: "session_idle_timeout", Runtime: true, ZeroOff: true,
		Min: int64(time.Minute), Max: int64(maxSession),
		Doc: "an admitted fan who sends no request for this long loses the session and the slot " +
			"(`session_duration` stays the hard limit); back within `return_window` they resume that session's remaining time, once per idle-out",
		DefaultDoc: "off",
		field:      func(s *Settings) any { return &s.SessionIdleTimeout },
	},
	{
		Name:    "ticket_lifetime",
		Default: DefaultTicketLifetime, Min: int64(time.Minute), Max: int64(7 * 24 * time.Hour),
		Doc:   "a ticket not seen for this long is void",
		field: func(s *Settings) any { return &s.TicketLifetime },
	},
	{
		Name: "join_limit", Runtime: true, DefaultDoc: "off",
		Doc: "new places one client address (IPv6: its /64) may take, n per period, in bursts of up to b (default n), " +
			"counted for every node sharing a Redis store (per node on the memory store); " +
			"polls and admitted fans are never limited: see [Bots and abuse](#bots-and-abuse)",
		field: func(s *Settings) any { return &s.JoinLimit },
	},
	{
		Name: "challenge", Arg: "pow [<bits>] | off", Runtime: true, DefaultDoc: "off",
		Min: MinPoWBits, Max: MaxPoWBits,
		Doc: "newcomers solve a proof of work before a place is made: a SHA-256 hash with `<bits>` leading " +
			"zero bits (default " + strconv.Itoa(DefaultPoWBits) + "); JSON and the admin API: `\"pow 20\"` or `\"off\"`; " +
			"see [Bots and abuse](#bots-and-abuse)",
		field: func(s *Settings) any { return &s.Challenge },
	},
	{
		Name: "requeue_on_origin_error", Arg: "<n>", Runtime: true, Max: MaxRequeues, DefaultDoc: "0 (off)",
		Doc: "an admitted fan whose request the origin answers with a 5xx, or that times out upstream, is put back " +
			"at the front with their place and a new session, at most n times a ticket; the origin's " +
			"`X-Waiting-Room-Command: retry` does the same (once a ticket while this is 0): see docs/PROTOCOL.md, \"Requeue\"",
		field: func(s *Settings) any { return &s.RequeueOnOriginError },
	},
	{
		Name: "paused", Runtime: true, RuntimeOnly: true,
		Doc:   "admission stops; waiting fans keep their place",
		field: func(s *Settings) any { return &s.Paused },
	},
	{
		Name: "sold_out", Runtime: true, RuntimeOnly: true,
		Doc:   "everyone waiting and every newcomer sees the sold-out page",
		field: func(s *Settings) any { return &s.SoldOut },
	},
}
