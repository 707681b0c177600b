package redisstore

import (
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/foyer-dev/foyer/waitingroom"
)

// The phase pre-queues (waitingroom/phasequeue.go) are one meta field,
// "phase:start:count:closed:starts:draw,..." (starts in µs), which every
// script that hands out keys or moves serving brings to now first
// (settle_phases in lua/lib.lua).

// phaseQueueArg is the pre-queue open at the call's instant as the scripts
// take it: "<phase>,<opens>,<starts>,<draw>" (µs, draw 0/1), "" for none.
func phaseQueueArg(lim waitingroom.Limits) string {
	pq := lim.PhaseQueue
	if pq.Phase == "" {
		return ""
	}
	return fmt.Sprintf("%s,%d,%d,%d", pq.Phase, pq.Opens.UnixMicro(), pq.Starts.UnixMicro(), flag(pq.Draw))
}

func flag(b bool) int {
	if b {
		return 1
	}
	return 0
}

// formatPhaseRanges writes ranges as the meta field holds them.
func formatPhaseRanges(ranges []waitingroom.PhaseRange) string {
	parts := make([]string, len(ranges))
	for i, r := range ranges {
		parts[i] = fmt.Sprintf("%s:%d:%d:%d:%d:%d", r.Phase, r.Start, r.Count, flag(r.Closed), r.Starts.UnixMicro(), flag(r.Draw))
	}
	return strings.Join(parts, ",")
}

// parsePhaseRanges reads the meta field.
func parsePhaseRanges(s string) ([]waitingroom.PhaseRange, error) {
	return parseList(s, "phase pre-queue", 6, func(f []string) (waitingroom.PhaseRange, bool) {
		n, ok := parseUints([]string{f[1], f[2], f[3], f[5]})
		starts, err := strconv.ParseInt(f[4], 10, 64)
		return waitingroom.PhaseRange{
			Phase: f[0], Start: n[0], Count: n[1], Closed: n[2] == 1,
			Starts: time.UnixMicro(starts).UTC(), Draw: n[3] == 1,
		}, ok && err == nil
	})
}
