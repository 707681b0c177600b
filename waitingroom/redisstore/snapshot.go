package redisstore

import (
	"context"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/foyer-dev/foyer/waitingroom"
)

// Snapshot implements waitingroom.Store. It is one round trip.
func (s *Store) Snapshot(ctx context.Context, room string, now time.Time, revokedAfter int64) (waitingroom.Snapshot, error) {
	v, err := s.run(ctx, "snapshot", snapshotScript, room, now.UnixMicro(), revokedAfter)
	if err != nil {
		return waitingroom.Snapshot{}, err
	}
	snap, err := parseSnapshot(v, now)
	if err != nil {
		return waitingroom.Snapshot{}, fmt.Errorf("redisstore: snapshot %s: %w", room, err)
	}
	return snap, nil
}

// parseSnapshot reads the reply of snapshot.lua.
func parseSnapshot(v any, now time.Time) (waitingroom.Snapshot, error) {
	const fixed = 23 // the numbers, the incarnation, the epochs, what survives a loss, liveness, the pace, the supply, the lanes, the waitlist, the phase pre-queues
	a, ok := v.([]any)
	if !ok || len(a) < fixed+1 {
		return waitingroom.Snapshot{}, fmt.Errorf("unexpected reply %T", v)
	}
	var u [12]uint64
	for i := range u {
		if i == 6 {
			continue // the credit, a float
		}
		n, err := toInt(a[i])
		if err != nil {
			return waitingroom.Snapshot{}, fmt.Errorf("field %d: %w", i, err)
		}
		u[i] = uint64(n)
	}
	epochs, err := parseEpochs(str(a[13]))
	if err != nil {
		return waitingroom.Snapshot{}, err
	}
	credit, err := strconv.ParseFloat(str(a[6]), 64)
	if err != nil {
		return waitingroom.Snapshot{}, fmt.Errorf("credit: %w", err)
	}
	snap := waitingroom.Snapshot{
		Counters: waitingroom.Counters{
			Seq: u[0], Serving: u[1], Admitted: u[2], Claimed: u[3], Abandoned: u[4],
		},
		Pending:     int(u[5]),
		Credit:      credit,
		DrawClosed:  u[7] == 1,
		DrawSize:    u[8],
		Version:     int64(u[9]),
		Active:      int(u[10]),
		Returning:   int(u[11]),
		Incarnation: str(a[12]),
		Epochs:      epochs,
	}
	if err := parseSurvivors(str(a[14]), &snap, now); err != nil {
		return waitingroom.Snapshot{}, err
	}
	if err := parseLiveness(str(a[15]), str(a[16]), str(a[17]), &snap); err != nil {
		return waitingroom.Snapshot{}, err
	}
	if snap.Pace, err = parsePace(str(a[18])); err != nil {
		return waitingroom.Snapshot{}, err
	}
	if snap.Supply, err = parseSupplyTail(str(a[19])); err != nil {
		return waitingroom.Snapshot{}, err
	}
	if err := parseLanes(str(a[20]), &snap); err != nil {
		return waitingroom.Snapshot{}, err
	}
	if snap.Waitlist, err = parseWaitlist(str(a[21])); err != nil {
		return waitingroom.Snapshot{}, err
	}
	if snap.PhaseRanges, err = parsePhaseRanges(str(a[22])); err != nil {
		return waitingroom.Snapshot{}, err
	}
	nb, err := toInt(a[fixed])
	if err != nil || nb < 0 || int(nb) > len(a)-fixed-1 {
		return waitingroom.Snapshot{}, fmt.Errorf("batch count %v", a[fixed])
	}
	rest := a[fixed+1:]
	for _, m := range rest[:nb] {
		b, err := parseBatch(str(m), now)
		if err != nil {
			return waitingroom.Snapshot{}, err
		}
		snap.Batches = append(snap.Batches, b)
	}
	for _, m := range rest[nb:] {
		rv, err := parseRevocation(str(m), now)
		if err != nil {
			return waitingroom.Snapshot{}, err
		}
		snap.Revocations = append(snap.Revocations, rv)
	}
	return snap, nil
}

// parseEpochs reads the epochs field, "start:size:number,...".
func parseEpochs(s string) ([]waitingroom.Epoch, error) {
	return parseList(s, "epoch", 3, func(f []string) (waitingroom.Epoch, bool) {
		n, ok := parseUints(f)
		return waitingroom.Epoch{Start: n[0], Size: n[1], Number: n[2]}, ok
	})
}

// formatEpochs writes epochs as the epochs field holds them.
func formatEpochs(epochs []waitingroom.Epoch) string {
	parts := make([]string, len(epochs))
	for i, e := range epochs {
		parts[i] = fmt.Sprintf("%d:%d:%d", e.Start, e.Size, e.Number)
	}
	return strings.Join(parts, ",")
}

// parseBatch reads a batch member, "start:count:claimed:at", then ":s<span>"
// when it spans skipped ghosts, then ":r" for a restored batch.
func parseBatch(m string, now time.Time) (waitingroom.Batch, error) {
	body, restored := strings.CutSuffix(m, ":r")
	f := strings.Split(body, ":")
	var span uint64
	if len(f) == 5 && strings.HasPrefix(f[4], "s") {
		var err error
		if span, err = strconv.ParseUint(f[4][1:], 10, 64); err != nil {
			return waitingroom.Batch{}, fmt.Errorf("malformed batch %q", m)
		}
		f = f[:4]
	}
	if len(f) != 4 {
		return waitingroom.Batch{}, fmt.Errorf("malformed batch %q", m)
	}
	var n [4]int64
	for i := range n {
		var err error
		if n[i], err = strconv.ParseInt(f[i], 10, 64); err != nil || (i < 3 && n[i] < 0) {
			return waitingroom.Batch{}, fmt.Errorf("malformed batch %q", m)
		}
	}
	return waitingroom.Batch{Start: uint64(n[0]), Count: uint64(n[1]), Claimed: uint64(n[2]), Span: span, At: fromMicros(n[3], now), Restored: restored}, nil
}

// batchMember writes a batch for init.lua, which marks it restored.
func batchMember(b waitingroom.Batch) string {
	m := fmt.Sprintf("%d:%d:%d:%d", b.Start, b.Count, b.Claimed, b.At.UnixMicro())
	if b.Span != 0 && b.Span != b.Count {
		m += fmt.Sprintf(":s%d", b.Span)
	}
	return m
}

// parseRevocation reads a revocation member, "cursor:expiry:pass id".
func parseRevocation(m string, now time.Time) (waitingroom.Revocation, error) {
	cur, rest, ok1 := strings.Cut(m, ":")
	exp, id, ok2 := strings.Cut(rest, ":")
	c, err1 := strconv.ParseInt(cur, 10, 64)
	e, err2 := strconv.ParseInt(exp, 10, 64)
	if !ok1 || !ok2 || err1 != nil || err2 != nil {
		return waitingroom.Revocation{}, fmt.Errorf("malformed revocation %q", m)
	}
	rv := waitingroom.Revocation{Cursor: c, PassID: id, ExpiresAt: fromMicros(e, now)}
	if idle, ok := strings.CutPrefix(id, "~"); ok {
		// A session that idled out: "~<idled at>:<visitor>".
		at, visitor, ok := strings.Cut(idle, ":")
		t, err := strconv.ParseInt(at, 10, 64)
		if !ok || err != nil || visitor == "" {
			return waitingroom.Revocation{}, fmt.Errorf("malformed idle-out %q", m)
		}
		rv.PassID, rv.Visitor, rv.IdledAt = "", visitor, fromMicros(t, now)
	}
	return rv, nil
}

// parseLiveness reads snapshot.lua's "live from:young:skipped:idled
// out:returned:requeued", the live counts (16 bits each, big-endian) and the
// live head.
func parseLiveness(nums, counts, head string, snap *waitingroom.Snapshot) error {
	f := strings.Split(nums, ":")
	if len(f) != 6 || len(counts)%2 != 0 {
		return fmt.Errorf("malformed liveness %q (%d count bytes)", nums, len(counts))
	}
	n, ok := parseUints(f)
	if !ok {
		return fmt.Errorf("malformed liveness %q", nums)
	}
	snap.Live = waitingroom.Liveness{From: n[0], Young: n[1]}
	snap.Skipped, snap.IdledOut, snap.Returned, snap.Requeued = n[2], n[3], n[4], n[5]
	for i := 0; i < len(counts); i += 2 {
		snap.Live.Counts = append(snap.Live.Counts, uint16(counts[i])<<8|uint16(counts[i+1]))
	}
	if head != "" {
		snap.Live.Head = []byte(head)
	}
	return nil
}

// parsePace reads the pace field, "places:seconds:moves:still".
func parsePace(s string) (waitingroom.Pace, error) {
	f := strings.Split(s, ":")
	if len(f) != 4 {
		return waitingroom.Pace{}, fmt.Errorf("malformed pace %q", s)
	}
	places, err1 := strconv.ParseFloat(f[0], 64)
	secs, err2 := strconv.ParseFloat(f[1], 64)
	moves, err3 := strconv.ParseFloat(f[2], 64)
	still, err4 := strconv.ParseInt(f[3], 10, 64)
	if err1 != nil || err2 != nil || err3 != nil || err4 != nil {
		return waitingroom.Pace{}, fmt.Errorf("malformed pace %q", s)
	}
	return waitingroom.Pace{Places: places, Seconds: secs, Moves: moves, Still: still}, nil
}
