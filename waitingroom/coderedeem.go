package waitingroom

import (
	"context"
	"errors"
	"sync/atomic"
	"time"
)

// A fan's access code on the request path (docs/codes.md): a newcomer's code
// is redeemed in the store, one use counted atomically for every node, and
// buys a place in the code's lane; a fan who holds a place keeps it and the
// code is not used.

// CodeStats count the code attempts this node answered, by result, for the
// foyer_waiting_room_code_attempts_total metric.
type CodeStats struct {
	Accepted atomic.Uint64 // a use counted: the fan was given a place
	Wrong    atomic.Uint64 // no such code
	UsedUp   atomic.Uint64 // the code's uses were spent
	Limited  atomic.Uint64 // the client network was over join_limit: the code was not looked at
	// Returned counts uses counted for a fan whose place was then not
	// made, and given back; Unreturned those the store did not take back
	// (spent without a place).
	Returned, Unreturned atomic.Uint64
}

// codeIDs are the IDs a code has under each key of the ring, the current
// key's first: codes added before a rotation keep working after it.
func (kr *Keyring) codeIDs(room, code string) []string {
	ids := make([]string, 0, 1+len(kr.others))
	ids = append(ids, kr.current.codeID(room, code))
	for _, k := range kr.others {
		ids = append(ids, k.codeID(room, code))
	}
	return ids
}

// askCode answers a newcomer without a code to a room that gives places to
// code holders only: no place, the page asks for a code, and says when the
// sale opens to everyone when that is known (a later event_start).
func (r *Room) askCode(now time.Time) Visit {
	v := r.view.Load()
	s := v.settings
	st := Status{Room: r.id, Title: s.Title, State: StateCodeRequired, Waiting: v.waiting(), Reconnecting: !v.healthy}
	if opens := s.publicFrom(now); !opens.IsZero() {
		st.OpensAt = &opens
	}
	st = st.refreshIn(v.maxRefresh())
	return Visit{Status: st, transition: machine[TicketNew][EventCodeRequired]}
}

// publicFrom is when a room that asks newcomers for a code at now stops
// asking: the first switch of its phases after now whose settings do not
// require codes (a presale phase ending, a public phase starting); zero
// when no scheduled switch ends it (only the operator can).
func (s Settings) publicFrom(now time.Time) time.Time {
	for t, i := now, 0; i < 2*MaxPhases; i++ {
		if t = s.Phases.NextSwitch(t); t.IsZero() {
			break
		}
		if !s.At(t).CodesRequired {
			return t
		}
	}
	return time.Time{}
}

// CodeRequiredStatus is what a fan without a code is told by a room that
// gives places to code holders only, as Admit tells them.
func (r *Room) CodeRequiredStatus() Status { return r.askCode(r.now()).Status }

// redeem answers a newcomer who sent a code: the try weighs on join_limit
// (this node's table, then the store's count for every node, right code or
// wrong), the store counts one use of the code, and the fan joins the code's
// lane. A code that is wrong or used up makes no place (*CodeRefusedError).
func (r *Room) redeem(ctx context.Context, a *arrival) (Visit, error) {
	code, err := NormalizeCode(a.code)
	if err != nil {
		return Visit{transition: machine[TicketNew][EventCodeRefused]}, err
	}
	if err := r.allowJoin(a); err != nil {
		r.codes.Limited.Add(1)
		return Visit{transition: machine[TicketNew][EventOverJoinLimit]}, err
	}
	now := r.now()
	v := r.view.Load()
	if err := r.joinable(v); err != nil {
		r.ReturnJoin(a.client)
		return Visit{transition: machine[TicketNew][EventStoreAway]}, err
	}
	lim := v.settings.limitsAt(now)
	try := CodeAttempt{IDs: r.keys.codeIDs(r.id, code), Client: a.network}
	res, err := r.store.RedeemCode(ctx, r.id, try, now, lim)
	if errors.Is(err, ErrNoRoom) {
		if err = r.reseed(ctx, now); err == nil {
			res, err = r.store.RedeemCode(ctx, r.id, try, now, lim)
		}
	}
	if err != nil {
		r.ReturnJoin(a.client)
		return Visit{transition: machine[TicketNew][EventStoreAway]}, r.joinFailed(ctx, err)
	}
	switch res.Status {
	case CodeLimited:
		r.codes.Limited.Add(1)
		r.stats.JoinsLimited.Add(1)
		return Visit{transition: machine[TicketNew][EventOverJoinLimit]}, &JoinLimitedError{RetryAfter: res.RetryAfter}
	case CodeWrong:
		r.codes.Wrong.Add(1)
		return Visit{transition: machine[TicketNew][EventCodeRefused]}, &CodeRefusedError{Status: CodeWrong}
	case CodeUsedUp:
		r.codes.UsedUp.Add(1)
		return Visit{transition: machine[TicketNew][EventCodeRefused]}, &CodeRefusedError{Status: CodeUsedUp}
	}
	// The try took the network's allowance: the place it buys is not
	// weighed again.
	a.lane, a.network = res.Lane, ""
	vis, err := r.join(ctx, a)
	if vis.Ticket.Room == "" {
		// No place was made (the store failed, or the room settles after
		// a loss): the use goes back, so the fan's next try, or another
		// holder's, has it.
		if rerr := r.store.ReturnCodeUse(context.WithoutCancel(ctx), r.id, res.ID); rerr != nil {
			r.codes.Unreturned.Add(1)
		} else {
			r.codes.Returned.Add(1)
		}
	} else {
		r.codes.Accepted.Add(1)
	}
	if vis.transition == machine[TicketNew][EventArrive] {
		vis.transition = machine[TicketNew][EventCodeAccepted]
	}
	return vis, err
}

// CodeAttempts are this node's code attempts by result.
func (r *Room) CodeAttempts() *CodeStats { return &r.codes }
