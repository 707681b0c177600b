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
	// codes are the rooms' access codes (codes.go).
	codes codeBooks
}

// New returns an empty store.
func New() *Store { return &Store{rooms: make(map[string]*memRoom)} }

var _ waitingroom.Store = (*Store)(nil)

type memRoom struct {
	mu          sync.Mutex
	c           waitingroom.Counters
	credit      float64
	pace        waitingroom.Pace
	lastTick    int64
	pending     int
	batches     []waitingroom.Batch
	lapsed      []lapse // admissions whose grace ended within the return window, by first place
	sessions    sessionHeap
	live        map[string]*session
	finished    map[string]time.Time // visitor -> forget at
	finishedQ   []forget
	returners   map[string]time.Time // visitor -> last asked
	drawClosed  bool
	epochs      []waitingroom.Epoch // rolling draws of the random method, oldest first
	phaseRanges []waitingroom.PhaseRange
	phaseSeeds  map[string]committedSeed
	drawSize    uint64
	seed        []byte
	seedAt      time.Time
	overrides   []byte
	version     int64
	incarnation string
	heldLeft    int // held placeholders "held:0".."held:<heldLeft-1>" not yet given to a claim
	revoked     []waitingroom.Revocation
	revCursor   int64
	history     []waitingroom.HistoryEntry // the public history, oldest first
	supply      []waitingroom.SupplySample // the latest supply samples, oldest first (supply.go)
	told        map[int][]byte             // what places' holders were told, by lane (liveness.go)
	audit       []waitingroom.AuditEntry   // the audit trail, oldest first, at most waitingroom.MaxAudit

	// The line's waitlist (waitlist.go): its record (Owed is kept by the
	// grants), and the units let in for and still owed, oldest first.
	wl       waitingroom.WaitlistState
	wlGrants []waitingroom.WaitlistGrant

	// laneCommits are the phases' lane commitments, "<phase>:<commitment>",
	// with the time each was first made (CommitLanes).
	laneCommits map[string]time.Time

	// accounts are the places of visitors whose account the site vouched
	// for, one per account (see account.go).
	accounts map[waitingroom.AccountKey]accountPlace
	// checks weigh joins by join_limit and spent seeds (joinchecks.go).
	checks joinChecks
	// Liveness (see liveness.go): the places seen per heartbeat window, the
	// counter at each window's first step, the last use of each session,
	// the visitors whose sessions idled out, and the counts of the last step.
	windows  map[int64]beatWindow
	wseq     []windowSeq
	seen     map[string]time.Time
	idled    map[string]idledSession
	liveness waitingroom.Liveness

	// What survives a loss (see waitingroom.Recall).
	forgotten uint64
	settle    time.Time
	blank     bool
	lostAt    time.Time
	margin    [2]uint64 // the re-seed's margin of order keys (Recall.MarginFrom)

	// left are the places from serving on whose holders left the line
	// (leave.go): the controller passes them over as ghosts.
	left map[uint64]struct{}

	// requeued are the visitors waiting at the front after a requeue, each
	// with the order it was made in; requeues count each visitor's
	// (requeue.go).
	requeued map[string]uint64
	requeues map[string]requeueCount
	// readmitted are the requeued visitors the controller let in again, by
	// when: each holds a pending slot until they claim it or the grace ends
	// (requeue.go). Made on the first.
	readmitted map[string]time.Time

	// Priority lanes (lanes.go): the counters of each lane other than the
	// general lane, by lane number, the weighted round robin's credits
	// with the weights they were kept for, and those lanes' admissions
	// still within their grace, in admission order.
	lanes       []laneLine
	laneCredit  []int64
	laneSpec    string
	laneBatches []waitingroom.Batch
}

type forget struct {
	visitor string
	at      time.Time
}

// lockRoom returns the room called name with its lock held; the caller
// unlocks it. The store's own lock is held only for the lookup, so one room's
// work never waits on another's.
func (s *Store) lockRoom(name string) (*memRoom, error) {
	s.mu.Lock()
	r, ok := s.rooms[name]
	s.mu.Unlock()
	if !ok {
		return nil, waitingroom.ErrNoRoom
	}
	r.mu.Lock()
	return r, nil
}

// lockRoomAt is lockRoom for a call that reads or changes sessions: those
// whose end has come by now are over first, so their slots count as free.
func (s *Store) lockRoomAt(name string, now time.Time) (*memRoom, error) {
	r, err := s.lockRoom(name)
	if err != nil {
		return nil, err
	}
	r.expireSessions(now)
	return r, nil
}

// Init implements waitingroom.Store.
func (s *Store) Init(_ context.Context, name string, seed waitingroom.Recall) error {
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
			windows:   make(map[int64]beatWindow),
			seen:      make(map[string]time.Time),
			idled:     make(map[string]idledSession),
			left:      make(map[uint64]struct{}),
			requeued:  make(map[string]uint64),
			requeues:  make(map[string]requeueCount),
		}
		s.rooms[name] = r
	}
	s.mu.Unlock()
	r.mu.Lock()
	defer r.mu.Unlock()
	r.c = r.c.Max(seed.Counters)
	r.restoreLanes(seed, created)
	if created {
		r.incarnation = seed.Incarnation
		if r.incarnation == "" {
			r.incarnation = waitingroom.NewIncarnation()
		}
		r.settle, r.blank = seed.SettleUntil, !seed.Whole
		r.lostAt = seed.LostAt
	}
	r.restore(seed)
	// A blank room (created by a node that knew nothing of it) takes what the
	// first node that knew more restores.
	if created || (r.blank && seed.Whole) {
		r.blank = r.blank && !seed.Whole
		if seed.LostAt.After(r.lostAt) {
			r.lostAt = seed.LostAt
		}
		if seed.MarginFrom > 0 && seed.MarginFrom < seed.Seq {
			r.margin = [2]uint64{seed.MarginFrom, seed.Seq}
		}
		r.drawClosed, r.drawSize = seed.DrawClosed, seed.DrawSize
		r.epochs = append([]waitingroom.Epoch(nil), seed.Epochs...)
		r.phaseRanges = append([]waitingroom.PhaseRange(nil), seed.PhaseRanges...)
		for _, b := range seed.Batches {
			b.Restored = true
			if lane, _ := waitingroom.LaneOfPlace(b.Start); lane > 0 {
				r.laneBatches = append(r.laneBatches, b)
				continue
			}
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
		r.restoreWaitlist(seed)
	}
	return nil
}

// restore applies what a seed carries beyond the counters, whether or not the
// room exists: the overrides when the seed's are newer, the forgotten places,
// the end of the last waitlist, and the sessions known from their passes.
func (r *memRoom) restore(seed waitingroom.Recall) {
	if seed.OverridesVersion > r.version {
		r.overrides, r.version = append([]byte(nil), seed.Overrides...), seed.OverridesVersion
	}
	r.forgotten = max(r.forgotten, seed.Forgotten)
	if !r.wl.On() && seed.WaitlistEnded.After(r.wl.Ended) {
		r.wl.Ended = seed.WaitlistEnded
	}
	for _, hs := range seed.Sessions {
		if _, ok := r.live[hs.Visitor]; ok {
			continue
		}
		// One of the sessions a held slot stood for, if any are left.
		r.releaseHeld()
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

// Snapshot implements waitingroom.Store.
func (s *Store) Snapshot(_ context.Context, name string, now time.Time, revokedAfter int64) (waitingroom.Snapshot, error) {
	r, err := s.lockRoomAt(name, now)
	if err != nil {
		return waitingroom.Snapshot{}, err
	}
	defer r.mu.Unlock()
	snap := waitingroom.Snapshot{
		Counters:    r.c,
		Active:      len(r.live),
		Pending:     r.pending,
		Returning:   len(r.returners),
		Credit:      r.credit,
		Pace:        r.pace,
		DrawClosed:  r.drawClosed,
		DrawSize:    r.drawSize,
		Epochs:      append([]waitingroom.Epoch(nil), r.epochs...),
		PhaseRanges: append([]waitingroom.PhaseRange(nil), r.phaseRanges...),
		Version:     r.version,
		Incarnation: r.incarnation,
		Batches:     append([]waitingroom.Batch(nil), r.batches...),
		Forgotten:   r.forgotten,
		SettleUntil: r.settle,
		Blank:       r.blank,
		LostAt:      r.lostAt,
		Margin:      r.margin,
		Supply:      append([]waitingroom.SupplySample(nil), r.supply...),
		Waitlist:    r.waitlistState(now),
		Live: waitingroom.Liveness{
			From:   r.liveness.From,
			Young:  r.liveness.Young,
			Counts: append([]uint16(nil), r.liveness.Counts...),
			Head:   append([]byte(nil), r.liveness.Head...),
		},
	}
	r.laneSnapshot(&snap)
	for _, rv := range r.revoked {
		if rv.Cursor > revokedAfter && rv.ExpiresAt.After(now) {
			snap.Revocations = append(snap.Revocations, rv)
		}
	}
	return snap, nil
}

// DrawSeed implements waitingroom.Store.
func (s *Store) DrawSeed(_ context.Context, name string, candidate []byte, now time.Time) ([]byte, time.Time, error) {
	r, err := s.lockRoom(name)
	if err != nil {
		return nil, time.Time{}, err
	}
	defer r.mu.Unlock()
	if r.seed == nil {
		r.seed = append([]byte(nil), candidate...)
		r.seedAt = now
	}
	return append([]byte(nil), r.seed...), r.seedAt, nil
}

// PhaseSeed implements waitingroom.Store.
func (s *Store) PhaseSeed(_ context.Context, name, phase string, candidate []byte, now time.Time) ([]byte, time.Time, error) {
	r, err := s.lockRoom(name)
	if err != nil {
		return nil, time.Time{}, err
	}
	defer r.mu.Unlock()
	ps, ok := r.phaseSeeds[phase]
	if !ok {
		ps = committedSeed{seed: append([]byte(nil), candidate...), at: now}
		if r.phaseSeeds == nil {
			r.phaseSeeds = map[string]committedSeed{}
		}
		r.phaseSeeds[phase] = ps
	}
	return append([]byte(nil), ps.seed...), ps.at, nil
}

// committedSeed is a phase's draw seed and when it was committed.
type committedSeed struct {
	seed []byte
	at   time.Time
}

// CommitLanes implements waitingroom.Store.
func (s *Store) CommitLanes(_ context.Context, name, phase, commitment string, now time.Time) (time.Time, error) {
	r, err := s.lockRoom(name)
	if err != nil {
		return time.Time{}, err
	}
	defer r.mu.Unlock()
	key := phase + ":" + commitment
	if at, ok := r.laneCommits[key]; ok {
		return at, nil
	}
	if r.laneCommits == nil {
		r.laneCommits = map[string]time.Time{}
	}
	r.laneCommits[key] = now
	return now, nil
}

// Overrides implements waitingroom.Store.
func (s *Store) Overrides(_ context.Context, name string) ([]byte, int64, error) {
	r, err := s.lockRoom(name)
	if err != nil {
		return nil, 0, err
	}
	defer r.mu.Unlock()
	return append([]byte(nil), r.overrides...), r.version, nil
}

// SaveOverrides implements waitingroom.Store.
func (s *Store) SaveOverrides(_ context.Context, name string, data []byte, expect int64) (int64, error) {
	r, err := s.lockRoom(name)
	if err != nil {
		return 0, err
	}
	defer r.mu.Unlock()
	if r.version != expect {
		return 0, waitingroom.ErrVersionConflict
	}
	r.overrides = append([]byte(nil), data...)
	r.version++
	return r.version, nil
}
