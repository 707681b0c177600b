package waitingroom

import (
	"errors"

	"github.com/foyer-dev/foyer/waitingroom/pass"
)

// The errors the core returns, in one place. Callers test them with
// errors.Is; each carries the message a log or an operator reads.

// ErrStoreUnavailable wraps a store failure on a path that needs the store, such
// as a new visitor joining. The caller answers 503 with Retry-After.
var ErrStoreUnavailable = errors.New("waiting room store unavailable")

// Errors a Store returns.
var (
	// ErrNoRoom means the store has no record of the room: it is new, or the
	// store lost its data. The node calls Init and retries.
	ErrNoRoom = errors.New("room not initialised in the store")
	// ErrVersionConflict means the overrides changed since they were read.
	ErrVersionConflict = errors.New("overrides changed concurrently")
	// ErrSettling means the room was re-created after a loss and is holding
	// newcomers while the line re-announces itself (see Recall.SettleUntil).
	ErrSettling = errors.New("room is settling after a loss of its store")
)

// ErrNoTransition is a request the admission table has no row for. It is a
// defect, never a fan's fault; the gateway answers it with a 500.
var ErrNoTransition = errors.New("waitingroom: no transition in the admission table")

// ErrNotPublished: the fairness report of a room is published once the room
// has closed (event_end passed) or sold out, not while the sale runs: the
// seed it reveals would let anyone foresee the random method's next draws.
var ErrNotPublished = errors.New("waitingroom: the fairness report is published once the room has closed or sold out")

// ErrJoinQueueFull is returned, wrapped in ErrStoreUnavailable by Room.Join,
// when MaxJoinQueue joins already wait for the store.
var ErrJoinQueueFull = errors.New("too many joins waiting for the store")

// ErrJoinLimited is what a JoinLimitedError is.
var ErrJoinLimited = errors.New("too many new places from one client address")

// ErrRevocationDeferred is wrapped by Revoke when the store could not record
// the revocation yet. The pass is refused on this node already, and the store
// is written as soon as it answers: nothing more is asked of the caller.
var ErrRevocationDeferred = errors.New("revocation kept on this node until the store records it")

// ErrInvalidTicket is returned for any ticket that cannot be trusted: garbage, a
// bad MAC, another room's ticket, an unknown version, an expired ticket. Callers
// treat the holder as a new visitor; they never answer with a server error.
var ErrInvalidTicket = errors.New("invalid ticket")

// ErrNoDraw: the room made no draw, so there is no place to recompute: its
// fans were let in first come, first served, in the order of their keys. The
// report then has neither a seed nor a commitment, which is not a broken seed
// and must not be reported as one.
var ErrNoDraw = errors.New("the room made no draw: its fans were let in first come, first served, in the order of their keys, so there is no place to recompute")

// ErrNotInDrawInfo: the draw endpoint covers the key with none of the draws
// it lists. It lists the pre-queue's draw and only the latest rolling draws,
// with neither the first-come places nor the line's progress, so it cannot
// tell an older epoch from a first-come place or a key still waiting: the
// fairness report can.
var ErrNotInDrawInfo = errors.New("no draw the draw endpoint lists covers that draw_index: it lists the pre-queue's draw and only the latest 64 rolling draws, and says nothing of first-come places or of the line; check it against the fairness report")

// Answers that are refused; none of them makes a place. The gateway answers
// each with its own 4xx and error code (docs/endpoints.md, "What fans, apps and origins
// see").
var (
	// ErrAnswerMalformed: the seed is not one of ours in form (base64url of
	// the right length and version), or the nonce is not 1 to 32 decimal
	// digits.
	ErrAnswerMalformed = errors.New("malformed answer: seed must be the base64url seed given, nonce 1 to 32 decimal digits")
	// ErrSeedInvalid: the seed was not issued by this room to this client
	// address (its MAC does not match).
	ErrSeedInvalid = errors.New("the seed was not issued by this room to this address")
	// ErrSeedExpired: the seed's lifetime is over.
	ErrSeedExpired = errors.New("the seed has expired; ask for a new one")
	// ErrWrongNonce: the hash of seed and nonce does not start with the
	// seed's number of zero bits.
	ErrWrongNonce = errors.New("the nonce does not solve the seed")
	// ErrSeedOutdated: the seed asks fewer bits than the room asks now (its
	// difficulty was raised after the seed was handed out).
	ErrSeedOutdated = errors.New("the room asks for more work now; solve a new seed")
	// ErrSeedSpent: the seed bought a place already, on this node or on
	// any node sharing the store.
	ErrSeedSpent = errors.New("the seed was answered already; ask for a new one")
	// ErrChallengeBusy: this node remembers as many spent seeds as it will
	// keep; it takes answers again as they expire.
	ErrChallengeBusy = errors.New("too many answers at once; try again shortly")
)

// ErrInvalidPass is wrapped by every pass verification failure (pass.ErrInvalid).
var ErrInvalidPass = pass.ErrInvalid
