package redisstore

import (
	"context"
	"encoding/json"
	"fmt"
	"strconv"
	"strings"

	"github.com/foyer-dev/foyer/waitingroom"
)

// AppendAudit implements waitingroom.Store: one script numbers and appends
// the entry (lua/auditappend.lua).
func (s *Store) AppendAudit(ctx context.Context, room string, e waitingroom.AuditEntry) (waitingroom.AuditEntry, error) {
	e.Seq = 0
	data, err := json.Marshal(e)
	if err != nil {
		return e, err
	}
	v, err := s.run(ctx, "audit", auditAppendScript, room, data, s.ttlMillis(), waitingroom.MaxAudit)
	if err != nil {
		return e, err
	}
	seq, err := toInt(v)
	if err != nil || seq <= 0 {
		return e, fmt.Errorf("redisstore: audit %s: unexpected reply %v", room, v)
	}
	e.Seq = uint64(seq)
	return e, nil
}

// Audit implements waitingroom.Store.
func (s *Store) Audit(ctx context.Context, room string, after uint64, limit int) ([]waitingroom.AuditEntry, error) {
	limit = min(limit, waitingroom.MaxAudit)
	if limit <= 0 {
		return nil, nil
	}
	a, err := s.runList(ctx, "audit", auditScript, room, after, limit)
	if err != nil {
		return nil, err
	}
	out := make([]waitingroom.AuditEntry, 0, len(a))
	for _, x := range a {
		seq, data, _ := strings.Cut(str(x), " ")
		var e waitingroom.AuditEntry
		n, err := strconv.ParseUint(seq, 10, 64)
		if err == nil {
			err = json.Unmarshal([]byte(data), &e)
		}
		if err != nil {
			return nil, fmt.Errorf("redisstore: audit %s: bad entry: %w", room, err)
		}
		e.Seq = n
		out = append(out, e)
	}
	return out, nil
}
