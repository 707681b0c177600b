package gateway

import (
	"strconv"

	"github.com/caddyserver/caddy/v2/caddyconfig/caddyfile"

	"github.com/foyer-dev/foyer/waitingroom"
)

//go:generate go test -run ^TestREADMESettings$ . -update-readme

// caddyfileSetting is one line of the waiting_room block. A room setting takes
// its value type, default, limits and doc from the room's table
// (waitingroom.SettingDefs); a setting of the gateway alone says them here.
// The Caddyfile parser, the handler's JSON, the admin API's list of settings
// it cannot change and the settings table (docs/configuration.md) are all
// driven by
// caddyfileSettings, in its order.
type caddyfileSetting struct {
	name string
	// room is the room setting this line configures (in Handler.Settings),
	// or nil.
	room *waitingroom.Setting
	// field is the Handler field a gateway line sets, as a value type
	// (waitingroom.Text, Count, Flag); its JSON name is the line's.
	field func(*Handler) waitingroom.Value
	// parse reads a line whose syntax is not one value: a list or a block.
	parse func(d *caddyfile.Dispenser, h *Handler) error
	// text marks a gateway line of free text that a JSON configuration must
	// give as one line of valid UTF-8, as a room's text settings must.
	text bool

	// What docs/configuration.md shows; a room setting's, from the room's table.
	syntax, defaultDoc, limits, doc string
}

// roomLine places a room setting among the lines; its value goes to the
// Handler's Settings.
func roomLine(name string) caddyfileSetting {
	d, ok := waitingroom.LookupSetting(name)
	if !ok {
		panic("gateway: no room setting " + name)
	}
	return caddyfileSetting{name: name, room: d, syntax: d.Syntax(), defaultDoc: d.DefaultText(), limits: d.LimitsText(), doc: d.Doc}
}

// phaseLine is the room's phases, one `phase` block each (phaseblock.go).
func phaseLine() caddyfileSetting {
	l := roomLine("phases")
	l.name, l.syntax, l.parse = "phase", "phase <name> { start <RFC 3339>; end <RFC 3339>; <setting> <value>... }", parsePhaseBlock
	return l
}

// caddyfileSettings are the lines in the order of docs/configuration.md: gatewayLines, then
// any room setting they do not place (so that a new room setting is in the
// Caddyfile, the JSON twin and docs/configuration.md without an edit here; add its
// roomLine to gatewayLines only to choose its place in the table).
var caddyfileSettings = withRoomSettings(gatewayLines)

func withRoomSettings(lines []caddyfileSetting) []caddyfileSetting {
	placed := make(map[string]bool, len(lines))
	for _, l := range lines {
		placed[l.name] = true
		if l.room != nil {
			placed[l.room.Name] = true // a line of its own name, such as phase
		}
	}
	for _, d := range waitingroom.SettingDefs() {
		if !d.RuntimeOnly && !placed[d.Name] {
			lines = append(lines, roomLine(d.Name))
		}
	}
	return lines
}

var gatewayLines = []caddyfileSetting{
	{
		name: "room", syntax: "room <id>", defaultDoc: "required",
		limits: "1–64 letters, digits, `_`, `.`, `-`",
		doc:    "the room's identity in the store, the admin API and the pass audience",
		field:  func(h *Handler) waitingroom.Value { return (*waitingroom.Text)(&h.Room) },
	},
	roomLine("title"),
	{
		name: "store", syntax: "store memory | redis <url>", defaultDoc: "`memory`",
		limits: "a `redis://`, `rediss://`, `redis+cluster://` or `redis+sentinel://` URL",
		doc:    "where the room's shared state lives",
		parse:  parseStoreLine,
	},
	roomLine("new_users_per_minute"),
	roomLine("total_active_users"),
	roomLine("session_duration"),
	roomLine("queueing_method"),
	roomLine("queue_all"),
	roomLine("prequeue_start"),
	roomLine("event_start"),
	roomLine("event_end"),
	roomLine("shuffle_at_event_start"),
	phaseLine(),
	{
		name: "signing_key", syntax: "signing_key <path>", defaultDoc: "generated once, kept in Caddy storage",
		limits: "a readable Ed25519 key file",
		doc:    "Ed25519 PKCS #8 PEM for passes and tickets",
		field:  func(h *Handler) waitingroom.Value { return (*waitingroom.Text)(&h.SigningKey) },
	},
	{
		name: "previous_signing_keys", syntax: "previous_signing_keys <path>...", defaultDoc: "none",
		limits: "at most " + strconv.Itoa(waitingroom.MaxVerifyingKeys) + " keys",
		doc: "keys that still verify tickets and passes, and are published in `jwks.json`, but sign nothing: " +
			"see [Rotating the signing key](operations.md#rotating-the-signing-key); JSON: an array of paths",
		parse: parseListLine(func(h *Handler) *[]string { return &h.PreviousSigningKeys }),
	},
	{
		name: "page", syntax: "page <path>", defaultDoc: "embedded page",
		limits: "a readable file that parses as an `html/template`",
		doc:    "your own `html/template` waiting page",
		field:  func(h *Handler) waitingroom.Value { return (*waitingroom.Text)(&h.Page) },
	},
	{
		name: "language", syntax: "language auto | <tag>", defaultDoc: "`auto`",
		limits: "`auto`, or a BCP 47 tag among `languages`",
		doc: "the language of the room's pages: `auto` takes the browser's `Accept-Language` through CLDR's language matcher, " +
			"a tag is what every fan reads; either way the page's menu (`?lang=`, kept in a cookie) lets a fan choose another; " +
			"see [Languages](waiting-page.md#languages)",
		field: func(h *Handler) waitingroom.Value { return (*waitingroom.Text)(&h.Language) },
	},
	{
		name: "languages", syntax: "languages <tag>...", defaultDoc: "every catalog",
		limits: "tags with a catalog, built in or under `messages`",
		doc:    "the languages offered, the first the room's default (a browser that matches none reads it); JSON: an array of tags",
		parse:  parseListLine(func(h *Handler) *[]string { return &h.Languages }),
	},
	{
		name: "messages", syntax: "messages <dir>", defaultDoc: "none",
		limits: "a directory of `<tag>.json` catalogs, each complete and with every plural form its language needs",
		doc:    "your own words: catalogs that override the built-in ones or add languages and keys, checked at provision time",
		field:  func(h *Handler) waitingroom.Value { return (*waitingroom.Text)(&h.Messages) },
	},
	{
		name: "path_prefix", syntax: "path_prefix <prefix>", defaultDoc: "`" + DefaultPathPrefix + "`",
		limits: "a path starting with `/`",
		doc:    "where the room's endpoints live",
		field:  func(h *Handler) waitingroom.Value { return (*waitingroom.Text)(&h.PathPrefix) },
	},
	{
		name: "cookie_prefix", syntax: "cookie_prefix <name>", defaultDoc: "`" + DefaultCookiePrefix + "`",
		limits: "at most 32 letters, digits, `_`, `-`",
		doc:    "cookies are `<name>_ticket` and `<name>_pass`",
		field:  func(h *Handler) waitingroom.Value { return (*waitingroom.Text)(&h.CookiePrefix) },
	},
	{
		name: "cookie_samesite", syntax: "cookie_samesite lax | strict | none", defaultDoc: "`lax`",
		limits: "`lax`, `strict` or `none`; `none` sets `Secure`, so the site must be served over HTTPS",
		doc: "the `SameSite` attribute of the room's cookies; `none` lets the room work inside an iframe on another site: " +
			"see [Embedding the room](#embedding-the-room)",
		field: func(h *Handler) waitingroom.Value { return (*waitingroom.Text)(&h.CookieSameSite) },
	},
	{
		name: "cookie_partitioned", syntax: "cookie_partitioned", defaultDoc: "off",
		limits: "a flag: on when written (JSON `true`); sets `Secure`",
		doc: "the room's cookies are `Partitioned` (CHIPS): kept per embedding site, so an embedded room works " +
			"where third-party cookies are blocked; see [Embedding the room](#embedding-the-room)",
		field: func(h *Handler) waitingroom.Value { return (*waitingroom.Flag)(&h.CookiePartitioned) },
	},
	roomLine("admission_grace"),
	roomLine("return_window"),
	roomLine("ticket_lifetime"),
	{
		name: "queued_status_code", syntax: "queued_status_code 200 | 429", defaultDoc: "200",
		limits: "200 or 429",
		doc:    "status of JSON answers to waiting fans (429 adds `Retry-After`)",
		field:  func(h *Handler) waitingroom.Value { return (*waitingroom.Count)(&h.QueuedStatusCode) },
	},
	{
		name: "issuer", syntax: "issuer <iss>", defaultDoc: "`foyer`",
		limits: "one line: no tab, line break or other control character; origins check it",
		doc:    "the passes' `iss`",
		field:  func(h *Handler) waitingroom.Value { return (*waitingroom.Text)(&h.Issuer) },
		text:   true,
	},
	{
		name: "on_store_failure", syntax: "on_store_failure closed | open", defaultDoc: "`closed`",
		limits: "`closed` or `open`",
		doc:    "while the store is down: newcomers get 503 with `Retry-After`, or everyone goes through with a pass",
		field:  func(h *Handler) waitingroom.Value { return (*waitingroom.Text)(&h.OnStoreFailure) },
	},
	{
		name: "account", syntax: "account { ... }", defaultDoc: "off: every browser is a visitor of its own",
		limits: "one of `jwks_url`, `public_key`; a `cookie` or a `header`; `login_url` with `required`",
		doc:    "one place per account, from the signed token of the site's own login; `required` sends visitors without one to the login page: see [The account block](#the-account-block)",
		parse:  parseAccountBlock,
	},
}

// lookupCaddyfileSetting finds a line of the waiting_room block by name.
func lookupCaddyfileSetting(name string) (caddyfileSetting, bool) {
	for _, s := range caddyfileSettings {
		if s.name == name {
			return s, true
		}
	}
	return caddyfileSetting{}, false
}

func (s caddyfileSetting) runtime() bool { return s.room != nil && s.room.Runtime }

// textLines are the gateway's lines of free text, for the checks that read
// them; the room's are waitingroom.Text, which checks itself.
func textLines() []caddyfileSetting {
	var out []caddyfileSetting
	for _, s := range caddyfileSettings {
		if s.text {
			out = append(out, s)
		}
	}
	return out
}
