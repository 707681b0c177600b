package waitingroom

import (
	"context"
	"time"
)

// Store is the shared engine of a room: a handful of counters per room, the live
// sessions (never more than the cap), and the room's runtime overrides. Every
// gateway node serving a room talks to the same Store; each method is atomic, so
// nodes need no coordination among themselves.
//
// Times are passed in, never read inside, so that tests inject them and every node
// decides with the same notion of "now" it used to compute the request.
type Store interface {
	// Init creates the room if the store has no record of it (with one visitor of
	// rate budget banked, so the very first visitor walks straight in), or raises its
	// counters to at least floor. Counters never go down: after the store lost its
	// data, nodes re-seed it from the last state they saw so that no later arrival
	// is placed ahead of an earlier ticket and serving does not jump. What
	// else a seed restores, even in a room that exists, is said on Recall.
	Init(ctx context.Context, room string, seed Recall) error

	// Join hands a new visitor the next order key. When the room is open, nobody
	// is waiting, and the rate budget and a slot are free, the visitor is admitted
	// on the spot and a session is opened for them. It fails with ErrSettling,
	// handing out no key, while the room settles after a loss.
	Join(ctx context.Context, room, visitor string, now time.Time, lim Limits) (JoinResult, error)

	// JoinMany is Join for several joiners at once, in order, atomically: the
	// result is what as many Joins in a row would give. A node under a crowd
	// joins the visitors who arrived while its previous call was in flight with
	// one call, so a stampede costs the store one round trip per batch.
	//
	// Before it makes a joiner's place it weighs what the joiner carries (see
	// Joiner): a joiner over lim.JoinLimit, or answering a seed already spent,
	// is refused (JoinResult.Refused) and given no key, costing nothing; the
	// others' keys run on in order. A batch that fails (ErrSettling, or any
	// error) spends no allowance and no seed.
	JoinMany(ctx context.Context, room string, joiners []Joiner, now time.Time, lim Limits) ([]JoinResult, error)

	// JoinAccount is Join for a visitor whose account the site vouched for:
	// each account holds one place at most. When the account's recorded place
	// was taken within lim.Retention (AccountFresh) and is not the one
	// req.Spent names, it is returned with Existing set and nothing changes;
	// otherwise the account joins as JoinMany would join req.Joiner (refused
	// as it would be, recording nothing), and the new place is recorded as
	// its own. One round trip; ErrSettling as Join.
	JoinAccount(ctx context.Context, room string, req AccountJoin, now time.Time, lim Limits) (AccountPlace, error)

	// Claim opens a session for a visitor whose place is below serving. It is
	// idempotent: claiming again while the session is live returns that session,
	// with the same end, whoever claims and through whichever store handle, so
	// every pass of it carries one id (SessionPassID). A visitor whose admission
	// lapsed unclaimed (or whose place was skipped as a ghost, or whose session
	// idled out) may come back at the front only within lim.ReturnWindow
	// after their grace ended, and only while lim.Open (see Held and Passed);
	// they go in within the rate, taking a visitor's worth of the budget the
	// controller keeps for them (see Full).
	Claim(ctx context.Context, room, visitor string, place uint64, now time.Time, lim Limits) (ClaimResult, error)

	// Reclaim takes over a session the store may have lost, known from its
	// pass (visitor, ending at ends): after a loss the nodes find each
	// session through the first request its pass carries. A live session
	// is returned as Claim returns it. Otherwise, while slots held for the
	// sessions the store lost are left (Recall.Held), it takes one; else it
	// comes back at the front as an idled-out session does (Claimed within
	// the rate into a free slot, else Full or Held, first in line while it
	// asks again; never above the cap). A session over (its end passed, or the visitor's session in
	// this incarnation ended) is Finished; one that idled out since is NotYet
	// (its passes are about to be refused). The session keeps ends, so its
	// pass id is unchanged.
	Reclaim(ctx context.Context, room, visitor string, ends, now time.Time, lim Limits) (ClaimResult, error)

	// Release ends a visitor's session early (the origin is done with them) and
	// records the pass as revoked until it would have expired anyway. Only
	// the pass's own session ends: the one ending in passExpiry's second, as
	// the pass id names it (a zero passExpiry: whatever session is live). A
	// pass of an earlier session of the visitor (one requeued, then let in
	// again) is revoked and ends nothing more. When the
	// store holds no session for the visitor, one of the slots held after a
	// loss (if any are left) is given up: it stood for a session now over.
	Release(ctx context.Context, room, visitor, passID string, passExpiry, now time.Time, lim Limits) error

	// Leave gives up a visitor's place at once: the fan left the line. The
	// visitor's ticket is spent from then on (a claim with it is Finished,
	// so a copy rejoins at the back). A place the line has not reached is
	// passed over without a slot, whatever its beats or its youth say, and
	// no heartbeat marks it live again, so positions behind it stop counting
	// it once the controller counts it. A place admitted and not yet claimed
	// gives its pending slot back; a live session ends, its slot freed (the
	// room revokes its pass); a returner's slot and budget, and an idled-out
	// session's right to resume, are given up. Leaving twice changes nothing
	// more. One round trip.
	Leave(ctx context.Context, room, visitor string, place uint64, now time.Time, lim Limits) error

	// Requeue puts a visitor whose session failed through no fault of
	// theirs (the origin answered retry, or an error) back at the front:
	// their live session ends, its slot freed and the pass revoked as
	// Release does, and they wait first in line with their place, behind
	// only the visitors requeued before them, within the rate and the cap
	// as a returner (see Requeued); each Advance lets them in first, in
	// that order, before the line (a pending slot for lim.Grace, claimed
	// by their next Claim). At most lim.Requeues times per visitor,
	// remembered for the session and the retention after the last: past
	// that, or with no live session of the pass (as Release names it),
	// nothing changes. One round trip.
	Requeue(ctx context.Context, room, visitor, passID string, passExpiry, now time.Time, lim Limits) (RequeueResult, error)

	// Advance is one step of the admission controller. Every node calls it every
	// second; only the first call in a given second does anything. It expires
	// sessions (and, with lim.SessionIdle, ends those not used for that long),
	// counts unclaimed admissions as abandoned after the grace window, closes
	// the fair draw when lim.CloseDraw is set, and, when lim.Open, lets the
	// requeued visitors still asking in again first, in the order they were
	// requeued (see Requeue), then moves
	// serving forward by the smaller of the rate budget and the free slots,
	// the budget being the returners' first (a visitor's worth kept for each
	// one waiting, see Full) and the line's after, counted in live places: places whose holders were not seen for
	// lim.WaitingIdle are skipped without a slot (Counters.Skipped). Last it
	// counts the live places from serving on (Snapshot.Live).
	Advance(ctx context.Context, room string, now time.Time, lim Limits) error

	// Beat records, in one round trip, that the holders of places were seen
	// waiting and that visitors' sessions were used, at now, and what places'
	// holders were told (Beats.Told). A node gathers
	// what its requests saw and calls it at most once a second (see
	// liveness.go). Places seen below serving and visitors without a live
	// session are ignored; told marks are kept wherever serving is. Each mark is recorded atomically, not necessarily all of
	// them at once: a backend may split a large Beat into bounded parts (the
	// Redis store does, so as not to hold the server), since a mark only adds
	// to what the store knows.
	Beat(ctx context.Context, room string, beats Beats, now time.Time, lim Limits) error

	// ToldTally counts the room's places by the marks Beat recorded for
	// them (Beats.Told), which are kept, place by place, for the room's
	// life: the fairness report's account of what fans were in fact told.
	ToldTally(ctx context.Context, room string) (ToldTally, error)

	// Snapshot reads the room's state, with the revocations recorded after the
	// given cursor (0: all that are still live).
	Snapshot(ctx context.Context, room string, now time.Time, revokedAfter int64) (Snapshot, error)

	// DrawSeed stores candidate as the room's draw seed unless one is stored
	// already, and returns the stored seed with the time it was committed.
	DrawSeed(ctx context.Context, room string, candidate []byte, now time.Time) ([]byte, time.Time, error)

	// PhaseSeed stores candidate as the draw seed of the room's phase
	// unless one is stored already, and returns the stored seed with the
	// time it was committed: the first write wins, on whichever node
	// (phasedraw.go).
	PhaseSeed(ctx context.Context, room, phase string, candidate []byte, now time.Time) ([]byte, time.Time, error)

	// CommitLanes records now as the time phase's lane weights were
	// committed to commitment (LaneCommitment), unless that commitment of
	// the phase was recorded already, and returns the time stored: the
	// first write wins, so a commitment made before a phase's start stays
	// dated before it (docs/fairness.md, "Priority lanes").
	CommitLanes(ctx context.Context, room, phase, commitment string, now time.Time) (time.Time, error)

	// Overrides returns the room's runtime overrides (opaque JSON, empty if none)
	// and their version (0 if none).
	Overrides(ctx context.Context, room string) ([]byte, int64, error)

	// SaveOverrides replaces the overrides if their version is still expect, and
	// returns the new version; otherwise it fails with ErrVersionConflict.
	SaveOverrides(ctx context.Context, room string, data []byte, expect int64) (int64, error)

	// Historian keeps the room's public history: every admission and every
	// rolling draw, published by the fairness report (fairness.go).
	Historian

	// Auditor keeps the room's audit trail: every change made to the running
	// room, by whom, with old and new values (audit.go).
	Auditor

	// CodeKeeper keeps the room's access codes, hashed, and counts their
	// uses (codes.go).
	CodeKeeper
	// Supplier keeps what is left to sell (supply.go).
	Supplier
}

// Limits are the settings a store operation needs. The node passes them on each
// call, so the store never reads configuration and an admin change is in force as
// soon as a node knows of it.
type Limits struct {
	Rate    int           // new users per minute
	Cap     int           // total active users
	Session time.Duration // session length from claim
	Grace   time.Duration // time an admitted visitor has to claim
	// ReturnWindow is how long after their grace ended a visitor whose
	// admission lapsed unclaimed may still come back at the front; after it
	// their turn has passed. Zero: never.
	ReturnWindow time.Duration
	Retention    time.Duration // how long a finished visitor is remembered (ticket lifetime)
	Open         bool          // admission may move forward
	CloseDraw    bool          // the event has started: close the pre-queue draw
	// Reshuffle is the random queueing method: whenever the places drawn so far
	// are all admitted and visitors wait, the controller draws everyone waiting
	// into a new epoch, and admits only drawn places.
	Reshuffle bool
	// WaitingIdle is how long a waiting place may go unseen before it is a
	// ghost; it also sets the heartbeat window (BeatWindow). Zero: no place is
	// ever a ghost.
	WaitingIdle time.Duration
	// SessionIdle ends a session not used for this long; zero: never.
	SessionIdle time.Duration
	// JoinLimit caps the places one client network takes (Joiner.Client),
	// counted by the store for every node that shares it. Zero: no limit.
	JoinLimit JoinLimit
	// Requeues bounds the requeues of one visitor (Store.Requeue), at
	// most MaxRequeues.
	Requeues int
	// Lanes are the priority lanes (lanes.go): with more than one, each
	// lane is a line of its own (Joiner.Lane), and each step's admissions
	// are shared between them by weight (SplitAdmissions). Zero: one line.
	Lanes Lanes
	// Waitlist is in force while the room is sold out with the waitlist
	// on (docs/waitlist.md): Open is false, the line keeps its places, and
	// Advance lets places in only as far as the supply that came back
	// serves, WaitlistUnits units a fan (0: nobody now, as when paused).
	// The units let in for are counted out of the supply until the
	// supply falls by them (a hold) or their session could have ended
	// (Grace + Session), so that a unit that came back reaches one fan.
	Waitlist      bool
	WaitlistUnits int
	// PhaseQueue is the phase pre-queue open at the call's instant, if
	// any (phasequeue.go): every call that hands out keys or moves serving
	// first brings the store's PhaseRanges to now (SettlePhaseRanges),
	// then holds the line at the open range's first key (PhaseHold) and
	// admits nobody on the spot while one is open.
	PhaseQueue PhaseQueue
}

// MaxRequeues bounds Limits.Requeues (and the requeue_on_origin_error
// setting): a store looks each of a visitor's requeues up by its number.
const MaxRequeues = 10

// RequeueStatus is what Store.Requeue did.
type RequeueStatus uint8

const (
	// RequeueDone: the session ended and the visitor waits at the front.
	RequeueDone RequeueStatus = iota
	// RequeueSpent: the visitor had Limits.Requeues requeues already; the
	// session runs on.
	RequeueSpent
	// RequeueNoSession: the visitor holds no live session; nothing changed.
	RequeueNoSession
)

func (s RequeueStatus) String() string {
	switch s {
	case RequeueDone:
		return "requeued"
	case RequeueSpent:
		return "spent"
	case RequeueNoSession:
		return "no_session"
	}
	return "unknown"
}

// RequeueResult is the outcome of Requeue: what was done, and the
// visitor's requeues counted so far (this one included).
type RequeueResult struct {
	Status RequeueStatus
	Count  int
}

// JoinOne joins one visitor, unweighed, through joinMany (a Store's
// JoinMany): a store whose JoinMany does the work implements Join with it, so
// that one visitor and a batch are made places by the same code.
func JoinOne(ctx context.Context, joinMany func(context.Context, string, []Joiner, time.Time, Limits) ([]JoinResult, error), room, visitor string, now time.Time, lim Limits) (JoinResult, error) {
	res, err := joinMany(ctx, room, []Joiner{{Visitor: visitor}}, now, lim)
	if err != nil {
		return JoinResult{}, err
	}
	return res[0], nil
}

// Joiner is one newcomer a store is asked to make a place for: the visitor
// ID the place is taken with, and what the store weighs before making it.
// A Joiner with only a Visitor is joined unweighed.
type Joiner struct {
	Visitor string
	// Client is the client network (ClientNetwork) whose Limits.JoinLimit
	// allowance the place takes: the store counts the places each network
	// took (a GCRA per network, JoinLimit.Interval apart, JoinLimit.BurstSize
	// at once) and refuses one over it with RefusedJoinLimit. "": not
	// counted.
	Client string
	// Seed names the proof-of-work seed the joiner answered: the store makes
	// one place per seed, refusing the others with RefusedSeedSpent, and
	// remembers it until SeedUntil (the seed's expiry, with the clock skew
	// between nodes allowed for). "": no seed.
	Seed      string
	SeedUntil time.Time
	// Lane names the joiner's lane (Limits.Lanes): the place is the next
	// of that lane's line (LanePlace). "", or a lane the room does not
	// have, is the general lane, whose places are the order keys of a room
	// without lanes.
	Lane string
}

// Refusal is why a store made no place for a joiner.
type Refusal uint8

const (
	// NotRefused: the joiner was given a place.
	NotRefused Refusal = iota
	// RefusedJoinLimit: the joiner's client network has taken its share of
	// places (Limits.JoinLimit) on every node together; JoinResult.RetryAfter
	// says when it will have one again.
	RefusedJoinLimit
	// RefusedSeedSpent: the joiner's seed bought a place already.
	RefusedSeedSpent
)

func (r Refusal) String() string {
	switch r {
	case NotRefused:
		return "placed"
	case RefusedJoinLimit:
		return "join_limit"
	case RefusedSeedSpent:
		return "seed_spent"
	}
	return "unknown"
}

// Beats are what a node saw since its last Beat: the places (order keys, or
// the places a draw gave) whose holders are waiting and looked, and the
// visitors whose sessions carried a request.
type Beats struct {
	Places   []uint64
	Sessions []string
	// Told are marks of what places' holders were told of their chance,
	// and of their being let in (supplycalibration.go): each sent once by a
	// node, and added by the store to what it holds for the place.
	Told []PlaceTold
}

// PlaceTold is a place and marks to add to it.
type PlaceTold struct {
	Place uint64
	Marks ToldMarks
}

// Heartbeats are kept per window of time: the store remembers, for each of the
// last BeatWindows windows, which places were seen in it (one bit per place).
// A place is live when it was seen in any of them, or joined too recently to
// tell. The window is a quarter of the idle timeout, so a place is a ghost
// after between one idle timeout and one and a quarter unseen, and a store
// holds five bits per waiting place.
const BeatWindows = 5

// BeatWindow is the heartbeat window for an idle timeout.
func BeatWindow(idle time.Duration) time.Duration {
	return max(time.Second, (idle / 4).Truncate(time.Second))
}

// LiveBlock is how many places one live count covers (Liveness.Counts), and
// LiveHeadBlocks how many blocks from serving on are sent bit by bit, so that
// the positions of those near the front are exact.
const (
	LiveBlock      = 1024
	LiveHeadBlocks = 16
	// LiveStepBlocks bounds one controller step's liveness work, so that it
	// does not grow with the line: it walks at most this many blocks of
	// ghosts, and the Redis store counts at most this many blocks per step,
	// the head each time and the rest in turn (docs/ARCHITECTURE.md).
	LiveStepBlocks = 256
)

// Liveness is the store's count of live places from serving on, as the last
// controller step made it. Nodes compute positions from it with no store call.
type Liveness struct {
	// From is the first place counted: serving rounded down to a LiveBlock.
	From uint64
	// Young: places at or above it are counted live whatever their beats say,
	// because they joined (or were drawn) too recently to tell, or the store
	// has too short a history of beats (it lost them, or was just created).
	// Zero: every place is young.
	Young uint64
	// Counts are the live places of each block [From+i*LiveBlock,
	// From+(i+1)*LiveBlock), for the blocks below Young.
	Counts []uint16
	// Head has one bit per place from From on (most significant bit first),
	// set for live places, for the first LiveHeadBlocks blocks at most.
	Head []byte
}

// MaxEpochs is how many rolling draws a store remembers: enough for every
// admission still within its grace, with room to spare.
const MaxEpochs = 64

// Epoch is one rolling draw of the random queueing method: the keys
// [Start, Start+Size), placed by the permutation of epoch Number (see
// EpochSeed). Epoch numbers start at 1; the pre-queue draw is epoch 0.
type Epoch struct {
	Start  uint64 `json:"start"`
	Size   uint64 `json:"size"`
	Number uint64 `json:"number"`
}

// End is the first key after the epoch.
func (e Epoch) End() uint64 { return e.Start + e.Size }

// ReturnerWindow is how long a late returner who found no free slot or no
// budget (Full), or a room admitting nobody (Held), keeps a slot and a
// visitor's worth of budget reserved for them, and their right to the front,
// by asking again. Status polls come well within it. It is
// not Limits.ReturnWindow, which bounds how late they may first come back.
const ReturnerWindow = 45 * time.Second

// MaxCatchUpTicks bounds the rate budget one controller step grants after
// missed seconds. A step earns Rate/60 visitors for each second since the
// previous step, up to this many; after a longer stall (or for a room's first
// step) it earns one second's worth, so a controller that stalled does not
// release a burst. The budget held never exceeds one second's worth, or one
// visitor's when that is more, so that a slow rate still admits someone.
const MaxCatchUpTicks = 5

// Recall is what a node knows of a room when it (re)creates it in the store.
type Recall struct {
	// Counters are raised to at least these values.
	Counters
	// Held sessions were live when the store lost its data. A store that creates
	// the room holds that many slots until HeldUntil, so passes already out there
	// still count against the cap. Each Reclaim (a pass from before the loss
	// seen again), announced session, or Release of a session the store does
	// not hold gives one up, and HeldUntil is short (reseedHold): a session
	// not seen by then is taken for gone, and its holder, should they come
	// back, is let in as a returner. Ignored when the room exists.
	Held      int
	HeldUntil time.Time
	// MarginFrom, for a room a re-seed creates, starts the margin the order
	// keys were raised by, [MarginFrom, Seq): keys other nodes may have
	// handed out since this node last looked, most of them never handed out.
	// The room judges those places by their beats from the start (live only
	// when seen since the loss), so the line passes the unheld ones without
	// a slot and positions do not count them. Zero: no margin. Ignored when
	// the room exists.
	MarginFrom uint64
	// LostAt, for a room this seed creates after a loss (a re-seed, or a
	// room re-created settling), is when: passes issued before it belong to
	// sessions this incarnation may not know, which nodes Reclaim. Ignored
	// when the room exists.
	LostAt time.Time
	// DrawClosed and DrawSize restore a fair draw that was already made, so the
	// places it gave do not change. Ignored when the room exists.
	DrawClosed bool
	DrawSize   uint64
	// Epochs restore the rolling draws already made, so their places do not
	// change. Ignored when the room exists.
	Epochs []Epoch
	// PhaseRanges restore the phase pre-queues, open or drawn, so their
	// places do not change. Ignored when the room exists.
	PhaseRanges []PhaseRange
	// Incarnation names this creation of the room (empty: the store picks a
	// random one). Ignored when the room exists.
	Incarnation string
	// Batches are the admissions still within their grace window, as last
	// seen: their holders keep the rest of their time to claim. They come
	// back Restored: a node's view may predate some of their claims, so their
	// places count among the Held slots, and a claim from one turns a held
	// slot into the visitor's session instead of taking another.
	// Ignored when the room exists.
	Batches []Batch

	// What survives a loss of the store beyond the line itself (see
	// recovery.go for how nodes use these).
	//
	// Overrides and OverridesVersion are the runtime overrides as the node
	// last saw them. Versions only grow within a room's life, so a store that
	// holds a lower version (the room was re-created by a node that knew
	// less) takes the seed's, even when the room exists.
	Overrides        []byte
	OverridesVersion int64
	// Forgotten is raised, never lowered: places below it were admitted
	// before the store lost its data, so a claim from one that holds no live
	// session is refused as finished (see Snapshot.Forgotten).
	Forgotten uint64
	// Whole is set when the seed is a node's whole view of the room (a
	// re-seed). A room created without one (blank) takes the parts of the
	// first whole seed that are otherwise creation-only: held slots,
	// admissions, draws.
	Whole bool
	// SettleUntil, for a room this seed creates, holds it while the line
	// re-announces itself: until then nobody is admitted and no key is
	// handed out. Ignored when the room exists.
	SettleUntil time.Time
	// Sessions are sessions a node saw live (their passes) that the store
	// may not know of after a loss: each is added, with a finished mark,
	// unless its visitor holds one already.
	Sessions []HeldSession
	// RaiseOnly seeds only raise a room that exists: when the store has no
	// record of it, Init creates nothing and fails with ErrNoRoom, so that a
	// partial seed never re-creates a room the node should re-seed whole.
	RaiseOnly bool
	// Lanes raise the priority lanes' counters as Counters raise the
	// general lane's (Snapshot.Lanes); LaneCredit and LaneSpec, the round
	// robin's state, are taken by a room the seed creates.
	Lanes      []LaneCounters
	LaneCredit []int64
	LaneSpec   string
	// WaitlistEnded is when the line last stopped being a waitlist, as the
	// node last saw it (WaitlistState.Ended; zero: never, or not known). A
	// room whose line is not a waitlist takes it when it is later than its
	// own, whether or not the room exists: passes issued after a reopening
	// keep the waitlist claim across a loss of the store.
	WaitlistEnded time.Time
	// Waitlist is the line's waitlist as the node last saw it, while it
	// was one (Since set): a room this seed creates (or a blank one, with
	// the first whole seed) takes it up where it was, owing its Owed units
	// until WaitlistOwedUntil (when the sessions let in for them could have
	// ended at the latest), so that no unit that came back reaches two fans
	// across the loss. Ignored when the room exists.
	Waitlist          WaitlistState
	WaitlistOwedUntil time.Time
}

// HeldSession is a session known from its pass: it ends at Until, and its
// visitor is remembered as finished until Forget.
type HeldSession struct {
	Visitor       string
	Until, Forget time.Time
}

// Batch is one controller step's admissions: Count live places among
// [Start, Start+Span) (the rest were ghosts, skipped), of which Claimed were
// claimed, admitted At. Span 0 means Count.
type Batch struct {
	Start, Count, Claimed uint64
	Span                  uint64
	At                    time.Time
	// Restored batches came back in a Recall: their unclaimed places are held
	// slots, not pending ones.
	Restored bool
}

// Counters are the monotone totals of a room. They only ever grow, which is what
// lets Init re-seed a store from several nodes' views by taking the maximum.
type Counters struct {
	Seq       uint64 `json:"seq"`       // order keys issued (the next key)
	Serving   uint64 `json:"serving"`   // places below this may claim
	Admitted  uint64 `json:"admitted"`  // places let in, directly or by the controller
	Claimed   uint64 `json:"claimed"`   // sessions opened
	Abandoned uint64 `json:"abandoned"` // admitted places never claimed in time
	Skipped   uint64 `json:"skipped"`   // ghost places passed over without a slot
	IdledOut  uint64 `json:"idled_out"` // sessions ended for want of requests
	Returned  uint64 `json:"returned"`  // fans let in at the front: lapsed within return_window, idled out, requeued
	Requeued  uint64 `json:"requeued"`  // sessions the origin's failure put back at the front (Store.Requeue)
}

// Max returns the field-wise maximum.
func (c Counters) Max(o Counters) Counters {
	return Counters{
		Seq:       max(c.Seq, o.Seq),
		Serving:   max(c.Serving, o.Serving),
		Admitted:  max(c.Admitted, o.Admitted),
		Claimed:   max(c.Claimed, o.Claimed),
		Abandoned: max(c.Abandoned, o.Abandoned),
		Skipped:   max(c.Skipped, o.Skipped),
		IdledOut:  max(c.IdledOut, o.IdledOut),
		Returned:  max(c.Returned, o.Returned),
		Requeued:  max(c.Requeued, o.Requeued),
	}
}

// Snapshot is what a node knows of a room between store calls.
type Snapshot struct {
	Counters
	Active    int     // live sessions
	Pending   int     // admitted, not yet claimed, still within grace
	Returning int     // late returners waiting at the front for budget or a free slot
	Credit    float64 // unspent rate budget, in visitors
	// Pace is the controller's record of how fast the line moved, from
	// which every node estimates waits alike (see Pace).
	Pace       Pace
	DrawClosed bool   // the pre-queue draw was made
	DrawSize   uint64 // registrations the draw covers (keys below it)
	// Epochs are the latest rolling draws of the random method, oldest first,
	// at most MaxEpochs of them.
	Epochs []Epoch
	// PhaseRanges are the phase pre-queues the store recorded, oldest
	// first, at most MaxPhaseRanges (phasequeue.go).
	PhaseRanges []PhaseRange
	Version     int64 // overrides version
	// Incarnation changes whenever the room is created anew, as after the store
	// lost its data: revocation cursors of the old incarnation mean nothing in
	// the new one, so a node that sees it change reads revocations from 0.
	Incarnation string
	// Batches are the admissions still within their grace window, oldest
	// first: what a node needs to re-seed a store that lost them.
	Batches []Batch
	// Revocations recorded after the cursor asked for, oldest first.
	Revocations []Revocation
	// Live counts the live places from serving on.
	Live Liveness

	// Forgotten: places below it were admitted before the store lost its
	// data, and their admission windows had ended; who claimed them is
	// lost, so a claim from one without a live session is refused as
	// finished (its holder rejoins at the back). 0 for a room never lost.
	Forgotten uint64
	// SettleUntil is when a room re-created with nothing known of it starts
	// to admit and to hand out keys again (zero: not settling).
	SettleUntil time.Time
	// Blank is set while the room was created without a whole seed: a node
	// that knows more re-seeds it.
	Blank bool
	// LostAt is when this incarnation was created after a loss of the
	// store (zero for a room never lost): a pass issued before it is
	// Reclaimed the first time a node sees it.
	LostAt time.Time
	// Margin is the re-seed's margin of order keys, [Margin[0], Margin[1])
	// (see Recall.MarginFrom): places in it count as live only when seen.
	Margin [2]uint64
	// Supply are the latest supply samples, oldest first, at most
	// MaxSupplyTail (supply.go); none while nobody reported one.
	Supply []SupplySample
	// Waitlist is the line's waitlist, while it is one (waitlist.go).
	Waitlist WaitlistState

	// Lanes are the priority lanes' counters, by lane number (lanes.go;
	// the general lane's, number 0, are Counters and left zero here), and
	// LaneCredit the weighted round robin's credits with LaneSpec the
	// weights (Lanes.String) they were kept for. Empty in a room without
	// lanes.
	Lanes      []LaneCounters
	LaneCredit []int64
	LaneSpec   string
}

// LaneCounters are one priority lane's monotone totals: its order keys
// issued, its serving counter, and the places it let in.
type LaneCounters struct {
	Seq, Serving, Admitted uint64
}

// Max returns the field-wise maximum.
func (c LaneCounters) Max(o LaneCounters) LaneCounters {
	return LaneCounters{Seq: max(c.Seq, o.Seq), Serving: max(c.Serving, o.Serving), Admitted: max(c.Admitted, o.Admitted)}
}

// InMargin reports whether place lies in the re-seed's margin.
func (s Snapshot) InMargin(place uint64) bool {
	return place >= s.Margin[0] && place < s.Margin[1]
}

// Revocation is a pass that must no longer be honoured: the pass PassID, or,
// for a session that idled out, every pass of Visitor issued before IdledAt.
type Revocation struct {
	Cursor    int64
	PassID    string
	ExpiresAt time.Time
	Visitor   string
	IdledAt   time.Time
}

// JoinResult is the outcome of Join.
type JoinResult struct {
	Key      uint64
	Admitted bool      // admitted on the spot: a session is open
	Expires  time.Time // session end, when Admitted
	// Refused is set when no place was made (Key is then 0), and
	// RetryAfter, for RefusedJoinLimit, is when the network has one again.
	Refused    Refusal
	RetryAfter time.Duration
}

// ClaimStatus is the outcome of a claim.
type ClaimStatus int

const (
	// Claimed: a session is open (new or already live).
	Claimed ClaimStatus = iota
	// NotYet: the place is not below serving.
	NotYet
	// Full: the visitor's admission lapsed unclaimed (or their place was
	// skipped as a ghost, or their session idled out) and they came back in
	// time; they go to the front, but no slot is free right now, or no rate
	// budget: returners are let in within the rate, never beyond it. Asking
	// again within ReturnerWindow keeps their place at the front: every
	// controller step keeps its budget, and the free slots, for those
	// waiting there before the line gets any.
	Full
	// Finished: the visitor already had a session and it ended; they must rejoin.
	Finished
	// Held: as Full, but the room admits nobody now (paused, queue_all, sold
	// out, closed): the visitor keeps their right to the front while they ask
	// again within ReturnerWindow, and goes in once the room admits.
	Held
	// Passed: the visitor's admission lapsed unclaimed and they came back after
	// the return window (or the store no longer knows when it lapsed): their
	// turn has passed, and they rejoin at the back.
	Passed
	// Requeued: the visitor's session was requeued (Store.Requeue) and they
	// wait at the front, not let in yet: a visitor requeued before them
	// still waits, or there is no budget or no slot, or the room admits
	// nobody. Asking again within ReturnerWindow keeps their place there,
	// as a returner's; requeued visitors go in before the other returners,
	// in the order they were requeued. One who stops asking is Passed.
	Requeued
)

func (s ClaimStatus) String() string {
	switch s {
	case Claimed:
		return "claimed"
	case NotYet:
		return "not_yet"
	case Full:
		return "full"
	case Finished:
		return "finished"
	case Held:
		return "held"
	case Passed:
		return "passed"
	case Requeued:
		return "requeued"
	}
	return "unknown"
}

// ClaimResult is the outcome of Claim.
type ClaimResult struct {
	Status  ClaimStatus
	Expires time.Time // session end, when Claimed
}

// End is the first place after the batch.
func (b Batch) End() uint64 { return b.Start + max(b.Span, b.Count) }
