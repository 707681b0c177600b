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
	return runEntries(ctx, s, "audit", auditScript, room, parseAuditEntry, after, limit)
}

// parseAuditEntry reads "<seq> <entry as JSON>".
func parseAuditEntry(s string) (waitingroom.AuditEntry, error) {
	seq, data, _ := strings.Cut(s, " ")
	var e waitingroom.AuditEntry
	n, err := strconv.ParseUint(seq, 10, 64)
	if err == nil {
		err = json.Unmarshal([]byte(data), &e)
	}
	if err != nil {
		return waitingroom.AuditEntry{}, fmt.Errorf("bad entry: %w", err)
	}
	e.Seq = n
	return e, nil
}
