package waitingroom

import (
	"context"
	"errors"
	"math"
	"math/bits"
	"sync"
	"time"
)

// Liveness: the line counts only fans who are still there.
//
// Every poll, page load and live WebSocket marks the fan's place as seen, and
// every admitted request marks their session as used. The marks cost the
// request path a map insert on this node; the node sends what it gathered to
// the store at most once a second, in one round trip (Store.Beat), so a poll
// and an admitted request still cost the store nothing.
//
// The store keeps, per heartbeat window (a quarter of waiting_idle_timeout),
// one bit per waiting place (docs/ARCHITECTURE.md says why a bitmap). The
// controller skips a place seen in none of the last BeatWindows windows,
// without a slot, and counts the live places from serving on, per block of
// LiveBlock places and bit by bit near the front (Liveness). Each node reads
// those counts with its view, so "people ahead" counts live places only and
// is still worked out with no store call.
//
// A place joined (or drawn) within the last timeout, or any place while the
// store's history of beats is shorter than a timeout (it was just created, or
// lost its data), counts as live: a fan who keeps polling is never skipped,
// whatever the store lost. A skipped fan who comes back finds their place
// below serving and claims as an admission that lapsed.
//
// Sessions: the store keeps each live session's last use; with
// session_idle_timeout the controller ends a session unused for that long
// and records it with the revocations, so that every node refuses the
// session's passes (those issued before it idled out) and a claim from the
// fan's ticket is a lapsed admission rather than a finished one.

// maxBeatsHeld bounds what a node keeps for the store while it cannot reach
// it: beyond it, marks are dropped (a fan who keeps polling marks again).
const maxBeatsHeld = 1 << 20

// beatInterval is how often at most a node sends its marks.
const beatInterval = time.Second

// beats gathers marks between two flushes.
type beats struct {
	mu       sync.Mutex
	places   map[uint64]struct{}
	sessions map[string]struct{}
	// told are the marks of what places' holders were told not sent yet,
	// and sent those this node sent already: a place is told the same
	// outcome at every poll, and the store needs it once. sent is bounded
	// like the rest; emptied when full, it only costs marks sent again,
	// which the store adds to what it has.
	told, sent map[uint64]ToldMarks
	last       time.Time // the last flush
}

func (b *beats) place(p uint64) {
	b.mu.Lock()
	noteBeat(&b.places, p)
	b.mu.Unlock()
}

func (b *beats) session(visitor string) {
	b.mu.Lock()
	noteBeat(&b.sessions, visitor)
	b.mu.Unlock()
}

// tell notes marks m for place p, unless this node sent them already.
func (b *beats) tell(p uint64, m ToldMarks) {
	b.mu.Lock()
	if b.sent[p]&m != m {
		b.addTold(p, m)
	}
	b.mu.Unlock()
}

// forgetSent forgets which marks this node sent: the store lost them with the
// room, and the next answers to the fans still waiting send them again.
func (b *beats) forgetSent() {
	b.mu.Lock()
	b.sent = nil
	b.mu.Unlock()
}

// addTold adds marks m to those of place p not sent yet.
func (b *beats) addTold(p uint64, m ToldMarks) {
	if b.told == nil {
		b.told = make(map[uint64]ToldMarks)
	}
	if _, ok := b.told[p]; ok || len(b.told) < maxBeatsHeld {
		b.told[p] |= m
	}
}

// noteBeat adds k to the set, unless it holds maxBeatsHeld already.
func noteBeat[K comparable](set *map[K]struct{}, k K) {
	if *set == nil {
		*set = make(map[K]struct{})
	}
	if len(*set) < maxBeatsHeld {
		(*set)[k] = struct{}{}
	}
}

// take returns what was gathered, if a flush is due at now.
func (b *beats) take(now time.Time) (Beats, bool) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if now.Sub(b.last) < beatInterval || (len(b.places) == 0 && len(b.sessions) == 0 && len(b.told) == 0) {
		return Beats{}, false
	}
	b.last = now
	out := Beats{Places: make([]uint64, 0, len(b.places)), Sessions: make([]string, 0, len(b.sessions))}
	for p := range b.places {
		out.Places = append(out.Places, p)
	}
	for v := range b.sessions {
		out.Sessions = append(out.Sessions, v)
	}
	if len(b.told) > 0 {
		if b.sent == nil || len(b.sent)+len(b.told) > maxBeatsHeld {
			b.sent = make(map[uint64]ToldMarks, len(b.told))
		}
		out.Told = make([]PlaceTold, 0, len(b.told))
		for p, m := range b.told {
			out.Told = append(out.Told, PlaceTold{Place: p, Marks: m})
			b.sent[p] |= m
		}
	}
	clear(b.places)
	clear(b.sessions)
	clear(b.told)
	return out, true
}

// giveBack keeps marks a failed flush could not send, for the next one.
func (b *beats) giveBack(out Beats) {
	for _, p := range out.Places {
		b.place(p)
	}
	for _, v := range out.Sessions {
		b.session(v)
	}
	b.mu.Lock()
	for _, t := range out.Told {
		b.addTold(t.Place, t.Marks)
	}
	b.mu.Unlock()
}

// flushBeats sends the marks gathered since the last flush, at most once a
// second.
func (r *Room) flushBeats(ctx context.Context, now time.Time) error {
	out, ok := r.beats.take(now)
	if !ok {
		return nil
	}
	lim := r.settings().limitsAt(now)
	err := r.store.Beat(ctx, r.id, out, now, lim)
	if errors.Is(err, ErrNoRoom) {
		// The store lost the room: the controller step of this tick
		// re-seeds it, as it always has, and the marks go with the next.
		r.beats.giveBack(out)
		return nil
	}
	if err != nil {
		r.beats.giveBack(out)
		return err
	}
	r.stats.Beats.Add(1)
	return nil
}

// markWaiting notes that a waiting fan looked: their place if a draw or their
// key gave them one, else their key (a fan awaiting the random method's draw).
func (r *Room) markWaiting(t Ticket, st Status) {
	switch {
	case st.State != StateQueued && st.State != StatePaused && st.State != StatePrequeue && st.State != StateWaitlist:
	case st.Position == nil:
		r.beats.place(t.Key) // not placed yet
	default:
		r.beats.place(t.Place)
	}
	r.noteTold(t, st)
}

// noteTold marks the outcome a fan is being told for their place, so that the
// fairness report counts what fans were in fact told (PlacesTold). An
// outcome is only told with a position, so the place is the ticket's.
func (r *Room) noteTold(t Ticket, st Status) {
	if m := markOf(st.Outcome); m != 0 && st.Position != nil {
		r.beats.tell(t.Place, m)
	}
}

// idleOuts are the visitors whose sessions idled out, as the store recorded
// them: their passes issued before then are refused.
type idleOuts struct {
	expiringSet[idleOut]
}

type idleOut struct {
	at, until time.Time
}

func (io idleOut) forgetAt() time.Time { return io.until }

func (o *idleOuts) add(visitor string, at, until time.Time) {
	o.put(visitor, idleOut{at: at, until: until})
}

// voids reports whether p belongs to a session that idled out. A pass issued
// after the idle-out (its holder came back) is good: passes carry whole
// seconds, and a session idles out at least a minute after its pass.
func (o *idleOuts) voids(p Pass) bool {
	io, ok := o.get(p.Subject)
	return ok && p.IssuedAt.Before(io.at.Add(-time.Second))
}

// liveIndex answers "how many live places between a and b" from a snapshot's
// Liveness in constant time: prefix sums over the blocks, and over the words
// of the exact head.
type liveIndex struct {
	lv     Liveness
	blocks []uint64 // blocks[i]: live places in [From, From+i*LiveBlock)
	words  []uint64 // words[i]: live places in the head's first i*64 places
}

func newLiveIndex(lv Liveness) *liveIndex {
	x := &liveIndex{lv: lv, blocks: make([]uint64, len(lv.Counts)+1)}
	for i, c := range lv.Counts {
		x.blocks[i+1] = x.blocks[i] + uint64(c)
	}
	nw := len(lv.Head) / 8
	x.words = make([]uint64, nw+1)
	for i := range nw {
		x.words[i+1] = x.words[i] + uint64(bits.OnesCount64(x.word(i)))
	}
	return x
}

func (x *liveIndex) word(i int) uint64 {
	var w uint64
	for _, b := range x.lv.Head[i*8 : i*8+8] {
		w = w<<8 | uint64(b)
	}
	return w
}

// upTo counts the live places in [From, p), for p up to Young.
func (x *liveIndex) upTo(p uint64) float64 {
	if p <= x.lv.From {
		return 0
	}
	off := p - x.lv.From
	if off < uint64(len(x.words)-1)*64 {
		i := off / 64
		n := x.words[i]
		if r := off % 64; r > 0 {
			n += uint64(bits.OnesCount64(x.word(int(i)) >> (64 - r)))
		}
		return float64(n)
	}
	i := off / LiveBlock
	if i >= uint64(len(x.lv.Counts)) {
		return float64(x.blocks[len(x.blocks)-1])
	}
	// Within a block known by its count only: its live places spread evenly.
	part := float64(off%LiveBlock) / LiveBlock
	return float64(x.blocks[i]) + part*float64(x.lv.Counts[i])
}

// ahead splits the places in [serving, p) into those known live (measured)
// and those too young to judge (young), which count as live.
func (v *view) ahead(p uint64) (measured, young float64) {
	serving := v.snap.Serving
	if p <= serving {
		return 0, 0
	}
	x := v.live
	if x == nil || x.lv.Young <= serving {
		return 0, float64(p - serving - v.inMargin(serving, p))
	}
	edge := min(p, x.lv.Young)
	measured = x.upTo(edge) - x.upTo(serving)
	if p > edge {
		young = float64(p - edge - v.inMargin(edge, p))
	}
	return max(0, measured), young
}

// inMargin counts the places of [a, b) in a re-seed's margin: too young to
// judge, but most of them were never handed out, so they count as nobody.
// (The few a node lost with the store handed out are undercounted until the
// beats judge them; the line reaches them sooner than their holders thought.)
func (v *view) inMargin(a, b uint64) uint64 {
	lo, hi := max(a, v.snap.Margin[0]), min(b, v.snap.Margin[1])
	if lo >= hi {
		return 0
	}
	return hi - lo
}

// people turns places ahead into people: live places are people; young ones
// are scaled by the share of admitted fans who show up, as before liveness
// could tell.
func (v *view) people(measured, young float64) uint64 {
	return uint64(math.Round(measured + young*v.showUp))
}
