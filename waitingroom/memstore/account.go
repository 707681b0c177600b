package memstore

import (
	"context"
	"errors"
	"time"

	"github.com/foyer-dev/foyer/waitingroom"
)

// accountPlace is an account's recorded place: who took it, its key, and when
// (whole seconds, as the Redis store keeps it, so both decide freshness alike).
type accountPlace struct {
	visitor waitingroom.VisitorID
	key     uint64
	joined  int64
}

// JoinAccount implements waitingroom.Store.
func (s *Store) JoinAccount(_ context.Context, name string, req waitingroom.AccountJoin, now time.Time, lim waitingroom.Limits) (waitingroom.AccountPlace, error) {
	visitor, ok := waitingroom.ParseVisitorID(req.Visitor)
	if !ok {
		return waitingroom.AccountPlace{}, errBadVisitor
	}
	r, err := s.lockRoom(name)
	if err != nil {
		return waitingroom.AccountPlace{}, err
	}
	defer r.mu.Unlock()
	if now.Before(r.settle) {
		return waitingroom.AccountPlace{}, waitingroom.ErrSettling
	}
	if p, ok := r.accounts[req.Account]; ok && waitingroom.AccountFresh(p.joined, now.Unix(), lim.Retention) &&
		!(req.HasSpent && req.Spent == p.key) {
		return waitingroom.AccountPlace{
			JoinResult: waitingroom.JoinResult{Key: p.key},
			Visitor:    p.visitor,
			Joined:     time.Unix(p.joined, 0),
			Existing:   true,
		}, nil
	}
	if why, wait := r.checks.weigh(req.Joiner, now, lim); why != waitingroom.NotRefused {
		return waitingroom.AccountPlace{JoinResult: waitingroom.JoinResult{Refused: why, RetryAfter: wait}}, nil
	}
	r.expireSessions(now)
	res := r.join(req.Visitor, now, lim)
	if r.accounts == nil {
		r.accounts = make(map[waitingroom.AccountKey]accountPlace)
	}
	r.accounts[req.Account] = accountPlace{visitor: visitor, key: res.Key, joined: now.Unix()}
	return waitingroom.AccountPlace{JoinResult: res, Visitor: visitor, Joined: time.Unix(now.Unix(), 0)}, nil
}

// errBadVisitor refuses a visitor ID that is not one: the caller's bug, never
// a visitor's input (visitor IDs are minted by the room).
var errBadVisitor = errors.New("memstore: malformed visitor id")
