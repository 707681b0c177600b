package waitingroom

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"sync"
	"sync/atomic"
	"time"

	"github.com/foyer-dev/foyer/internal/loop"
	"github.com/foyer-dev/foyer/waitingroom/clientlimit"
	"github.com/foyer-dev/foyer/waitingroom/pass"
)

// Config describes a room to NewRoom.
type Config struct {
	ID       string
	Settings Settings
	Store    Store
	Key      *SigningKey
	// Previous are keys that still verify tickets and passes but sign nothing:
	// the previous key during a rotation (or the next one, staged). They are
	// published in the JWKS with Key.
	Previous []*SigningKey
	// Issuer is the "iss" of the passes the room issues and accepts.
	Issuer string
	// Now is the clock; nil means time.Now. Tests inject one.
	Now func() time.Time
	// Resumed says the room ran before on this store, recently enough for
	// tickets of its line to be valid still (the gateway knows from its
	// memo): a store with no record of it lost its data, and the room is
	// re-created settling (see recovery.go).
	Resumed bool
	// Memo is what a previous run of this node kept of the room outside the
	// store (nil: nothing); Remember is called, without blocking, with the
	// memo to keep from now on (see Memo).
	Memo     *Memo
	Remember func(Memo)
	// OpenOnStoreFailure lets everyone through, with a pass that has no
	// session behind it, while the store cannot be reached: the operator's
	// explicit choice (on_store_failure open) over holding anyone.
	OpenOnStoreFailure bool
	// SeedSource is where this node's proposals of draw seeds (the room's
	// and each phase's) come from; nil means crypto/rand. The model test
	// gives one of its own so that a failing sequence replays exactly.
	SeedSource io.Reader
}

// passLeeway is how far a pass's times may be off this node's clock (another
// node's clock may run ahead or behind).
const passLeeway = 5 * time.Second

// Room is one node's handle on a waiting room: it answers visitors from a view of
// the shared store that it refreshes twice a second, calls the store only to join
// and to claim, and runs its share of the admission controller.
type Room struct {
	id       string
	base     Settings
	store    Store
	key      *SigningKey
	keys     *Keyring
	issuer   string
	now      func() time.Time
	verifier *pass.Verifier
	passes   *passCache
	revoked  revocations
	idled    idleOuts
	// resigned are the passes this node signed again with the waitlist
	// claim, by session (claimReturns).
	resigned expiringSet[resignedPass]
	// reclaimed are the sessions this node took over after a loss.
	reclaimed reclaimedSessions
	beats     beats
	joins     joinBatcher
	// accountJoins counts account joins in flight (see joinAccount).
	accountJoins atomic.Int64
	// clients are the join_limit's buckets per client address, made at the
	// first join the limit weighs (see Room.AllowJoin).
	clients atomic.Pointer[clientlimit.Table]
	// joinsDown is set when a join failed on the store, and cleared by the
	// next good refresh: meanwhile newcomers are refused at once.
	joinsDown atomic.Bool
	// unsent are revocations this node accepted and the store has yet to
	// record (see revoke.go).
	unsent revokeOutbox
	// failing is set when a call to the store failed, and cleared by the
	// next good refresh, which then starts a catch-up (see revoke.go).
	failing atomic.Bool
	// catchUp is when the catch-up after the store last came back ends, in
	// Unix nanoseconds.
	catchUp atomic.Int64
	// declaring is set while a sold-out declaration is on its way to the store.
	declaring atomic.Bool
	stats     Stats
	codes     CodeStats
	// spent are the proof-of-work seeds answered on this node.
	spent   spentSeeds
	resumed bool
	// openOnFailure is Config.OpenOnStoreFailure.
	openOnFailure bool
	// seedSource is Config.SeedSource.
	seedSource io.Reader
	ann        announcements
	rememberFn func(Memo)

	view atomic.Pointer[view]
	// changed is closed and replaced whenever a new view is published, so that
	// live connections wake up on news instead of polling.
	changed atomic.Pointer[chan struct{}]
	// stopped is closed when Run returns: from then on no view is published,
	// so changed never fires again and a live connection must not wait on it.
	stopped  chan struct{}
	stopOnce sync.Once

	// ticking serialises Start and Tick: each reads the store and then
	// publishes a view, so two running at once could publish an older
	// snapshot over a newer one. Only the controller loop ticks in a server,
	// but tests (and embedders) may tick beside it.
	ticking sync.Mutex
	// mu guards what the refresh loop maintains.
	mu          sync.Mutex
	overrides   Overrides
	version     int64
	revCursor   int64
	incarnation string
	lastAdvance int64
	flow        flow
	maxKey      uint64 // the highest key this node handed out, plus one
	seed        []byte
	seedAt      time.Time
	// laneCommits are the phases' lane commitments this node made or
	// learnt, with the time the store keeps for each (lanecommit.go).
	laneCommits map[string]time.Time
	draw        *Draw
	epochs      []epochDraw
	// phaseSeeds are the phases' draw seeds this node committed or learnt,
	// and phaseDraws the phase pre-queues the store recorded, with their
	// permutations (phasedraw.go).
	phaseSeeds  map[string]phaseSeed
	phaseDraws  []phaseDraw
	lastOK      time.Time
	known       bool // a snapshot was read since start
	memoAt      time.Time
	memoWaiting bool
	// lineSeen is how far this node saw the line go, and memoLine how far
	// its last memo says (see Memo).
	lineSeen lineMark
	memoLine lineMark
	// supplyEst is the supply estimate folded from the snapshots' samples,
	// and supplyNote the latest supply the origin reported here (supply.go).
	supplyEst  SupplyEstimate
	supplyNote supplyNote
}

// view is an immutable picture of the room that request paths read without locks.
type view struct {
	room     string
	settings Settings // configuration with overrides applied
	snap     Snapshot
	at       time.Time
	healthy  bool
	showUp   float64
	draw     *Draw
	epochs   []epochDraw // the random method's draws, oldest first
	// phaseDraws are the phase pre-queues, open or drawn (phasedraw.go).
	phaseDraws []phaseDraw
	// live answers how many live places lie between two places.
	live *liveIndex
	// announcing is set while the room, re-created blank after a loss,
	// settles: the passes this node sees tell the store what it lost.
	announcing bool
	// supply is the room's supply estimate (supply.go); Known false while
	// nobody reported one.
	supply SupplyEstimate
}

// epochDraw is a rolling draw with its permutation (nil while this node does not
// know the room's seed).
type epochDraw struct {
	Epoch
	draw *Draw
}

// NewRoom checks the configuration and prepares a room. Call Start before use.
func NewRoom(cfg Config) (*Room, error) {
	if !ValidRoomID(cfg.ID) {
		return nil, settingErr("room", "%q is not a valid room id (1-64 letters, digits, '_', '.', '-')", cfg.ID)
	}
	if cfg.Store == nil || cfg.Key == nil {
		return nil, errors.New("room needs a store and a signing key")
	}
	s := cfg.Settings.WithDefaults()
	if err := s.Validate(); err != nil {
		return nil, err
	}
	if cfg.Issuer == "" {
		cfg.Issuer = DefaultIssuer
	}
	if cfg.Now == nil {
		cfg.Now = time.Now
	}
	keys, err := NewKeyring(cfg.Key, cfg.Previous...)
	if err != nil {
		return nil, err
	}
	r := &Room{
		id:         cfg.ID,
		base:       s,
		store:      cfg.Store,
		key:        cfg.Key,
		keys:       keys,
		issuer:     cfg.Issuer,
		now:        cfg.Now,
		passes:     newPassCache(4*s.TotalActiveUsers + 1024),
		resumed:    cfg.Resumed,
		rememberFn: cfg.Remember,
		stopped:    make(chan struct{}),

		openOnFailure: cfg.OpenOnStoreFailure,
		seedSource:    cfg.SeedSource,
	}
	r.recall(cfg.Memo, cfg.Resumed)
	r.verifier = pass.NewVerifier(keys.PublicKeys(), pass.WithIssuer(cfg.Issuer), pass.WithClock(cfg.Now), pass.WithLeeway(passLeeway))
	r.publish(r.now(), Snapshot{}, false)
	return r, nil
}

// ID is the room's identifier.
func (r *Room) ID() string { return r.id }

// Stats are the room's counters of events on this node.
func (r *Room) Stats() *Stats { return &r.stats }

// Start creates the room in the store if needed and reads its state. A store
// that cannot be reached is not fatal: the room starts in the failure mode
// described in docs/ARCHITECTURE.md ("Failure semantics") and recovers on a
// later Tick.
func (r *Room) Start(ctx context.Context) error {
	r.ticking.Lock()
	defer r.ticking.Unlock()
	var seed Recall
	if r.resumed {
		seed.SettleUntil = r.now().Add(settleWindow(r.base))
	}
	// Overrides kept from a previous run are in force already; a store that
	// holds an older version (it lost them) takes them back.
	seed.Overrides, seed.OverridesVersion = r.overridesSeed()
	if err := r.store.Init(ctx, r.id, seed); err != nil {
		r.storeFailed()
		return fmt.Errorf("initialising room %s: %w", r.id, err)
	}
	return r.refresh(ctx, r.now())
}

// Run drives the room until ctx ends: a controller step and a refresh of the
// view every half second. Steps are idempotent per second in the store, so many
// nodes running this make exactly one advance per second between them. When it
// returns the room is stopped for good (see Done).
func (r *Room) Run(ctx context.Context) {
	defer r.stopOnce.Do(func() { close(r.stopped) })
	loop.Paced(ctx, r.tickInterval, func(ctx context.Context) { _ = r.Tick(ctx) })
}

// tickInterval is how long the controller loop waits before its next tick:
// RefreshInterval, or catchUpInterval for catchUpSpan after the store
// answered again (see revoke.go).
func (r *Room) tickInterval() time.Duration {
	now := r.now()
	if now.Before(r.catchUpUntil()) {
		return catchUpInterval
	}
	// A phase switch due sooner is ticked at: the view (title, page) takes
	// the new phase at once, as the limits of store calls do (phases.go).
	if at := r.settings().Phases.NextSwitch(now); !at.IsZero() && at.Sub(now) < RefreshInterval {
		return at.Sub(now)
	}
	return RefreshInterval
}

// Done returns a channel that is closed once Run has returned. The view is
// then refreshed no more and Changed never fires again, so whatever follows
// the room (a live connection) must end or move to the room that replaced it
// (docs/ARCHITECTURE.md, "Config reloads"). A room that is never run is
// never done.
func (r *Room) Done() <-chan struct{} { return r.stopped }

// RefreshInterval is how often a node refreshes its view of the room.
const RefreshInterval = 500 * time.Millisecond

// Tick runs one controller step (at most one per second) and refreshes the view.
func (r *Room) Tick(ctx context.Context) error {
	r.ticking.Lock()
	defer r.ticking.Unlock()
	now := r.now()
	r.mu.Lock()
	due := now.Unix() != r.lastAdvance
	r.mu.Unlock()
	if err := r.flushAnnouncements(ctx); err != nil {
		r.storeFailed()
		return err
	}
	if err := r.flushBeats(ctx, now); err != nil {
		r.storeFailed()
		return err
	}
	if err := r.flushSupply(ctx); err != nil {
		r.storeFailed()
		return err
	}
	if due {
		lim := r.settings().limitsAt(now)
		if lim.WaitlistUnits > 0 {
			lim.WaitlistUnits = waitlistUnits(r.view.Load().supply)
		}
		err := r.store.Advance(ctx, r.id, now, lim)
		if errors.Is(err, ErrNoRoom) {
			err = r.reseed(ctx, now)
		}
		if err != nil {
			r.storeFailed()
			return err
		}
		r.mu.Lock()
		r.lastAdvance = now.Unix()
		r.mu.Unlock()
	}
	return r.refresh(ctx, now)
}

// refresh reads the store's state into a new view.
func (r *Room) refresh(ctx context.Context, now time.Time) error {
	r.mu.Lock()
	cursor := r.revCursor
	r.mu.Unlock()
	snap, err := r.store.Snapshot(ctx, r.id, now, cursor)
	if errors.Is(err, ErrNoRoom) {
		if err = r.reseed(ctx, now); err == nil {
			snap, err = r.store.Snapshot(ctx, r.id, now, cursor)
		}
	}
	lossSeen := false
	if err == nil && snap.Incarnation != r.knownIncarnation() {
		// The room was created anew since we last looked (the store lost it,
		// and perhaps another node re-seeded it): our revocation cursor means
		// nothing any more, so read them all again; and the node that
		// re-created it may have known less than this one (nothing, if it
		// started afresh), so restore this node's view: no newcomer may be
		// placed ahead of a ticket this node handed out, serving stays where
		// it was, and the overrides stay in force.
		r.mu.Lock()
		first := r.incarnation == ""
		r.incarnation, r.revCursor = snap.Incarnation, 0
		raise := !first && r.known
		lossSeen = raise
		var seed Recall
		if raise {
			seed = r.wholeRecall(now, r.view.Load())
		}
		r.mu.Unlock()
		if raise {
			err = r.store.Init(ctx, r.id, seed)
		}
		// A node's first look already read from cursor 0 and raised nothing:
		// the snapshot in hand is the one a second read would give.
		if err == nil && (raise || cursor != 0) {
			snap, err = r.store.Snapshot(ctx, r.id, now, 0)
			cursor = 0
		}
	}
	if err != nil {
		r.storeFailed()
		return err
	}
	if err := r.syncOverrides(ctx, snap.Version); err != nil {
		r.storeFailed()
		return err
	}
	if err := r.syncDraw(ctx, now, snap); err != nil {
		r.storeFailed()
		return err
	}
	if err := r.syncLaneCommits(ctx, now); err != nil {
		r.storeFailed()
		return err
	}
	if err := r.syncPhaseDraws(ctx, now, snap); err != nil {
		r.storeFailed()
		return err
	}
	if cursor == 0 {
		// Every live revocation the store holds is in hand: put back those
		// it lost (see revoke.go).
		r.resyncRevocations(snap.Revocations, now)
	}
	for _, rv := range snap.Revocations {
		if rv.Visitor != "" {
			r.idled.add(rv.Visitor, rv.IdledAt, rv.ExpiresAt)
			continue
		}
		r.revoked.add(rv.PassID, rv.ExpiresAt)
	}
	// A pass is accepted up to passLeeway past its end, so what refuses it
	// is kept as long: forgotten at the end itself, a revoked or idled-out
	// pass would be good again for those seconds.
	r.revoked.prune(now.Add(-passLeeway))
	r.idled.prune(now.Add(-passLeeway))
	r.resigned.prune(now)
	if err := r.flushRevocations(ctx, now); err != nil {
		r.storeFailed()
		return err
	}
	r.joinsDown.Store(false)
	if r.failing.Swap(false) {
		r.catchUp.Store(now.Add(catchUpSpan).UnixNano())
	}
	r.mu.Lock()
	if n := len(snap.Revocations); n > 0 {
		r.revCursor = snap.Revocations[n-1].Cursor
	}
	if lossSeen || (snap.Blank && !r.known) {
		r.flow.lost()
		r.beats.forgetSent()
	}
	r.flow.add(now, snap.Counters, snap.Blank && now.Before(snap.SettleUntil), r.settings().AdmissionGrace)
	r.lastOK = now
	r.known = true
	r.see(snap)
	r.foldSupply(snap.Supply)
	r.remember(now, false, snap.Seq > snap.Serving)
	r.mu.Unlock()
	r.publish(now, snap, true)
	return nil
}

func (r *Room) knownIncarnation() string {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.incarnation
}

// syncOverrides reads the overrides when their version moved.
func (r *Room) syncOverrides(ctx context.Context, version int64) error {
	r.mu.Lock()
	current := r.version
	r.mu.Unlock()
	if version == current {
		return nil
	}
	if version < current {
		// Versions only grow: the store lost the overrides this node knows.
		// They stay in force here, and go back to the store.
		return r.pushOverrides(ctx)
	}
	data, v, err := r.store.Overrides(ctx, r.id)
	if err != nil {
		return err
	}
	var o Overrides
	if len(data) > 0 {
		if err := json.Unmarshal(data, &o); err != nil {
			return fmt.Errorf("room %s: stored overrides are unreadable: %w", r.id, err)
		}
	}
	r.mu.Lock()
	r.overrides, r.version = o, v
	r.remember(r.now(), true, r.memoWaiting)
	r.mu.Unlock()
	return nil
}

// syncDraw makes sure the room's seed is committed before anyone registers, and
// builds the permutations of the draws the store says were made.
func (r *Room) syncDraw(ctx context.Context, now time.Time, snap Snapshot) error {
	if !r.base.drawn() && !r.settings().drawn() && len(snap.Epochs) == 0 {
		return nil
	}
	r.mu.Lock()
	seed, built := r.seed, r.draw != nil
	r.mu.Unlock()
	if seed == nil {
		got, at, err := r.store.DrawSeed(ctx, r.id, r.newDrawSeed(), now)
		if err != nil {
			return err
		}
		r.mu.Lock()
		r.seed, r.seedAt, seed = got, at, got
		r.mu.Unlock()
	}
	var d *Draw
	if snap.DrawClosed && !built {
		d = NewDraw(seed, snap.DrawSize)
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	if d != nil {
		r.draw = d
	}
	r.epochs = epochDraws(r.epochs, snap.Epochs, seed)
	return nil
}

// epochDraws lines up a permutation for each epoch, reusing those already made.
func epochDraws(have []epochDraw, epochs []Epoch, seed []byte) []epochDraw {
	out := make([]epochDraw, 0, len(epochs))
	for _, e := range epochs {
		var d *Draw
		for _, h := range have {
			if h.Epoch == e && h.draw != nil {
				d = h.draw
				break
			}
		}
		if d == nil && seed != nil {
			d = NewDraw(EpochSeed(seed, e.Number), e.Size)
		}
		out = append(out, epochDraw{Epoch: e, draw: d})
	}
	return out
}

// reseed recreates the room in a store that lost it, from what this node saw
// last. Keys restart above any this node knows of, with a margin for the keys
// other nodes handed out since its last refresh, so nobody who joins now is
// placed ahead of a ticket issued before the loss.
func (r *Room) reseed(ctx context.Context, now time.Time) error {
	v := r.view.Load()
	r.mu.Lock()
	seed := r.wholeRecall(now, v)
	if !r.known && r.resumed {
		// This node knows nothing of the room, but it ran before: the line is
		// out there in the fans' tickets.
		seed.Whole = false
		seed.SettleUntil = now.Add(settleWindow(r.base))
		seed.LostAt = now
	}
	drawSeed, drawAt := r.seed, r.seedAt
	r.flow.lost()
	r.beats.forgetSent()
	r.mu.Unlock()
	if err := r.store.Init(ctx, r.id, seed); err != nil {
		return err
	}
	r.stats.Reseeds.Add(1)
	if drawSeed != nil {
		// Put back the committed seed, with its original commitment time.
		if _, _, err := r.store.DrawSeed(ctx, r.id, drawSeed, drawAt); err != nil {
			return err
		}
	}
	if err := r.restorePhaseSeeds(ctx); err != nil {
		return err
	}
	return r.restoreLaneCommits(ctx)
}

// reseedMargin is added to the order keys on re-seeding, beyond the measured
// join rate, to cover keys handed out by other nodes that this one never saw.
// It is small because every node, on seeing the room re-created, also raises
// the keys above the highest it handed out itself (see refresh); the margin
// only covers the half second before they do. Its places are judged by their
// beats from the start (Recall.MarginFrom): the line passes the unheld ones
// without a slot, and positions do not count them.
const reseedMargin = 20

func (r *Room) storeFailed() {
	r.stats.StoreErrors.Add(1)
	r.failing.Store(true)
	now := r.now()
	r.mu.Lock()
	stale := now.Sub(r.lastOK) > 2*time.Second
	// The store may come back having lost writes (empty, or a Cluster replica
	// promoted before it had them): the next good refresh reads every live
	// revocation, to learn what was missed and put back what was lost.
	r.revCursor = 0
	r.mu.Unlock()
	if v := r.view.Load(); stale && v.healthy {
		r.publish(now, v.snap, false)
	}
}

// publish builds and stores a new view.
func (r *Room) publish(now time.Time, snap Snapshot, healthy bool) {
	r.mu.Lock()
	s := r.overrides.Apply(r.base).At(now)
	v := &view{
		room:       r.id,
		settings:   s,
		snap:       snap,
		at:         now,
		healthy:    healthy,
		showUp:     r.flow.showUp(),
		draw:       r.draw,
		epochs:     r.epochs,
		phaseDraws: r.phaseDraws,
		live:       newLiveIndex(snap.Live),
		announcing: snap.Blank && now.Before(snap.SettleUntil),
		supply:     r.supplyEst,
	}
	r.mu.Unlock()
	r.view.Store(v)
	next := make(chan struct{})
	if old := r.changed.Swap(&next); old != nil {
		close(*old)
	}
}

// Changed returns a channel that is closed the next time the room's view is
// refreshed.
func (r *Room) Changed() <-chan struct{} { return *r.changed.Load() }

// settings are the configured settings with the overrides applied.
func (r *Room) settings() Settings { return r.view.Load().settings }

// Settings returns the settings in force.
func (r *Room) Settings() Settings { return r.settings() }

// Healthy reports whether the room's store answered recently.
func (r *Room) Healthy() bool { return r.view.Load().healthy }

// Snapshot returns the room's state as this node last saw it.
func (r *Room) Snapshot() Snapshot { return r.view.Load().snap }

// Stats count what happened on this node, for metrics. They are plain atomics so
// the core needs no metrics library; the gateway exports them.
type Stats struct {
	Joins          atomic.Uint64 // visitors given a ticket
	JoinsLimited   atomic.Uint64 // newcomers refused by join_limit
	DirectAdmits   atomic.Uint64 // visitors let straight in on joining
	Polls          atomic.Uint64 // status answers
	Claims         atomic.Uint64 // sessions opened by a claim
	PassesRejected atomic.Uint64 // passes that failed verification or were revoked
	Revokes        atomic.Uint64 // sessions ended by the origin
	Requeues       atomic.Uint64 // sessions the origin failed, their fans put back at the front
	RequeuesSpent  atomic.Uint64 // failures of sessions whose tickets had spent their requeues
	StoreErrors    atomic.Uint64 // store calls that failed
	Reseeds        atomic.Uint64 // times the store was found to have lost the room
	Reclaims       atomic.Uint64 // sessions from before a loss the store took over, through this node
	Beats          atomic.Uint64 // heartbeat flushes sent to the store
	Challenges     atomic.Uint64 // proof-of-work seeds handed to newcomers
	AnswersRefused atomic.Uint64 // answers to seeds refused (wrong, stale, replayed, malformed)
	SupplyReports  atomic.Uint64 // supply reports read from the origin's answers
	SupplyRefused  atomic.Uint64 // supply headers from the origin that were not a number of units
}
