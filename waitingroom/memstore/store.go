package memstore

import (
	"container/heap"
	"context"
	"fmt"
	"sort"
	"sync"
	"time"

	"github.com/foyer-dev/foyer/waitingroom"
)

// Store is the embedded waitingroom.Store for a single node: the same semantics
// as the Redis store, no server to run. It keeps counters per room plus the live sessions
// and the visitors who already had one; nothing per waiting visitor.
type Store struct {
	mu    sync.Mutex
	rooms map[string]*memRoom
}

// New returns an empty store.
func New() *Store { return &Store{rooms: make(map[string]*memRoom)} }

var _ waitingroom.Store = (*Store)(nil)

type memRoom struct {
	mu          sync.Mutex
	c           waitingroom.Counters
	credit      float64
	lastTick    int64
	pending     int
	batches     []waitingroom.Batch
	sessions    sessionHeap
	live        map[string]*session
	finished    map[string]time.Time // visitor -> forget at
	finishedQ   []forget
	returners   map[string]time.Time // visitor -> last asked
	drawClosed  bool
	epochs      []waitingroom.Epoch // rolling draws of the random method, oldest first
	drawSize    uint64
	seed        []byte
	seedAt      time.Time
	overrides   []byte
	version     int64
	incarnation string
	heldLeft    int // held placeholders "held:0".."held:<heldLeft-1>" not yet given to a claim
	revoked     []waitingroom.Revocation
	revCursor   int64

	// What survives a loss (see waitingroom.Seed).
	forgotten uint64
	settle    time.Time
	blank     bool
}

type forget struct {
	visitor string
	at      time.Time
}

func (s *Store) room(name string) (*memRoom, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	r, ok := s.rooms[name]
	if !ok {
		return nil, waitingroom.ErrNoRoom
	}
	return r, nil
}

// Init implements waitingroom.Store.
func (s *Store) Init(_ context.Context, name string, seed waitingroom.Seed) error {
	s.mu.Lock()
	r, ok := s.rooms[name]
	if !ok && seed.RaiseOnly {
		s.mu.Unlock()
		return waitingroom.ErrNoRoom
	}
	created := !ok
	if !ok {
		r = &memRoom{
			credit:    1, // a new room lets its first visitor straight in
			live:      make(map[string]*session),
			finished:  make(map[string]time.Time),
			returners: make(map[string]time.Time),
		}
		s.rooms[name] = r
	}
	s.mu.Unlock()
	r.mu.Lock()
	defer r.mu.Unlock()
	r.c = r.c.Max(seed.Counters)
	if created {
		r.incarnation = seed.Incarnation
		if r.incarnation == "" {
			r.incarnation = waitingroom.NewIncarnation()
		}
		r.settle, r.blank = seed.SettleUntil, !seed.Whole
	}
	r.restore(seed)
	// A blank room (created by a node that knew nothing of it) takes what the
	// first node that knew more restores.
	if created || (r.blank && seed.Whole) {
		r.blank = r.blank && !seed.Whole
		r.drawClosed, r.drawSize = seed.DrawClosed, seed.DrawSize
		r.epochs = append([]waitingroom.Epoch(nil), seed.Epochs...)
		for _, b := range seed.Batches {
			b.Restored = true
			r.batches = append(r.batches, b)
		}
		sort.Slice(r.batches, func(i, j int) bool { return r.batches[i].Start < r.batches[j].Start })
		base := r.heldLeft
		r.heldLeft += seed.Held
		for i := base; i < r.heldLeft; i++ {
			ses := &session{visitor: fmt.Sprintf("held:%d", i), expires: seed.HeldUntil}
			heap.Push(&r.sessions, ses)
			r.live[ses.visitor] = ses
		}
	}
	return nil
}

// restore applies what a seed carries beyond the counters, whether or not the
// room exists: the overrides when the seed's are newer, the forgotten places,
// and the sessions known from their passes.
func (r *memRoom) restore(seed waitingroom.Seed) {
	if seed.OverridesVersion > r.version {
		r.overrides, r.version = append([]byte(nil), seed.Overrides...), seed.OverridesVersion
	}
	r.forgotten = max(r.forgotten, seed.Forgotten)
	for _, hs := range seed.Sessions {
		if _, ok := r.live[hs.Visitor]; ok {
			continue
		}
		ses := &session{visitor: hs.Visitor, expires: hs.Until}
		heap.Push(&r.sessions, ses)
		r.live[hs.Visitor] = ses
		r.finished[hs.Visitor] = hs.Forget
		r.finishedQ = append(r.finishedQ, forget{visitor: hs.Visitor, at: hs.Forget})
	}
}

// Drop forgets everything the store holds for a room, as a restarted server
// without persistence would. Gateways then re-seed it from what they last saw.
func (s *Store) Drop(name string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	delete(s.rooms, name)
}

// Join implements waitingroom.Store.
func (s *Store) Join(ctx context.Context, name, visitor string, now time.Time, lim waitingroom.Limits) (waitingroom.JoinResult, error) {
	res, err := s.JoinMany(ctx, name, []string{visitor}, now, lim)
	if err != nil {
		return waitingroom.JoinResult{}, err
	}
	return res[0], nil
}

// JoinMany implements waitingroom.Store.
func (s *Store) JoinMany(_ context.Context, name string, visitors []string, now time.Time, lim waitingroom.Limits) ([]waitingroom.JoinResult, error) {
	r, err := s.room(name)
	if err != nil {
		return nil, err
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	if now.Before(r.settle) {
		return nil, waitingroom.ErrSettling
	}
	r.expireSessions(now)
	out := make([]waitingroom.JoinResult, len(visitors))
	for i, v := range visitors {
		out[i] = r.join(v, now, lim)
	}
	return out, nil
}

func (r *memRoom) join(visitor string, now time.Time, lim waitingroom.Limits) waitingroom.JoinResult {
	key := r.c.Seq
	r.c.Seq++
	res := waitingroom.JoinResult{Key: key}
	if lim.Open && key == r.c.Serving && r.credit >= 1 && r.free(lim) > 0 {
		r.c.Serving++
		r.c.Admitted++
		r.credit--
		res.Admitted = true
		res.Expires = r.open(visitor, now, lim)
	}
	return res
}

// Claim implements waitingroom.Store.
func (s *Store) Claim(_ context.Context, name, visitor string, place uint64, now time.Time, lim waitingroom.Limits) (waitingroom.ClaimResult, error) {
	r, err := s.room(name)
	if err != nil {
		return waitingroom.ClaimResult{}, err
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	r.expireSessions(now)
	if ses, ok := r.live[visitor]; ok {
		return waitingroom.ClaimResult{Status: waitingroom.Claimed, Expires: ses.expires}, nil
	}
	if at, ok := r.finished[visitor]; ok && now.Before(at) {
		return waitingroom.ClaimResult{Status: waitingroom.Finished}, nil
	}
	if place >= r.c.Serving {
		return waitingroom.ClaimResult{Status: waitingroom.NotYet}, nil
	}
	if place < r.forgotten {
		return waitingroom.ClaimResult{Status: waitingroom.Finished}, nil
	}
	b := r.batchOf(place)
	if b != nil && b.Restored && b.Claimed >= b.Count {
		// Every place of an admission restored after a loss was claimed
		// before it: this is one of them again, whose session ended.
		return waitingroom.ClaimResult{Status: waitingroom.Finished}, nil
	}
	// A batch with every slot claimed has none left for this place: it was
	// claimed already, by this visitor before the store forgot them.
	if b != nil && b.Claimed < b.Count {
		b.Claimed++
		if b.Restored {
			r.releaseHeld()
		} else {
			r.pending--
		}
		return waitingroom.ClaimResult{Status: waitingroom.Claimed, Expires: r.open(visitor, now, lim)}, nil
	}
	// The admission lapsed unclaimed: the visitor goes to the front, into a slot
	// no one else holds. The controller keeps one slot back for each returner.
	delete(r.returners, visitor)
	if len(r.live)+r.pending+len(r.returners) >= lim.Cap {
		r.returners[visitor] = now
		return waitingroom.ClaimResult{Status: waitingroom.Full}, nil
	}
	return waitingroom.ClaimResult{Status: waitingroom.Claimed, Expires: r.open(visitor, now, lim)}, nil
}

// Release implements waitingroom.Store.
func (s *Store) Release(_ context.Context, name, visitor, passID string, passExpiry, now time.Time, lim waitingroom.Limits) error {
	r, err := s.room(name)
	if err != nil {
		return err
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	if ses, ok := r.live[visitor]; ok {
		heap.Remove(&r.sessions, ses.index)
		delete(r.live, visitor)
	}
	if passID != "" && passExpiry.After(now) {
		r.revCursor++
		r.revoked = append(r.revoked, waitingroom.Revocation{Cursor: r.revCursor, PassID: passID, ExpiresAt: passExpiry})
	}
	return nil
}

// Advance implements waitingroom.Store.
func (s *Store) Advance(_ context.Context, name string, now time.Time, lim waitingroom.Limits) error {
	r, err := s.room(name)
	if err != nil {
		return err
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	tick := now.Unix()
	if tick <= r.lastTick {
		return nil
	}
	elapsed := tick - r.lastTick
	if r.lastTick == 0 || elapsed > waitingroom.MaxCatchUpTicks {
		elapsed = 1
	}
	r.lastTick = tick

	r.expireSessions(now)
	r.forgetFinished(now)
	r.expireRevocations(now)
	for v, at := range r.returners {
		if now.Sub(at) >= waitingroom.ReturnerWindow {
			delete(r.returners, v)
		}
	}
	for len(r.batches) > 0 && !now.Before(r.batches[0].At.Add(lim.Grace)) {
		b := r.batches[0]
		lapsed := b.Count - b.Claimed
		if !b.Restored {
			r.pending -= int(lapsed)
		}
		r.c.Abandoned += lapsed
		r.batches = r.batches[1:]
	}
	if lim.CloseDraw && !r.drawClosed {
		r.drawClosed = true
		// A draw over fans some of whom are already in would reorder the past;
		// when admission has begun, the draw is empty and everyone stays FIFO.
		if r.c.Serving == 0 {
			r.drawSize = r.c.Seq
		}
	}
	if !lim.Open || now.Before(r.settle) {
		r.credit = 0
		return nil
	}
	r.credit = accrue(r.credit, lim.Rate, elapsed)
	waiting := r.c.Seq - r.c.Serving
	if lim.Reshuffle {
		end := r.drawnEnd()
		if r.c.Serving >= end && waiting > 0 {
			r.epochs = nextEpoch(r.epochs, r.c.Serving, waiting)
			end = r.c.Serving + waiting
		}
		// Only drawn places go in: the rest wait for the next draw.
		waiting = end - min(end, r.c.Serving)
	}
	n := admissible(r.credit, r.free(lim), waiting)
	if n == 0 {
		return nil
	}
	r.batches = append(r.batches, waitingroom.Batch{Start: r.c.Serving, Count: n, At: now})
	r.c.Serving += n
	r.c.Admitted += n
	r.pending += int(n)
	r.credit -= float64(n)
	return nil
}

// drawnEnd is the first key no draw has placed yet.
func (r *memRoom) drawnEnd() uint64 {
	if n := len(r.epochs); n > 0 {
		return r.epochs[n-1].End()
	}
	if r.drawClosed {
		return r.drawSize
	}
	return 0
}

// nextEpoch appends the epoch of keys [start, start+size), forgetting the oldest
// beyond waitingroom.MaxEpochs.
func nextEpoch(epochs []waitingroom.Epoch, start, size uint64) []waitingroom.Epoch {
	var number uint64 = 1
	if n := len(epochs); n > 0 {
		number = epochs[n-1].Number + 1
	}
	epochs = append(epochs, waitingroom.Epoch{Start: start, Size: size, Number: number})
	if len(epochs) > waitingroom.MaxEpochs {
		epochs = append(epochs[:0:0], epochs[len(epochs)-waitingroom.MaxEpochs:]...)
	}
	return epochs
}

// accrue adds elapsed seconds of rate budget, keeping at most one second's worth
// (and at least one visitor's) banked.
func accrue(credit float64, perMinute int, elapsed int64) float64 {
	perSecond := float64(perMinute) / 60
	return min(credit+perSecond*float64(elapsed), max(perSecond, 1))
}

// admissible is how many places one step may admit.
func admissible(credit float64, free int, waiting uint64) uint64 {
	if credit < 1 || free <= 0 || waiting == 0 {
		return 0
	}
	return min(uint64(credit), uint64(free), waiting)
}

// Snapshot implements waitingroom.Store.
func (s *Store) Snapshot(_ context.Context, name string, now time.Time, revokedAfter int64) (waitingroom.Snapshot, error) {
	r, err := s.room(name)
	if err != nil {
		return waitingroom.Snapshot{}, err
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	r.expireSessions(now)
	snap := waitingroom.Snapshot{
		Counters:    r.c,
		Active:      len(r.live),
		Pending:     r.pending,
		Returning:   len(r.returners),
		Credit:      r.credit,
		DrawClosed:  r.drawClosed,
		DrawSize:    r.drawSize,
		Epochs:      append([]waitingroom.Epoch(nil), r.epochs...),
		Version:     r.version,
		Incarnation: r.incarnation,
		Batches:     append([]waitingroom.Batch(nil), r.batches...),
		Forgotten:   r.forgotten,
		SettleUntil: r.settle,
		Blank:       r.blank,
	}
	for _, rv := range r.revoked {
		if rv.Cursor > revokedAfter && rv.ExpiresAt.After(now) {
			snap.Revocations = append(snap.Revocations, rv)
		}
	}
	return snap, nil
}

// DrawSeed implements waitingroom.Store.
func (s *Store) DrawSeed(_ context.Context, name string, candidate []byte, now time.Time) ([]byte, time.Time, error) {
	r, err := s.room(name)
	if err != nil {
		return nil, time.Time{}, err
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.seed == nil {
		r.seed = append([]byte(nil), candidate...)
		r.seedAt = now
	}
	return append([]byte(nil), r.seed...), r.seedAt, nil
}

// Overrides implements waitingroom.Store.
func (s *Store) Overrides(_ context.Context, name string) ([]byte, int64, error) {
	r, err := s.room(name)
	if err != nil {
		return nil, 0, err
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]byte(nil), r.overrides...), r.version, nil
}

// SaveOverrides implements waitingroom.Store.
func (s *Store) SaveOverrides(_ context.Context, name string, data []byte, expect int64) (int64, error) {
	r, err := s.room(name)
	if err != nil {
		return 0, err
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.version != expect {
		return 0, waitingroom.ErrVersionConflict
	}
	r.overrides = append([]byte(nil), data...)
	r.version++
	return r.version, nil
}

// free is the number of slots the controller may hand out: the cap, less live
// sessions, admissions not yet claimed, and slots held back for late returners.
func (r *memRoom) free(lim waitingroom.Limits) int {
	return lim.Cap - len(r.live) - r.pending - len(r.returners)
}

// open starts a session and remembers the visitor as having had one.
func (r *memRoom) open(visitor string, now time.Time, lim waitingroom.Limits) time.Time {
	exp := now.Add(lim.Session)
	if ses, ok := r.live[visitor]; ok {
		// Admitted again while a session is live (a fan keyed to an account
		// rejoins): the one session runs to the new end. A second heap entry
		// would end it at the old one.
		ses.expires = exp
		heap.Fix(&r.sessions, ses.index)
	} else {
		ses := &session{visitor: visitor, expires: exp}
		heap.Push(&r.sessions, ses)
		r.live[visitor] = ses
	}
	r.c.Claimed++
	forgetAt := exp.Add(lim.Retention)
	r.finished[visitor] = forgetAt
	r.finishedQ = append(r.finishedQ, forget{visitor: visitor, at: forgetAt})
	return exp
}

// releaseHeld gives up one held placeholder: a claim from a restored batch is
// one of the sessions the placeholders stood for.
func (r *memRoom) releaseHeld() {
	if r.heldLeft == 0 {
		return
	}
	r.heldLeft--
	if ses, ok := r.live[fmt.Sprintf("held:%d", r.heldLeft)]; ok {
		heap.Remove(&r.sessions, ses.index)
		delete(r.live, ses.visitor)
	}
}

func (r *memRoom) expireSessions(now time.Time) {
	for len(r.sessions) > 0 && !now.Before(r.sessions[0].expires) {
		ses := heap.Pop(&r.sessions).(*session)
		delete(r.live, ses.visitor)
	}
}

func (r *memRoom) forgetFinished(now time.Time) {
	i := 0
	for ; i < len(r.finishedQ) && !now.Before(r.finishedQ[i].at); i++ {
		f := r.finishedQ[i]
		if at, ok := r.finished[f.visitor]; ok && !now.Before(at) {
			delete(r.finished, f.visitor)
		}
	}
	r.finishedQ = r.finishedQ[i:]
}

func (r *memRoom) expireRevocations(now time.Time) {
	kept := r.revoked[:0]
	for _, rv := range r.revoked {
		if rv.ExpiresAt.After(now) {
			kept = append(kept, rv)
		}
	}
	r.revoked = kept
}

// batchOf finds the unexpired admission batch holding place, if any.
func (r *memRoom) batchOf(place uint64) *waitingroom.Batch {
	i := sort.Search(len(r.batches), func(i int) bool { return r.batches[i].Start+r.batches[i].Count > place })
	if i < len(r.batches) && r.batches[i].Start <= place {
		return &r.batches[i]
	}
	return nil
}

// session is a live session, kept in a heap ordered by expiry.
type session struct {
	visitor string
	expires time.Time
	index   int
}

type sessionHeap []*session

func (h sessionHeap) Len() int           { return len(h) }
func (h sessionHeap) Less(i, j int) bool { return h[i].expires.Before(h[j].expires) }
func (h sessionHeap) Swap(i, j int) {
	h[i], h[j] = h[j], h[i]
	h[i].index = i
	h[j].index = j
}
func (h *sessionHeap) Push(x any) {
	s := x.(*session)
	s.index = len(*h)
	*h = append(*h, s)
}
func (h *sessionHeap) Pop() any {
	old := *h
	s := old[len(old)-1]
	old[len(old)-1] = nil
	*h = old[:len(old)-1]
	return s
}
