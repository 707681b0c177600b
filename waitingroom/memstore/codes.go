package memstore

import (
	"context"
	"sync"
	"time"

	"github.com/foyer-dev/foyer/waitingroom"
)

// Access codes (waitingroom.CodeKeeper), with the same rules as the Redis
// store's lua/codeadd.lua and lua/coderedeem.lua. The codes are kept apart
// from the rooms' lines, by room, under their IDs (keyed hashes): Drop
// leaves them, as a Redis store's loss of a room's line does not reach keys
// it does not know of.
type codeBooks struct {
	mu    sync.Mutex
	rooms map[string]map[string]*codeRec
}

type codeRec struct {
	lane       string
	max, count int
}

// AddCodes implements waitingroom.Store.
func (s *Store) AddCodes(_ context.Context, name string, codes []waitingroom.CodeEntry) error {
	b := &s.codes
	b.mu.Lock()
	defer b.mu.Unlock()
	book := b.rooms[name]
	seen := make(map[string]bool, len(codes))
	for _, c := range codes {
		if _, ok := book[c.ID]; ok || seen[c.ID] {
			return waitingroom.ErrCodeExists
		}
		seen[c.ID] = true
	}
	if book == nil {
		if b.rooms == nil {
			b.rooms = make(map[string]map[string]*codeRec)
		}
		book = make(map[string]*codeRec, len(codes))
		b.rooms[name] = book
	}
	for _, c := range codes {
		book[c.ID] = &codeRec{lane: c.Lane, max: c.MaxUses}
	}
	return nil
}

// RedeemCode implements waitingroom.Store: the try is weighed on the room's
// join_limit record as a join is, then the first ID stored is the code.
func (s *Store) RedeemCode(_ context.Context, name string, try waitingroom.CodeAttempt, now time.Time, lim waitingroom.Limits) (waitingroom.CodeResult, error) {
	r, err := s.lockRoom(name)
	if err != nil {
		return waitingroom.CodeResult{}, err
	}
	defer r.mu.Unlock()
	if why, wait := r.checks.weigh(waitingroom.Joiner{Client: try.Client}, now, lim); why != waitingroom.NotRefused {
		return waitingroom.CodeResult{Status: waitingroom.CodeLimited, RetryAfter: wait}, nil
	}
	b := &s.codes
	b.mu.Lock()
	defer b.mu.Unlock()
	for _, id := range try.IDs {
		c, ok := b.rooms[name][id]
		if !ok {
			continue
		}
		if c.count >= c.max {
			return waitingroom.CodeResult{Status: waitingroom.CodeUsedUp}, nil
		}
		c.count++
		return waitingroom.CodeResult{Status: waitingroom.CodeAccepted, Lane: c.lane, ID: id}, nil
	}
	return waitingroom.CodeResult{Status: waitingroom.CodeWrong}, nil
}

// ReturnCodeUse implements waitingroom.Store.
func (s *Store) ReturnCodeUse(_ context.Context, name, id string) error {
	b := &s.codes
	b.mu.Lock()
	defer b.mu.Unlock()
	if c, ok := b.rooms[name][id]; ok && c.count > 0 {
		c.count--
	}
	return nil
}

// CodeUses implements waitingroom.Store.
func (s *Store) CodeUses(_ context.Context, name string) ([]waitingroom.CodeUse, error) {
	b := &s.codes
	b.mu.Lock()
	defer b.mu.Unlock()
	out := make([]waitingroom.CodeUse, 0, len(b.rooms[name]))
	for id, c := range b.rooms[name] {
		out = append(out, waitingroom.CodeUse{CodeEntry: waitingroom.CodeEntry{ID: id, Lane: c.lane, MaxUses: c.max}, Used: c.count})
	}
	waitingroom.SortCodeUses(out)
	return out, nil
}
