package waitingroom

import (
	"context"
	"crypto/sha256"
	"errors"
	"time"
)

// One place per account (docs/configuration.md, "The account block"): when the site's own
// login vouches for a visitor, the room keys their place to the account, so a
// second browser of the same account is handed the same place (the same order
// key and visitor, hence the same session once admitted), not a second one.
//
// The gateway verifies the site's token and passes the account on in the
// Arrival; an account-holder's rejoin (their session ended, or their turn
// passed) replaces the account's place rather than adding one.

// AccountKey is what a store keeps to name an account: a short hash of the
// room and the account's id. 64 bits keep a collision between two accounts of
// one room out of reach (about 1 in 10^7 with a million accounts), while the
// store's cost per account stays small (docs/configuration.md: ≤ 64 bytes in Redis).
type AccountKey [8]byte

// NewAccountKey hashes an account id for room.
func NewAccountKey(room, account string) AccountKey {
	// Every poll of a signed-in fan computes it: one buffer, on the stack
	// for the usual lengths, and one hash.
	const domain = "foyer-account-v1\x00"
	var buf [128]byte
	b := append(append(append(append(buf[:0], domain...), room...), 0), account...)
	sum := sha256.Sum256(b)
	var k AccountKey
	copy(k[:], sum[:])
	return k
}

// AccountJoin asks a store for an account's place.
type AccountJoin struct {
	Account AccountKey
	// Joiner is who a new place is taken for (its Visitor) and what it is
	// weighed by; an account's existing place is returned unweighed.
	Joiner
	// Spent, when set, is the key of a place of the account's that is over:
	// the session it gave ended, or its turn passed. If it is the account's
	// recorded place, the account joins anew.
	Spent    uint64
	HasSpent bool
}

// AccountPlace is the outcome of Store.JoinAccount.
type AccountPlace struct {
	// JoinResult is the place: its key, and for a new place whether it was
	// admitted on the spot.
	JoinResult
	// Visitor holds the place (Existing: the one who took it first).
	Visitor VisitorID
	// Joined is when the place was taken, in whole seconds.
	Joined time.Time
	// Existing is set when the account held the place already; nothing
	// changed in the store.
	Existing bool
}

// AccountFresh is how long a recorded place stays the account's: the ticket
// lifetime (Limits.Retention) from when it was taken, measured in whole
// seconds by every store. After it the account joins anew: a place cannot be
// banked for longer than a ticket could hold it.
func AccountFresh(joinedUnix, nowUnix int64, retention time.Duration) bool {
	return nowUnix-joinedUnix < int64(retention/time.Second)
}

// joinAccount is Join for a visitor with an account: the account's place if it
// holds one, a new place recorded as the account's otherwise. One store round
// trip, plus a claim when the place it finds has reached the front.
func (r *Room) joinAccount(ctx context.Context, a *arrival, v *view, t Ticket, now time.Time, lim Limits) (Visit, error) {
	// Account joins are not batched: each is its own round trip. They are
	// bounded like the joins waiting behind a batch, so a store that hangs
	// holds at most MaxJoinQueue of them on this node; the rest are told to
	// come back at once.
	if r.accountJoins.Add(1) > MaxJoinQueue {
		r.accountJoins.Add(-1)
		return Visit{}, r.joinFailed(ctx, ErrJoinQueueFull)
	}
	defer r.accountJoins.Add(-1)
	req := AccountJoin{Account: a.account, Joiner: a.joiner(t.Visitor), Spent: a.spent, HasSpent: a.hasSpent}
	res, err := r.store.JoinAccount(ctx, r.id, req, now, lim)
	if errors.Is(err, ErrNoRoom) {
		if err = r.reseed(ctx, now); err == nil {
			res, err = r.store.JoinAccount(ctx, r.id, req, now, lim)
		}
	}
	if err != nil {
		return Visit{}, r.joinFailed(ctx, err)
	}
	if res.Refused != NotRefused {
		return r.refused(res.JoinResult)
	}
	r.mu.Lock()
	r.raiseMaxKey(res.Key)
	r.mu.Unlock()
	if res.Existing {
		// The place another browser of the account took: this one gets a
		// ticket for it, and polls it as that browser would (claiming the
		// same session when it is at the front).
		held := Ticket{Room: r.id, Visitor: res.Visitor, Key: res.Key, Joined: res.Joined, Seen: now}
		if a.polled {
			st, held := v.status(held, now)
			r.noteTold(held, st)
			return Visit{Status: st, Ticket: held, transition: machine[TicketWaiting][EventArrive]}, nil
		}
		found := *a
		found.polled = true
		vis, err := r.poll(ctx, &found, held)
		if err != nil || !vis.Rejoined || vis.Status.State != StateChallenge {
			return vis, err
		}
		// The account's place turned out spent, and its rejoin asked for a
		// proof of work. This request is a join, which is reached only once
		// any puzzle is answered: the account takes its new place now.
		spent := *a
		spent.spent, spent.hasSpent = res.Key, true
		vis, err = r.joinAccount(ctx, &spent, v, t, now, lim)
		vis.Rejoined = true
		return vis, err
	}
	r.stats.Joins.Add(1)
	return r.placed(v, t, res.JoinResult, now)
}
