package gateway

import (
	"encoding/json"
	"strconv"
	"strings"
	"time"

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
// The settings are caddyfileSettings (and the settings table of docs/configuration.md, made from it):
// most take one value of their kind (text, a positive whole number, a positive
// duration) or are bare flags; store and previous_signing_keys have their own
// syntax.
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
			err = parseRoomValue(d, s.room, &h.Settings)
		default:
			err = parseValue(d, name, s.field(h))
			if p, ok := s.field(h).(*string); ok && err == nil && s.text {
				err = checkTextArg(d, name, *p)
			}
		}
		if err != nil {
			return err
		}
	}
	return nil
}

// checkTextArg refuses a line of free text that is not one line of valid
// UTF-8, while the error can still point at the Caddyfile's line. Bytes that
// are not UTF-8 arrive here as U+FFFD, Caddy's Caddyfile reader having
// replaced them, and CheckText refuses that character for this reason.
func checkTextArg(d *caddyfile.Dispenser, name, v string) error {
	if err := waitingroom.CheckText(v); err != nil {
		return d.Errf("%s: %v", name, err)
	}
	return nil
}

// parseValue reads the one value of a line into field, by its type.
func parseValue(d *caddyfile.Dispenser, name string, field any) error {
	if flag, ok := field.(*bool); ok {
		if d.NextArg() {
			return d.ArgErr()
		}
		*flag = true
		return nil
	}
	var v string
	if !d.AllArgs(&v) {
		return d.ArgErr()
	}
	switch p := field.(type) {
	case *string:
		*p = v
	case *int:
		n, err := strconv.Atoi(v)
		if err != nil || n <= 0 {
			return d.Errf("%s: %q is not a positive whole number", name, v)
		}
		*p = n
	case *caddy.Duration:
		dur, err := caddy.ParseDuration(v)
		if err != nil || dur <= 0 {
			return d.Errf("%s: %q is not a positive duration", name, v)
		}
		*p = caddy.Duration(dur)
	default:
		return d.Errf("%s: a setting of type %T cannot be read", name, field)
	}
	return nil
}

// parseRoomValue reads the value of a room setting's line into s, by the
// setting's kind: text, a positive whole number, a positive duration, an RFC
// 3339 time, a join limit ("20/m burst 40", several tokens), or a bare flag.
func parseRoomValue(d *caddyfile.Dispenser, def *waitingroom.SettingDef, s *waitingroom.Settings) error {
	var v any
	switch def.Kind() {
	case waitingroom.KindBool:
		v = true
		if err := parseValue(d, def.Name, new(bool)); err != nil {
			return err
		}
	case waitingroom.KindInt:
		n := new(int)
		if err := parseValue(d, def.Name, n); err != nil {
			return err
		}
		v = *n
	case waitingroom.KindRate:
		args := d.RemainingArgs()
		if len(args) == 0 {
			return d.ArgErr()
		}
		l, err := waitingroom.ParseJoinLimit(strings.Join(args, " "))
		if err != nil {
			return d.Errf("%s: %v", def.Name, err)
		}
		v = l
	case waitingroom.KindDuration:
		dur := new(caddy.Duration)
		if err := parseValue(d, def.Name, dur); err != nil {
			return err
		}
		v = time.Duration(*dur)
	case waitingroom.KindPhrase:
		words := d.RemainingArgs()
		if len(words) == 0 {
			return d.ArgErr()
		}
		if err := def.ParseText(s, strings.Join(words, " ")); err != nil {
			return d.Err(err.Error())
		}
		return nil
	default:
		str := new(string)
		if err := parseValue(d, def.Name, str); err != nil {
			return err
		}
		v = *str
		if def.Kind() == waitingroom.KindString {
			if err := checkTextArg(d, def.Name, *str); err != nil {
				return err
			}
		}
		if def.Kind() == waitingroom.KindTime {
			t, err := parseTime(def.Name, *str)
			if err != nil {
				return d.Err(err.Error())
			}
			v = t
		}
	}
	if !def.Set(s, v) {
		return d.Errf("%s: a value of type %T does not fit the room setting", def.Name, v)
	}
	return nil
}

// parsePreviousKeysLine reads previous_signing_keys <path>...; the line may be
// repeated, and every path adds a key.
func parsePreviousKeysLine(d *caddyfile.Dispenser, h *Handler) error {
	paths := d.RemainingArgs()
	if len(paths) == 0 {
		return d.ArgErr()
	}
	h.PreviousSigningKeys = append(h.PreviousSigningKeys, paths...)
	return nil
}

// parseLanguagesLine reads languages <tag>...; the line may be repeated.
func parseLanguagesLine(d *caddyfile.Dispenser, h *Handler) error {
	tags := d.RemainingArgs()
	if len(tags) == 0 {
		return d.ArgErr()
	}
	h.Languages = append(h.Languages, tags...)
	return nil
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
