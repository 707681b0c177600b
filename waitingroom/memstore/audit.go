package memstore

import (
	"context"

	"github.com/foyer-dev/foyer/waitingroom"
)

// AppendAudit implements waitingroom.Store.
func (s *Store) AppendAudit(_ context.Context, name string, e waitingroom.AuditEntry) (waitingroom.AuditEntry, error) {
	r, err := s.lockRoom(name)
	if err != nil {
		return e, err
	}
	defer r.mu.Unlock()
	e.Seq = 1
	if k := len(r.audit); k > 0 {
		e.Seq = r.audit[k-1].Seq + 1
	}
	r.audit = append(r.audit, e)
	if over := len(r.audit) - waitingroom.MaxAudit; over > 0 {
		r.audit = append(r.audit[:0:0], r.audit[over:]...)
	}
	return e, nil
}

// Audit implements waitingroom.Store.
func (s *Store) Audit(_ context.Context, name string, after uint64, limit int) ([]waitingroom.AuditEntry, error) {
	r, err := s.lockRoom(name)
	if err != nil {
		return nil, err
	}
	defer r.mu.Unlock()
	limit = min(limit, waitingroom.MaxAudit)
	if limit <= 0 || len(r.audit) == 0 {
		return nil, nil
	}
	// Entries are numbered without gaps, so the first one after is found
	// by subtraction.
	from := 0
	if first := r.audit[0].Seq; after >= first {
		from = int(min(after-first+1, uint64(len(r.audit))))
	}
	end := min(len(r.audit), from+limit)
	return append([]waitingroom.AuditEntry(nil), r.audit[from:end]...), nil
}
