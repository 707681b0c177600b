package waitingroom

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"time"
)

// AuditEntry is one line of a room's audit trail: a change an operator (or an
// origin declaring the sale sold out) made to the running room, when, by whom,
// and each setting's value before and after. The store keeps the trail with
// the room, the admin API serves it, and the fairness report publishes it with
// each pause's effect (see the README, "The audit trail").
//
// A trail never holds a secret: a key rotation names key ids, never keys.
type AuditEntry struct {
	// Seq numbers the room's entries from 1, in the order the store appended
	// them; the admin API pages the trail by it.
	Seq     uint64        `json:"seq"`
	At      time.Time     `json:"at"`
	Who     string        `json:"who"`
	Action  AuditAction   `json:"action"`
	Changes []AuditChange `json:"changes"`
	// Note is the reason the operator gave, if any.
	Note string `json:"note,omitempty"`
	// Summary words a change that is not of settings, such as a batch of
	// access codes ("batch of 25 codes for lane presale"): never a code.
	Summary string `json:"summary,omitempty"`
}

// AuditChange is one setting an entry changed, with its values as the room's
// overrides encode them (JSON). Old is the configuration's value when the
// setting was not overridden before.
type AuditChange struct {
	Setting string          `json:"setting"`
	Old     json.RawMessage `json:"old"`
	New     json.RawMessage `json:"new"`
}

// AuditAction says what kind of change an entry records. New kinds (a phase
// edit, a batch of access codes) add a value here and keep the entry's shape.
type AuditAction string

const (
	AuditPatch       AuditAction = "patch"        // runtime settings changed together
	AuditPause       AuditAction = "pause"        // paused set
	AuditResume      AuditAction = "resume"       // paused cleared
	AuditQueueAll    AuditAction = "queue_all"    // queue_all changed alone
	AuditSoldOut     AuditAction = "sold_out"     // sold_out set
	AuditReopen      AuditAction = "reopen"       // sold_out cleared
	AuditKeyRotation AuditAction = "key_rotation" // the signing key changed (changes name key ids only)
	AuditCodes       AuditAction = "codes"        // a batch of access codes added (Summary says how many per lane)
)

// MaxAudit is how many entries a store keeps per room, the newest; older ones
// are dropped. Operators change a room a few times an hour, so a sale keeps
// all of its trail.
const MaxAudit = 1000

// MaxAuditNote bounds the reason an operator may give with a change.
const MaxAuditNote = 500

// Auditor is the part of a Store that keeps the room's audit trail, expiring
// with the room.
type Auditor interface {
	// AppendAudit adds e at the end of the room's trail, numbering it (the
	// Seq of e is ignored), and drops the oldest entries beyond MaxAudit. It
	// returns e as stored.
	AppendAudit(ctx context.Context, room string, e AuditEntry) (AuditEntry, error)
	// Audit returns up to limit entries (at most MaxAudit) whose Seq is
	// above after, oldest first.
	Audit(ctx context.Context, room string, after uint64, limit int) ([]AuditEntry, error)
}

// Operator says who makes a change and why, carried by the context of a
// Patch (WithOperator): the admin API names the request's remote address and
// the command line's node, an origin's sold out names the origin.
type Operator struct {
	Who  string
	Note string
	// Entry is the trail's entry the change was recorded as, set by Patch
	// when the change was made; AuditErr says why it could not be kept in
	// the store (the change itself stands).
	Entry    *AuditEntry
	AuditErr error
}

type operatorKey struct{}

// WithOperator returns a context whose Patch records op as the author of
// the change, and sets op.Entry.
func WithOperator(ctx context.Context, op *Operator) context.Context {
	return context.WithValue(ctx, operatorKey{}, op)
}

// AuditTrail reads up to limit entries of the room's trail after seq.
func (r *Room) AuditTrail(ctx context.Context, after uint64, limit int) ([]AuditEntry, error) {
	return r.store.Audit(ctx, r.id, after, limit)
}

// RecordAudit appends an entry made outside Patch (a key rotation) to the
// trail, stamped now.
func (r *Room) RecordAudit(ctx context.Context, e AuditEntry) (AuditEntry, error) {
	e.At = r.now()
	return r.store.AppendAudit(ctx, r.id, e)
}

// recordPatch appends to the trail the change from the stored overrides
// before to after. Values are taken per setting from the overrides' JSON,
// whatever the settings' encoding; a setting not overridden before had the
// configuration's value.
func (r *Room) recordPatch(ctx context.Context, before, after []byte) {
	op, _ := ctx.Value(operatorKey{}).(*Operator)
	if op == nil {
		op = &Operator{Who: "unattributed"}
	}
	changes, err := diffOverrides(before, after, r.base)
	if err != nil || len(changes) == 0 {
		op.AuditErr = err
		return
	}
	e, err := r.RecordAudit(ctx, AuditEntry{Who: op.Who, Action: auditAction(changes), Changes: changes, Note: op.Note})
	op.Entry, op.AuditErr = &e, err
}

// diffOverrides lists the settings whose JSON differs between two overrides.
func diffOverrides(before, after []byte, base Settings) ([]AuditChange, error) {
	var old, cur map[string]json.RawMessage
	if len(before) > 0 {
		if err := json.Unmarshal(before, &old); err != nil {
			return nil, fmt.Errorf("audit: %w", err)
		}
	}
	if err := json.Unmarshal(after, &cur); err != nil {
		return nil, fmt.Errorf("audit: %w", err)
	}
	var out []AuditChange
	for _, d := range settingDefs { // the table's order, so entries read alike
		v, ok := cur[d.Name]
		if !ok {
			continue
		}
		was, ok := old[d.Name]
		if !ok {
			was = baseValue(base, d.Name)
		}
		if bytes.Equal(was, v) {
			continue
		}
		out = append(out, AuditChange{Setting: d.Name, Old: was, New: v})
	}
	return out, nil
}

// baseValue is the configuration's value of a runtime setting, as the
// overrides encode it.
func baseValue(base Settings, name string) json.RawMessage {
	var m map[string]json.RawMessage
	if b, err := json.Marshal(OverridesOf(base, name)); err == nil && json.Unmarshal(b, &m) == nil {
		if v, ok := m[name]; ok {
			return v
		}
	}
	return json.RawMessage("null")
}

// auditAction names a change by the one setting it switched, or "patch".
func auditAction(changes []AuditChange) AuditAction {
	if len(changes) != 1 {
		return AuditPatch
	}
	on := string(changes[0].New) == "true"
	switch changes[0].Setting {
	case "paused":
		if on {
			return AuditPause
		}
		return AuditResume
	case "sold_out":
		if on {
			return AuditSoldOut
		}
		return AuditReopen
	case "queue_all":
		return AuditQueueAll
	}
	return AuditPatch
}
