package redisstore

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/foyer-dev/foyer/waitingroom"
)

// ReportSupply implements waitingroom.Store: one script (lua/supply.lua).
func (s *Store) ReportSupply(ctx context.Context, room string, units uint64, now time.Time) (waitingroom.SupplySample, bool, error) {
	a, err := s.runList(ctx, "supply", supplyScript, room, units, now.UnixMicro(), s.ttlMillis(), waitingroom.MaxSupplyTail)
	if err != nil {
		return waitingroom.SupplySample{}, false, err
	}
	if len(a) != 2 {
		return waitingroom.SupplySample{}, false, fmt.Errorf("redisstore: supply %s: unexpected reply %v", room, a)
	}
	smp, err := parseSupplySample(str(a[0]))
	if err != nil {
		return waitingroom.SupplySample{}, false, fmt.Errorf("redisstore: supply %s: %w", room, err)
	}
	ok, err := toInt(a[1])
	return smp, ok == 1, err
}

// parseSupplyTail reads the snapshot's supply field: samples
// "n:units:at:claimed:active:waiting" joined by ','.
func parseSupplyTail(s string) ([]waitingroom.SupplySample, error) {
	if s == "" {
		return nil, nil
	}
	var out []waitingroom.SupplySample
	for part := range strings.SplitSeq(s, ",") {
		smp, err := parseSupplySample(part)
		if err != nil {
			return nil, err
		}
		out = append(out, smp)
	}
	return out, nil
}

func parseSupplySample(s string) (waitingroom.SupplySample, error) {
	n, err := supplyFields(s, 6)
	if err != nil {
		return waitingroom.SupplySample{}, err
	}
	return waitingroom.SupplySample{
		N: uint64(n[0]), Units: uint64(n[1]), At: time.UnixMicro(n[2]).UTC(),
		Claimed: uint64(n[3]), Active: uint64(n[4]), Waiting: uint64(n[5]),
	}, nil
}

// parseSupplyEntry reads a history entry "s:n:units:claimed:active:waiting:at".
func parseSupplyEntry(s string) (waitingroom.HistoryEntry, error) {
	n, err := supplyFields(strings.TrimPrefix(s, "s:"), 6)
	if err != nil {
		return waitingroom.HistoryEntry{}, err
	}
	at := time.UnixMicro(n[5]).UTC()
	return waitingroom.HistoryEntry{Kind: waitingroom.HistorySupply, At: at, Supply: &waitingroom.SupplySample{
		N: uint64(n[0]), Units: uint64(n[1]), At: at, Claimed: uint64(n[2]), Active: uint64(n[3]), Waiting: uint64(n[4]),
	}}, nil
}
