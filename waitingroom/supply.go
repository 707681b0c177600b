package waitingroom

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"sync"
	"time"
)

// Supply is what is left to sell (docs/supply.md): the origin reports it on
// its answers (X-Waiting-Room-Supply), or an operator sets it. Each report is
// a sample in the store, numbered, with the room's claims and live sessions
// at the time, so that every node folds the same samples into the same
// estimate (supplyestimate.go), and kept in the history for the fairness
// report's calibration.

// SupplySample is one report of the supply as the store recorded it.
type SupplySample struct {
	// N numbers the samples of a room from 1, without gaps.
	N     uint64    `json:"n"`
	Units uint64    `json:"units"`
	At    time.Time `json:"at"`
	// Claimed and Active are the room's claims (Counters.Claimed) and live
	// sessions when the sample was recorded; Waiting the places issued and
	// not yet reached (Seq - Serving, ghosts included).
	Claimed uint64 `json:"claimed"`
	Active  uint64 `json:"active"`
	Waiting uint64 `json:"waiting"`
}

// MaxSupplyTail is how many of the latest samples a snapshot carries: a node
// refreshing twice a second folds every one unless more come in between.
const MaxSupplyTail = 8

// MaxSupplyUnits bounds a reported supply: more is not a supply but a typo.
const MaxSupplyUnits = 1 << 40

// Supplier is the part of a Store that keeps the supply.
type Supplier interface {
	// ReportSupply records units as the room's supply at now: a new sample,
	// numbered after the last, with the room's claims and live sessions,
	// appended to the history and kept among the snapshot's last
	// MaxSupplyTail. The latest report wins: one dated before the last
	// sample changes nothing (ok false). One round trip.
	ReportSupply(ctx context.Context, room string, units uint64, now time.Time) (s SupplySample, ok bool, err error)
}

// ErrBadSupply is what ParseSupply refuses.
var ErrBadSupply = errors.New("supply must be a whole number of units, 0 or more")

// ParseSupply reads a supply as the header and the admin API carry it: a
// whole number of units, 0 or more.
func ParseSupply(s string) (uint64, error) {
	n, err := strconv.ParseUint(strings.TrimSpace(s), 10, 64)
	if err != nil || n > MaxSupplyUnits {
		return 0, fmt.Errorf("%w: %q", ErrBadSupply, s)
	}
	return n, nil
}

// supplyNote is the latest supply this node read from the origin's answers,
// sent by the next Tick: the admitted path never waits on the store.
type supplyNote struct {
	mu    sync.Mutex
	units uint64
	at    time.Time
	set   bool
}

// NoteSupply records the supply the origin reported on an answer now; the
// next Tick sends the latest one to the store. No store call.
func (r *Room) NoteSupply(units uint64) {
	now := r.now()
	r.supplyNote.mu.Lock()
	defer r.supplyNote.mu.Unlock()
	if !r.supplyNote.set || !now.Before(r.supplyNote.at) {
		r.supplyNote.units, r.supplyNote.at, r.supplyNote.set = units, now, true
	}
	r.stats.SupplyReports.Add(1)
}

// RefuseSupply counts a supply from the origin that was not a number of
// units: it is ignored.
func (r *Room) RefuseSupply() { r.stats.SupplyRefused.Add(1) }

// flushSupply sends the latest supply noted since the last flush.
func (r *Room) flushSupply(ctx context.Context) error {
	n := &r.supplyNote
	n.mu.Lock()
	units, at, set := n.units, n.at, n.set
	n.set = false
	n.mu.Unlock()
	if !set {
		return nil
	}
	if _, _, err := r.store.ReportSupply(ctx, r.id, units, at); err != nil {
		n.mu.Lock()
		if !n.set {
			n.units, n.at, n.set = units, at, true
		}
		n.mu.Unlock()
		if errors.Is(err, ErrNoRoom) {
			// The store lost the room: this tick's controller step re-seeds
			// it, and the report goes with the next. Failing the tick here
			// would stop it before the step, at every tick, for as long as
			// the report waits.
			return nil
		}
		return err
	}
	return r.soldOutAtZero(ctx, units)
}

// soldOutAtZero declares the sale sold out when the supply reported is 0 and
// the waitlist is on: the line becomes the waitlist (docs/waitlist.md).
// Without the waitlist a supply of 0 only informs fans (docs/supply.md).
func (r *Room) soldOutAtZero(ctx context.Context, units uint64) error {
	if s := r.settings(); units != 0 || !s.Waitlist || s.SoldOut {
		return nil
	}
	return r.DeclareSoldOut(ctx)
}

// AuditSupply is the audit action of an operator setting the supply (kept
// beside the other actions of audit.go).
const AuditSupply AuditAction = "supply"

// SetSupply records units as the supply now, an operator's act (named by the
// context's Operator, see WithOperator), in the audit trail, and folds it
// into this node's view at once so that its next answers know it.
func (r *Room) SetSupply(ctx context.Context, units uint64) (SupplySample, error) {
	if units > MaxSupplyUnits {
		return SupplySample{}, ErrBadSupply
	}
	now := r.now()
	old, known := r.Supply()
	s, recorded, err := r.store.ReportSupply(ctx, r.id, units, now)
	if err != nil {
		r.storeFailed()
		return SupplySample{}, fmt.Errorf("%w: %w", ErrStoreUnavailable, err)
	}
	before := json.RawMessage("null")
	if known {
		before = json.RawMessage(strconv.FormatUint(old.Last.Units, 10))
	}
	op, _ := ctx.Value(operatorKey{}).(*Operator)
	if op == nil {
		op = &Operator{Who: "unattributed"}
	}
	e, aerr := r.RecordAudit(ctx, AuditEntry{Who: op.Who, Action: AuditSupply, Note: op.Note, Changes: []AuditChange{{
		Setting: "supply", Old: before, New: json.RawMessage(strconv.FormatUint(units, 10)),
	}}})
	op.Entry, op.AuditErr = &e, aerr
	if recorded {
		// The sample every node will fold, folded here at once so that
		// this node's next answers know it (as Patch publishes at once).
		r.ShareSupply(s)
	}
	if err := r.soldOutAtZero(ctx, units); err != nil {
		return s, err
	}
	return s, nil
}

// ShareSupply folds a sample just recorded in the store into this handle's
// view at once, so that its next answers know it: SetSupply's own, or one
// another handle of the room on this node recorded (a reload keeps two for a
// while, and metrics or the admin API may read either). Samples are numbered,
// so the store's copy, read at the next step, is not folded twice; samples
// between that this handle had not read yet are measured as one interval.
func (r *Room) ShareSupply(s SupplySample) {
	r.mu.Lock()
	r.foldSupply([]SupplySample{s})
	r.mu.Unlock()
	v := r.view.Load()
	r.publish(r.now(), v.snap, v.healthy)
}

// foldSupply folds the samples of a snapshot not folded yet, in order.
// Called with r.mu held.
func (r *Room) foldSupply(tail []SupplySample) {
	if n := len(tail); n > 0 && tail[n-1].N < r.supplyEst.Last.N {
		// The store lost the room and numbers its samples afresh: so does
		// the measure.
		r.supplyEst = SupplyEstimate{}
	}
	for _, s := range tail {
		r.supplyEst = r.supplyEst.Fold(s)
	}
}

// Supply returns this node's supply estimate, and whether the room knows its
// supply at all.
func (r *Room) Supply() (SupplyEstimate, bool) {
	v := r.view.Load()
	return v.supply, v.supply.Known
}

// tell is what a fan with ahead people ahead of them is told, if the room
// knows its supply.
func (v *view) tell(ahead uint64) (Told, bool) {
	if !v.supply.Known {
		return Told{}, false
	}
	front := float64(v.snap.Claimed) + float64(max(0, v.snap.Pending)) + float64(max(0, v.snap.Returning))
	return v.supply.Tell(front+float64(ahead)+1, front), true
}

// TellAhead is what a fan with ahead people ahead would be told now, from
// this node's view (the zero Told when the supply is unknown).
func (r *Room) TellAhead(ahead uint64) Told {
	t, _ := r.view.Load().tell(ahead)
	return t
}
