package memstore

import (
	"context"

	"github.com/foyer-dev/foyer/waitingroom"
)

// History implements waitingroom.Store.
func (s *Store) History(_ context.Context, name string, from, limit int) ([]waitingroom.HistoryEntry, error) {
	r, err := s.lockRoom(name)
	if err != nil {
		return nil, err
	}
	defer r.mu.Unlock()
	limit = min(limit, waitingroom.MaxHistoryPage)
	if from < 0 || limit <= 0 || from >= len(r.history) {
		return nil, nil
	}
	end := min(len(r.history), from+limit)
	return append([]waitingroom.HistoryEntry(nil), r.history[from:end]...), nil
}
