package waitingroom

import (
	"context"
	"encoding/hex"
	"errors"
	"time"
)

// ErrNotPublished: the fairness report of a room is published once the room
// has closed (event_end passed) or sold out, not while the sale runs: the
// seed it reveals would let anyone foresee the random method's next draws.
var ErrNotPublished = errors.New("waitingroom: the fairness report is published once the room has closed or sold out")

// ErrNoDraw: the report's room made no draw, so there is no place to
// recompute: its fans were let in first come, first served, in the order of
// their keys. The report then has neither a seed nor a commitment, which is
// not a broken seed and must not be reported as one.
var ErrNoDraw = errors.New("the room made no draw: its fans were let in first come, first served, in the order of their keys, so there is no place to recompute")

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
	Returned  uint64 `json:"returned"`  // fans let in at the front: lapsed ones within return_window, idled-out sessions resumed
	IdledOut  uint64 `json:"idled_out"` // sessions ended for want of requests (session_idle_timeout)
}

// Fairness builds the room's fairness report from the store's history and
// this node's view. It reads the store (up to MaxHistory entries, a page at a
// time), so the gateway caches it.
func (r *Room) Fairness(ctx context.Context) (FairnessReport, error) {
	now := r.now()
	v := r.view.Load()
	s := v.settings
	rep := FairnessReport{Room: r.id, GeneratedAt: now.UTC(), QueueingMethod: s.QueueingMethod}
	switch {
	case s.SoldOut:
		rep.Reason = "sold_out"
	case s.PhaseAt(now) == Ended:
		rep.Reason = "closed"
	default:
		return FairnessReport{}, ErrNotPublished
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
	for _, e := range hist {
		switch e.Kind {
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
	rep.Counts = FairnessCounts{
		Issued: snap.Seq, Serving: snap.Serving, Admitted: snap.Admitted, Skipped: snap.Skipped,
		Claimed: snap.Claimed, Lapsed: snap.Abandoned, Unclaimed: uint64(max(0, snap.Pending)),
		Returned: snap.Returned, IdledOut: snap.IdledOut,
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
	return rep, nil
}

// VerifyPlace recomputes a place from a published report: the place of the
// fan whose status showed draw_index index (their order key), placed by the
// pre-queue's draw or by a rolling draw of the random method. It checks the
// seed against the commitment first, and is ErrNoDraw for a report without a
// draw. Places count from 0 (place 0 was first in line); admission is the
// report's admission range that reached it, if any. docs/PROTOCOL.md is the
// same procedure in words.
func VerifyPlace(rep FairnessReport, index uint64) (place uint64, admission *HistoryEntry, err error) {
	if rep.Seed == "" && rep.Commitment == "" {
		return 0, nil, ErrNoDraw
	}
	seed, err := hex.DecodeString(rep.Seed)
	if err != nil || len(seed) != DrawSeedSize {
		return 0, nil, errors.New("the report's seed is not 32 bytes of hex")
	}
	if DrawCommitment(seed) != rep.Commitment {
		return 0, nil, errors.New("the seed does not match the commitment: SHA-256(seed) differs")
	}
	switch {
	case rep.DrawSize != nil && index < *rep.DrawSize:
		place = NewDraw(seed, *rep.DrawSize).Place(index)
	default:
		found := false
		for _, e := range rep.Epochs {
			if index >= e.Start && index < e.Start+e.Count {
				place = e.Start + NewDraw(EpochSeed(seed, e.Number), e.Count).Place(index-e.Start)
				found = true
				break
			}
		}
		if !found {
			return 0, nil, errors.New("no draw of this report covers that draw_index: that order key was placed first come, first served, so its place is the order key itself")
		}
	}
	for i := range rep.Admissions {
		if e := &rep.Admissions[i]; place >= e.Start && place < e.Start+e.Count {
			return place, e, nil
		}
	}
	return place, nil, nil
}
