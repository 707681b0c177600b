package waitingroom

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
)

// Overrides are runtime changes an admin made to a room's settings. They are kept
// in the store with a version, so every node serving the room applies the same
// ones; a setting they do not name keeps its configured value.
//
// They are a set of runtime settings (one bit per entry of settingDefs) and
// the values given to them, so that a new setting needs no code here. Their
// JSON is an object of the settings they name, in the table's order, in the
// admin API's notation.
type Overrides struct {
	set  uint64
	vals Settings
}

// OverridesOf returns overrides that set each named runtime setting to its
// value in values. A name that is not a runtime setting is a programming
// error, and panics.
func OverridesOf(values Settings, names ...string) Overrides {
	var o Overrides
	for _, name := range names {
		d, ok := LookupSetting(name)
		if !ok || !d.Runtime {
			panic("waitingroom: " + name + " is not a runtime setting")
		}
		d.copy(&o.vals, &values)
		o.set |= d.bit
	}
	return o
}

// Has reports whether the overrides set the named setting.
func (o Overrides) Has(name string) bool {
	d, ok := LookupSetting(name)
	return ok && o.set&d.bit != 0
}

// Values returns the values the overrides give, zero for settings they leave
// alone; read them together with Has.
func (o Overrides) Values() Settings { return o.vals }

// IsZero reports whether the overrides change nothing.
func (o Overrides) IsZero() bool { return o.set == 0 }

// Apply returns s with the overrides laid over it.
func (o Overrides) Apply(s Settings) Settings {
	return o.lay(s, &o.vals)
}

// Merge lays patch over o: settings set in patch win.
func (o Overrides) Merge(patch Overrides) Overrides {
	o.vals = patch.lay(o.vals, &patch.vals)
	o.set |= patch.set
	return o
}

// lay copies the settings o names from vals over s.
func (o Overrides) lay(s Settings, vals *Settings) Settings {
	for _, d := range settingDefs {
		if o.set&d.bit != 0 {
			d.copy(&s, vals)
		}
	}
	return s
}

// DecodeOverride reads one runtime setting's JSON value, as a PATCH gives it.
// A value the setting does not take is an error saying what it takes, text
// that is not one line of valid UTF-8 among them (see DecodeText). Bounds are
// left to Settings.Validate, which sees the settings the change leads to.
func DecodeOverride(name string, raw json.RawMessage) (Overrides, error) {
	var o Overrides
	d, ok := LookupSetting(name)
	if !ok || !d.Runtime {
		return o, fmt.Errorf("%q is not a runtime setting", name)
	}
	if err := d.DecodeJSON(&o.vals, raw); err != nil {
		return o, err
	}
	o.set |= d.bit
	return o, nil
}

// MarshalJSON writes the settings the overrides name, in the table's order.
func (o Overrides) MarshalJSON() ([]byte, error) {
	return EncodeSettings(&o.vals, func(d *Setting) bool { return o.set&d.bit != 0 })
}

// UnmarshalJSON reads what MarshalJSON writes, and what nodes wrote before
// the settings table (durations "15m0s"). A setting this version does not
// know, or one given as null, is left out, so that overrides written by a
// newer node still apply here.
func (o *Overrides) UnmarshalJSON(b []byte) error {
	var out Overrides
	read, err := DecodeSettings(b, &out.vals, func(d *Setting) bool { return d.Runtime })
	if err != nil {
		return err
	}
	for _, d := range read {
		out.set |= d.bit
	}
	*o = out
	return nil
}

// DeclareSoldOut switches the room to sold out, as an origin asks. Origins say
// so on every answer once nothing is left, so this costs nothing when this
// node already knows, and only one declaration at a time goes to the store.
func (r *Room) DeclareSoldOut(ctx context.Context) error {
	if r.settings().SoldOut || !r.declaring.CompareAndSwap(false, true) {
		return nil
	}
	defer r.declaring.Store(false)
	sold := true
	ctx = WithOperator(ctx, &Operator{Who: "origin"})
	_, err := r.Patch(ctx, OverridesOf(Settings{SoldOut: sold}, "sold_out"))
	return err
}

// Patch applies an admin's change to the room's runtime settings, in the store,
// so that every node serving the room follows it within a refresh. The result
// must validate; a change that does not is refused and nothing is stored.
func (r *Room) Patch(ctx context.Context, patch Overrides) (Settings, error) {
	for range 8 {
		data, version, err := r.store.Overrides(ctx, r.id)
		if errors.Is(err, ErrNoRoom) {
			if err = r.reseed(ctx, r.now()); err == nil {
				continue
			}
		}
		if err != nil {
			r.storeFailed()
			return Settings{}, fmt.Errorf("%w: %w", ErrStoreUnavailable, err)
		}
		r.mu.Lock()
		behind := version < r.version
		r.mu.Unlock()
		if behind {
			// The store lost the overrides this node knows: put them back
			// first, so that the patch lays over them.
			if err := r.pushOverrides(ctx); err != nil {
				r.storeFailed()
				return Settings{}, fmt.Errorf("%w: %w", ErrStoreUnavailable, err)
			}
			continue
		}
		var current Overrides
		if len(data) > 0 {
			if err := json.Unmarshal(data, &current); err != nil {
				return Settings{}, fmt.Errorf("stored overrides are unreadable: %w", err)
			}
		}
		merged := current.Merge(patch)
		eff := merged.Apply(r.base)
		if err := eff.Validate(); err != nil {
			return Settings{}, err
		}
		if err := checkLanesKept(current.Apply(r.base), eff, r.now()); err != nil {
			return Settings{}, err
		}
		if err := checkPrequeuesKept(current.Apply(r.base), eff, r.now()); err != nil {
			return Settings{}, err
		}
		out, err := json.Marshal(merged)
		if err != nil {
			return Settings{}, err
		}
		prev, _ := json.Marshal(current)
		if string(prev) == string(out) {
			// Nothing changes: no write, no new version for every node to
			// fetch, and no contention among callers who all ask for the same.
			return eff, nil
		}
		nv, err := r.store.SaveOverrides(ctx, r.id, out, version)
		if errors.Is(err, ErrVersionConflict) {
			continue
		}
		if err != nil {
			r.storeFailed()
			return Settings{}, fmt.Errorf("%w: %w", ErrStoreUnavailable, err)
		}
		r.mu.Lock()
		if nv > r.version {
			r.overrides, r.version = merged, nv
			r.remember(r.now(), true, r.memoWaiting)
		}
		r.mu.Unlock()
		r.recordPatch(ctx, prev, out)
		v := r.view.Load()
		r.publish(r.now(), v.snap, v.healthy)
		return eff, nil
	}
	return Settings{}, fmt.Errorf("%w: they kept changing under concurrent updates; try again", ErrVersionConflict)
}
