package gateway

import (
	"encoding/json"
	"strings"

	"github.com/caddyserver/caddy/v2"
	"github.com/caddyserver/caddy/v2/caddyconfig"
	"github.com/caddyserver/caddy/v2/caddyconfig/caddyfile"
	"github.com/caddyserver/caddy/v2/caddyconfig/httpcaddyfile"
	"github.com/caddyserver/caddy/v2/modules/caddyhttp"

	"github.com/foyer-dev/foyer/waitingroom"
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
//	    <setting> [<value>...]
//	}
//
// The settings are caddyfileSettings (and the settings table of docs/configuration.md, made
// from it):
// most take one value of their type (see waitingroom.Value: text, a number, a
// duration, a time) or are bare flags; a join limit and a challenge take a
// few words; store, the lists and the account block have their own syntax.
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
		s, ok := lookupCaddyfileSetting(name)
		if !ok {
			return d.Errf("unrecognized waiting_room setting %q", name)
		}
		var err error
		switch {
		case s.parse != nil:
			err = s.parse(d, h)
		case s.room != nil:
			err = parseValue(d, name, s.room.Value(&h.Settings), s.room.Bounds)
			if err == nil {
				if err = s.room.Check(&h.Settings); err != nil {
					err = d.Err(err.Error())
				}
			}
		default:
			err = parseValue(d, name, s.field(h), waitingroom.Bounds{})
		}
		if err != nil {
			return err
		}
	}
	return nil
}

// parseValue reads the value of a line into v, as v's notation under l
// writes it: one argument, several words for a value written in words, none
// for a flag. Text that is not one line of valid UTF-8 is refused here, where
// the error can point at the Caddyfile's line (Caddy's reader turns bytes
// that are not UTF-8 into U+FFFD, which waitingroom.CheckText refuses for
// this reason).
func parseValue(d *caddyfile.Dispenser, name string, v waitingroom.Value, l waitingroom.Bounds) error {
	n, args := waitingroom.NotationOf(v, l), d.RemainingArgs()
	flag := n.Arg == ""
	if flag && len(args) > 0 || !flag && len(args) == 0 || !n.Words && len(args) > 1 {
		return d.ArgErr()
	}
	if flag {
		args = []string{"true"}
	}
	if err := v.UnmarshalText([]byte(strings.Join(args, " "))); err != nil {
		return d.Errf("%s: %v", name, err)
	}
	return nil
}

// parseListLine reads a line of one or more words (previous_signing_keys
// <path>..., languages <tag>...) into the Handler's list that at gives. The
// line may be repeated, and every word adds to the list.
func parseListLine(at func(*Handler) *[]string) func(*caddyfile.Dispenser, *Handler) error {
	return func(d *caddyfile.Dispenser, h *Handler) error {
		words := d.RemainingArgs()
		if len(words) == 0 {
			return d.ArgErr()
		}
		*at(h) = append(*at(h), words...)
		return nil
	}
}

// parseStoreLine reads store memory | redis <url>.
func parseStoreLine(d *caddyfile.Dispenser, h *Handler) error {
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
	return nil
}

// Interface guard.
var _ caddyfile.Unmarshaler = (*Handler)(nil)
