package waitingroom

import (
	"context"
	"time"
)

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
}

// HistoryKind says what a history entry records.
type HistoryKind string

const (
	// HistoryAdmit: places let in, by the controller or on the spot.
	HistoryAdmit HistoryKind = "admit"
	// HistoryDraw: a rolling draw of the random method.
	HistoryDraw HistoryKind = "draw"
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
