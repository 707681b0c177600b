package gateway

import (
	"encoding/json"
	"strconv"

	"github.com/caddyserver/caddy/v2"
	"github.com/caddyserver/caddy/v2/caddyconfig"
	"github.com/caddyserver/caddy/v2/caddyconfig/caddyfile"
	"github.com/caddyserver/caddy/v2/caddyconfig/httpcaddyfile"
	"github.com/caddyserver/caddy/v2/modules/caddyhttp"
)

func init() {
	httpcaddyfile.RegisterDirective("waiting_room", parseCaddyfile)
	// Before intercept and templates (which would rewrite our page), before
	// handle and route (so the routes inside them are gated), and so before
	// respond and reverse_proxy; after encode, so waiting pages are compressed,
	// and after the auth directives.
	httpcaddyfile.RegisterDirectiveOrder("waiting_room", httpcaddyfile.Before, "intercept")
}

// parseCaddyfile builds the waiting_room route. With a matcher, the route also
// matches the room's own endpoints under path_prefix, which would otherwise sit
// outside the matcher and never be reached.
func parseCaddyfile(h httpcaddyfile.Helper) ([]httpcaddyfile.ConfigValue, error) {
	if !h.Next() {
		return nil, h.ArgErr()
	}
	matcherSet, err := h.ExtractMatcherSet()
	if err != nil {
		return nil, err
	}
	var wr Handler
	if err := wr.UnmarshalCaddyfile(h.Dispenser); err != nil {
		return nil, err
	}
	var warnings []caddyconfig.Warning
	route := caddyhttp.Route{
		HandlersRaw: []json.RawMessage{caddyconfig.JSONModuleObject(wr, "handler", "waiting_room", &warnings)},
	}
	if matcherSet != nil {
		prefix := wr.PathPrefix
		if prefix == "" {
			prefix = DefaultPathPrefix
		}
		endpoints := caddy.ModuleMap{"path": caddyconfig.JSON(caddyhttp.MatchPath{prefix + "/*"}, &warnings)}
		route.MatcherSetsRaw = []caddy.ModuleMap{matcherSet, endpoints}
	}
	return []httpcaddyfile.ConfigValue{{Class: "route", Value: route}}, nil
}

// UnmarshalCaddyfile sets up the handler from Caddyfile tokens. Syntax:
//
//	waiting_room [<matcher>] [<room>] {
//	    room                    <id>
//	    title                   <event name shown on the page>
//	    store                   memory | redis <redis-url>
//	    new_users_per_minute    <n>
//	    total_active_users      <n>
//	    session_duration        <duration>
//	    queueing_method         fifo | random | passthrough | reject
//	    queue_all
//	    prequeue_start          <RFC 3339 time>
//	    event_start             <RFC 3339 time>
//	    event_end               <RFC 3339 time>
//	    shuffle_at_event_start
//	    signing_key             <path to Ed25519 PEM>
//	    previous_signing_keys   <path to Ed25519 PEM>...
//	    page                    <path to html/template>
//	    path_prefix             <prefix>
//	    cookie_prefix           <name>
//	    admission_grace         <duration>
//	    ticket_lifetime         <duration>
//	    queued_status_code      200 | 429
//	    issuer                  <iss>
//	    on_store_failure        closed | open
//	}
func (h *Handler) UnmarshalCaddyfile(d *caddyfile.Dispenser) error {
	d.Next() // the directive name
	if d.NextArg() {
		h.Room = d.Val()
	}
	if d.NextArg() {
		return d.ArgErr()
	}
	for nesting := d.Nesting(); d.NextBlock(nesting); {
		name := d.Val()
		switch name {
		case "room", "title", "queueing_method", "prequeue_start", "event_start", "event_end",
			"signing_key", "page", "path_prefix", "cookie_prefix", "issuer", "on_store_failure":
			var v string
			if !d.AllArgs(&v) {
				return d.ArgErr()
			}
			*h.stringField(name) = v
		case "new_users_per_minute", "total_active_users", "queued_status_code":
			var v string
			if !d.AllArgs(&v) {
				return d.ArgErr()
			}
			n, err := strconv.Atoi(v)
			if err != nil || n <= 0 {
				return d.Errf("%s: %q is not a positive whole number", name, v)
			}
			*h.intField(name) = n
		case "session_duration", "admission_grace", "ticket_lifetime":
			var v string
			if !d.AllArgs(&v) {
				return d.ArgErr()
			}
			dur, err := caddy.ParseDuration(v)
			if err != nil || dur <= 0 {
				return d.Errf("%s: %q is not a positive duration", name, v)
			}
			*h.durationField(name) = caddy.Duration(dur)
		case "queue_all", "shuffle_at_event_start":
			if d.NextArg() {
				return d.ArgErr()
			}
			*h.flagField(name) = true
		case "previous_signing_keys":
			// The line may be repeated; every path adds a key.
			paths := d.RemainingArgs()
			if len(paths) == 0 {
				return d.ArgErr()
			}
			h.PreviousSigningKeys = append(h.PreviousSigningKeys, paths...)
		case "store":
			if !d.NextArg() {
				return d.ArgErr()
			}
			sc := &StoreConfig{Backend: d.Val()}
			switch sc.Backend {
			case "memory":
				if d.NextArg() {
					return d.ArgErr()
				}
			case "redis":
				if !d.AllArgs(&sc.URL) {
					return d.Errf("store redis needs exactly one URL, such as redis://127.0.0.1:6379")
				}
			default:
				return d.Errf("store: unknown backend %q (memory or redis)", sc.Backend)
			}
			h.Store = sc
		default:
			return d.Errf("unrecognized waiting_room setting %q", name)
		}
	}
	return nil
}

func (h *Handler) stringField(name string) *string {
	return map[string]*string{
		"room": &h.Room, "title": &h.Title, "queueing_method": &h.QueueingMethod,
		"prequeue_start": &h.PrequeueStart, "event_start": &h.EventStart, "event_end": &h.EventEnd,
		"signing_key": &h.SigningKey, "page": &h.Page, "path_prefix": &h.PathPrefix,
		"cookie_prefix": &h.CookiePrefix, "issuer": &h.Issuer, "on_store_failure": &h.OnStoreFailure,
	}[name]
}

func (h *Handler) intField(name string) *int {
	return map[string]*int{
		"new_users_per_minute": &h.NewUsersPerMinute, "total_active_users": &h.TotalActiveUsers,
		"queued_status_code": &h.QueuedStatusCode,
	}[name]
}

func (h *Handler) durationField(name string) *caddy.Duration {
	return map[string]*caddy.Duration{
		"session_duration": &h.SessionDuration, "admission_grace": &h.AdmissionGrace,
		"ticket_lifetime": &h.TicketLifetime,
	}[name]
}

func (h *Handler) flagField(name string) *bool {
	return map[string]*bool{"queue_all": &h.QueueAll, "shuffle_at_event_start": &h.ShuffleAtEventStart}[name]
}

// Interface guard.
var _ caddyfile.Unmarshaler = (*Handler)(nil)
