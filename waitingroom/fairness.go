package waitingroom

import (
	"context"
	"encoding/hex"
	"time"
)

// FairnessReport is what a room publishes after its sale at
// <path_prefix>/fairness so that anyone can check it was fair: the draw's
// commitment, seed and size, every rolling draw, and every admission in the
// order of places with its time. docs/PROTOCOL.md specifies every field. No
// personal data: only the fan whose ticket carries an order key knows it is
// theirs.
type FairnessReport struct {
	Room        string    `json:"room"`
	Reason      string    `json:"reason"` // "closed" or "sold_out"
	GeneratedAt time.Time `json:"generated_at"`
	// QueueingMethod is the method in force when the report was made.
	QueueingMethod QueueingMethod `json:"queueing_method"`

	// The draws (all absent when the room drew nobody): the commitment
	// published before the pre-queue opened, the seed it commits to, and
	// how many order keys (0 to DrawSize-1) the pre-queue's draw covered
	// (absent when there was no pre-queue draw).
	Algorithm   string     `json:"algorithm,omitempty"`
	Commitment  string     `json:"commitment,omitempty"`
	CommittedAt *time.Time `json:"committed_at,omitempty"`
	Seed        string     `json:"seed,omitempty"`
	DrawSize    *uint64    `json:"draw_size,omitempty"`
	// Epochs are the random method's draws (kind "draw"), each placing the
	// order keys [start, start+count) among the same places, with the seed
	// EpochSeed(seed, epoch).
	Epochs []HistoryEntry `json:"epochs"`
	// PhaseDraws are the draws of the phases' own pre-queues, each with
	// its own seed (phasedraw.go).
	PhaseDraws []PhaseDraw `json:"phase_draws,omitempty"`

	// Admissions (kind "admit") are the places the line reached, in order:
	// places [start, start+count) at the time given. A range covers every
	// place the line reached then, ghosts included (their turn came and
	// went; Counts.Skipped).
	Admissions []HistoryEntry `json:"admissions"`
	// Complete: the admissions cover every place below Serving (0 to
	// Serving-1) with no gap. A store that lost its data loses the history before the loss,
	// and the report says so rather than leave a reader to guess.
	Complete bool `json:"complete"`

	Counts FairnessCounts `json:"counts"`

	// Operations are the changes operators made to the running room, oldest
	// first, with old and new values (the audit trail, fairnessaudit.go),
	// and Pauses each pause of admission with how many were let in meanwhile.
	Operations []PublicChange `json:"operations"`
	Pauses     []PauseEffect  `json:"pauses"`

	// Supply, when the room knew its supply, is every estimate it made of
	// fans' chances beside what happened (supplycalibration.go).
	Supply *SupplyCalibration `json:"supply,omitempty"`
	// Lanes are the priority lanes' weights, splits and admissions, with
	// their check (lanecheck.go); absent in a room without lanes, whose
	// admissions are all the general lane's, above.
	Lanes *LanesReport `json:"lanes,omitempty"`
	// Waitlist, when the line became a waitlist at sold out, is its
	// account: each return of the supply and the places it reached
	// (fairnesswaitlist.go); absent otherwise.
	Waitlist *WaitlistReport `json:"waitlist,omitempty"`
}

// FairnessCounts are the room's totals when the report was made. Every place
// the line reached is admitted or skipped (Serving = Admitted + Skipped), and
// every admitted place was claimed, lapsed, or is still unclaimed within its
// grace (docs/PROTOCOL.md, "Counts").
type FairnessCounts struct {
	Issued   uint64 `json:"issued"`   // order keys handed out (0 to issued-1)
	Serving  uint64 `json:"serving"`  // the line reached every place below it
	Admitted uint64 `json:"admitted"` // places reached whose holder was given a slot
	Skipped  uint64 `json:"skipped"`  // places reached with nobody seen there (ghosts): no slot
	Claimed  uint64 `json:"claimed"`  // sessions opened, the returns of lapsed fans included
	Lapsed   uint64 `json:"lapsed"`   // admitted places nobody claimed within the grace
	// Unclaimed are admitted places whose grace was still running, unclaimed,
	// when the report was made. A room that has sold out or closed lets
	// nobody claim, so each lapses when its grace ends and a later report
	// counts it under Lapsed.
	Unclaimed uint64 `json:"unclaimed"`
	Returned  uint64 `json:"returned"`  // fans let in at the front: lapsed ones within return_window, idled-out sessions resumed, requeued fans
	IdledOut  uint64 `json:"idled_out"` // sessions ended for want of requests (session_idle_timeout)
	// Requeued are sessions the site failed whose fans were put back at the
	// front (docs/PROTOCOL.md, "Requeue"); left out while there were none.
	Requeued uint64 `json:"requeued,omitempty"`
}

// reportPublished reports whether the fairness report is out: the room has
// sold out or closed (event_end passed). From then on the seed is public, at
// the draw endpoint as in the report: one rule for both.
func reportPublished(s Settings, now time.Time) bool {
	return s.SoldOut || s.PhaseAt(now) == Ended
}

// Fairness builds the room's fairness report from the store's history and
// this node's view. It reads the store (up to MaxHistory entries, a page at a
// time), so the gateway caches it.
func (r *Room) Fairness(ctx context.Context) (FairnessReport, error) {
	now := r.now()
	v := r.view.Load()
	s := v.settings
	rep := FairnessReport{Room: r.id, GeneratedAt: now.UTC(), QueueingMethod: s.QueueingMethod}
	if !reportPublished(s, now) {
		return FairnessReport{}, ErrNotPublished
	}
	rep.Reason = "closed"
	if s.SoldOut {
		rep.Reason = "sold_out"
	}
	var hist []HistoryEntry
	for len(hist) < MaxHistory {
		page, err := r.store.History(ctx, r.id, len(hist), min(MaxHistoryPage, MaxHistory-len(hist)))
		if err != nil {
			return FairnessReport{}, err
		}
		hist = append(hist, page...)
		if len(page) < MaxHistoryPage {
			break
		}
	}
	rep.Epochs, rep.Admissions = []HistoryEntry{}, []HistoryEntry{}
	next := uint64(0)
	rep.Complete = true
	var supply []SupplySample
	var laneHist []HistoryEntry
	for _, e := range hist {
		if lane, _ := LaneOfPlace(e.Start); e.Kind == HistoryLanes || lane > 0 {
			laneHist = append(laneHist, e)
			continue
		}
		switch e.Kind {
		case HistorySupply:
			if e.Supply != nil {
				supply = append(supply, *e.Supply)
			}
		case HistoryDraw:
			rep.Epochs = append(rep.Epochs, e)
		case HistoryAdmit:
			rep.Admissions = append(rep.Admissions, e)
			if e.Start != next {
				rep.Complete = false
			}
			next = e.Start + e.Count
		}
	}
	snap := v.snap
	if next != snap.Serving || len(hist) >= MaxHistory {
		rep.Complete = false
	}
	rep.Supply = CalibrateSupply(supply, snap.Claimed)
	if rep.Supply != nil {
		// The marks nodes send with their beats: an answer counts here
		// within a second or so of being given.
		tally, err := r.store.ToldTally(ctx, r.id)
		if err != nil {
			return FairnessReport{}, err
		}
		places := placesTold(tally)
		rep.Supply.Places = &places
	}
	rep.Waitlist = waitlistReport(hist)
	rep.Counts = FairnessCounts{
		Issued: snap.Seq, Serving: snap.Serving, Admitted: snap.Admitted, Skipped: snap.Skipped,
		Claimed: snap.Claimed, Lapsed: snap.Abandoned, Unclaimed: uint64(max(0, snap.Pending)),
		Returned: snap.Returned, IdledOut: snap.IdledOut, Requeued: snap.Requeued,
	}

	// Every phase's lane weights are committed by now; one committed only
	// now (the phase was set after it started) is dated now, and the lane
	// check says so.
	if err := r.syncLaneCommits(ctx, now); err != nil {
		return FairnessReport{}, err
	}
	rep.Lanes = lanesReport(s, r.laneCommitTimes(), snap, rep.Admissions, laneHist)
	if err := r.addAuditTrail(ctx, &rep); err != nil {
		return FairnessReport{}, err
	}

	r.mu.Lock()
	seed, at, d := r.seed, r.seedAt, r.draw
	r.mu.Unlock()
	if seed != nil && (d != nil || len(rep.Epochs) > 0) {
		rep.Algorithm = DrawAlgorithm
		rep.Commitment = DrawCommitment(seed)
		rep.CommittedAt = &at
		rep.Seed = hex.EncodeToString(seed)
		if d != nil {
			n := d.Size()
			rep.DrawSize = &n
		}
	}
	if rep.PhaseDraws = r.phaseDrawInfo(s, snap.PhaseRanges); len(rep.PhaseDraws) > 0 {
		rep.Algorithm = DrawAlgorithm
	}
	return rep, nil
}

// HistoryEntry is one line of a room's public history, which the fairness
// report publishes once the sale is over (see docs/fairness.md, "The fairness
// report"): an admission, places [Start, Start+Count) let in At, or a draw
// of the random method, epoch Number over the keys [Start, Start+Count)
// made At. Places are 0-based order keys. Entries are appended in the order
// they happen, so admissions come in order-key order: each starts where the
// one before it ended, unless the store lost its data in between.
type HistoryEntry struct {
	Kind   HistoryKind `json:"kind"`
	Start  uint64      `json:"start"`
	Count  uint64      `json:"count"`
	Number uint64      `json:"epoch,omitempty"`
	At     time.Time   `json:"at"`
	// Supply is the sample of a supply entry (kind "supply", supply.go);
	// Start, Count and Number are then zero.
	Supply *SupplySample `json:"-"`
	// Shares, for a HistoryLanes entry, are the step's split between the
	// priority lanes, by lane number (laneshistory.go).
	Shares []LaneShare `json:"shares,omitempty"`
	// Waitlist, for a HistoryWaitlist entry, is the fans and units the
	// step let in from the waitlist (waitlist.go); Number is then the
	// supply sample it went by.
	Waitlist *WaitlistStep `json:"-"`
	// Weights, for a HistoryLanes entry, are the lanes' weights the step
	// split by (Lanes.String), those of the phase then in force; "" in a
	// history written before steps recorded them.
	Weights string `json:"weights,omitempty"`
}

// HistoryKind says what a history entry records.
type HistoryKind string

const (
	// HistoryAdmit: places let in, by the controller or on the spot.
	HistoryAdmit HistoryKind = "admit"
	// HistoryDraw: a rolling draw of the random method.
	HistoryDraw HistoryKind = "draw"
	// HistorySupply: a report of the supply (supply.go).
	HistorySupply HistoryKind = "supply"
	// HistoryLanes: how a controller step shared its admissions between
	// the priority lanes (laneshistory.go).
	HistoryLanes HistoryKind = "lanes"
)

// MaxHistoryPage is the most entries one History call returns.
const MaxHistoryPage = 10_000

// MaxHistory is the most entries a fairness report reads: one a second for
// more than a day of admissions. A store keeps an entry per controller step
// that let someone in (admissions on the spot within one second share an
// entry), so a sale stays far below it.
const MaxHistory = 100_000

// Historian is the part of a Store that keeps the room's public history.
// History returns up to limit entries (at most MaxHistoryPage) from the
// from-th (0-based), oldest first.
type Historian interface {
	History(ctx context.Context, room string, from, limit int) ([]HistoryEntry, error)
}

// AppendAdmission adds places [start, start+n) admitted at now to a history:
// it extends the last entry when that one ends at start and was written in
// the same second, so that admissions on the spot cost one entry a second,
// not one a visitor. Stores that keep the history in memory use it; the
// Redis store does the same in Lua.
func AppendAdmission(h []HistoryEntry, start, n uint64, now time.Time) []HistoryEntry {
	if n == 0 {
		return h
	}
	if k := len(h); k > 0 {
		last := &h[k-1]
		if last.Kind == HistoryAdmit && last.Start+last.Count == start && last.At.Unix() == now.Unix() {
			last.Count += n
			return h
		}
	}
	return append(h, HistoryEntry{Kind: HistoryAdmit, Start: start, Count: n, At: now})
}
