package gateway

import (
	"slices"
	"time"

	"github.com/caddyserver/caddy/v2/caddyconfig/caddyfile"

	"github.com/foyer-dev/foyer/waitingroom"
)

// parsePhaseBlock reads one scheduled phase (docs/configuration.md,
// "Phases"):
//
//	phase <name> {
//	    start <RFC 3339>
//	    end   <RFC 3339>
//	    prequeue_start <RFC 3339>   # optional: the phase's own pre-queue
//	    shuffle_at_start            # optional: drawn at the start
//	    <setting> <value>...
//	}
//
// The settings are the room's runtime settings (any of the settings table a
// phase may set, see waitingroom.PhaseMaySet), each read by its value type as
// on the room's own line. Every error names the line at fault; the rules of
// the whole list (how many, unique names, no overlap) are checked as each
// phase is added, naming the line its block starts on.
func parsePhaseBlock(d *caddyfile.Dispenser, h *Handler) error {
	line := d.Line()
	if !d.NextArg() {
		return d.Errf("phase: needs a name, such as phase presale { ... }")
	}
	ph := waitingroom.ScheduledPhase{Name: d.Val()}
	if err := waitingroom.CheckPhaseName(ph.Name); err != nil {
		return d.Err(err.Error())
	}
	if d.NextArg() {
		return d.ArgErr()
	}
	var vals waitingroom.Settings
	var names []string
	for nesting := d.Nesting(); d.NextBlock(nesting); {
		name := d.Val()
		if slices.Contains(names, name) {
			return d.Errf("phase %s: %s given twice", ph.Name, name)
		}
		names = append(names, name)
		switch name {
		case "start", "end", "prequeue_start":
			var t waitingroom.Time
			if err := parseValue(d, name, &t, waitingroom.Bounds{}); err != nil {
				return err
			}
			*map[string]*time.Time{"start": &ph.Start, "end": &ph.End, "prequeue_start": &ph.PrequeueStart}[name] = time.Time(t)
			continue
		case "shuffle_at_start":
			if d.NextArg() {
				return d.Errf("phase %s: shuffle_at_start takes no value (it is on when written)", ph.Name)
			}
			ph.ShuffleAtStart = true
			continue
		}
		rs, ok := waitingroom.LookupSetting(name)
		if !ok {
			return d.Errf("phase %s: unrecognized setting %q", ph.Name, name)
		}
		if err := waitingroom.PhaseMaySet(rs); err != nil {
			return d.Errf("phase %s: %v", ph.Name, err)
		}
		if err := parseValue(d, name, rs.Value(&vals), rs.Bounds); err != nil {
			return err
		}
		if err := rs.Check(&vals); err != nil {
			return d.Errf("phase %s: %v", ph.Name, err)
		}
	}
	names = slices.DeleteFunc(names, func(n string) bool {
		return n == "start" || n == "end" || n == "prequeue_start" || n == "shuffle_at_start"
	})
	ph.Settings = waitingroom.OverridesOf(vals, names...)
	probe := waitingroom.Settings{Phases: waitingroom.NewPhases(append(h.Settings.Phases.List(), ph)...)}
	def, _ := waitingroom.LookupSetting("phases")
	if err := def.Check(&probe); err != nil {
		return d.Errf("phase %s, from line %d: %v", ph.Name, line, err)
	}
	h.Settings.Phases = probe.Phases
	return nil
}
