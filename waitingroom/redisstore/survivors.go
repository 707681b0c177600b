package redisstore

import (
	"encoding/json"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/foyer-dev/foyer/waitingroom"
)

// settlingReply is join.lua's answer while the room settles after a loss.
const settlingReply = -1

// survivors encodes, for init.lua, what a seed restores beyond the line:
// overrides, forgotten places, the settling deadline of a room it creates, and
// sessions known from passes. One JSON argument keeps the script's positional
// arguments as they were.
func survivors(seed waitingroom.Recall) string {
	ext := struct {
		Ovr      string   `json:"ovr"`
		Ver      int64    `json:"ver"`
		Forgot   uint64   `json:"forgot"`
		Settle   int64    `json:"settle"`
		LostAt   int64    `json:"lostat"`
		MFrom    uint64   `json:"mfrom"`
		Whole    bool     `json:"whole"`
		Raise    bool     `json:"raise"`
		Skipped  uint64   `json:"skipped"`
		IdledOut uint64   `json:"idledout"`
		Returned uint64   `json:"returned"`
		Requeued uint64   `json:"requeued"`
		Sessions [][3]any `json:"sessions"`
		// The priority lanes' counters, from lane 1 on, and the round
		// robin's state (see lua/init.lua, restore_lanes).
		Lanes   [][3]uint64 `json:"lanes"`
		LCredit string      `json:"lcredit"`
		LSpec   string      `json:"lspec"`
		// The phase pre-queues (see lua/lib.lua, settle_phases).
		PQ string `json:"pq"`
		// When the last waitlist ended (µs; 0: not known), or the
		// waitlist going on: since (µs, 0: none), from, admitted, and
		// the units owed until wlowedtill (µs).
		WlEnded    int64  `json:"wlended"`
		WlSince    int64  `json:"wlsince"`
		WlFrom     uint64 `json:"wlfrom"`
		WlAdm      uint64 `json:"wladm"`
		WlOwed     uint64 `json:"wlowed"`
		WlOwedTill int64  `json:"wlowedtill"`
	}{PQ: formatPhaseRanges(seed.PhaseRanges), Lanes: [][3]uint64{}, Ovr: string(seed.Overrides), Ver: seed.OverridesVersion, Forgot: seed.Forgotten, Whole: seed.Whole, Raise: seed.RaiseOnly, Sessions: [][3]any{},
		Skipped: seed.Skipped, IdledOut: seed.IdledOut, Returned: seed.Returned, Requeued: seed.Requeued}
	if !seed.SettleUntil.IsZero() {
		ext.Settle = seed.SettleUntil.UnixMicro()
	}
	if !seed.WaitlistEnded.IsZero() {
		ext.WlEnded = seed.WaitlistEnded.UnixMicro()
	}
	if w := seed.Waitlist; w.On() {
		ext.WlSince, ext.WlFrom, ext.WlAdm, ext.WlOwed = w.Since.UnixMicro(), w.From, w.Admitted, w.Owed
		ext.WlOwedTill = seed.WaitlistOwedUntil.UnixMicro()
	}
	ext.MFrom = seed.MarginFrom
	if seed.MarginFrom == 0 {
		ext.MFrom = seed.Seq // no margin
	}
	if !seed.LostAt.IsZero() {
		ext.LostAt = seed.LostAt.UnixMicro()
	}
	for i, l := range seed.Lanes {
		if i > 0 {
			ext.Lanes = append(ext.Lanes, [3]uint64{l.Seq, l.Serving, l.Admitted})
		}
	}
	if len(seed.LaneCredit) > 0 {
		parts := make([]string, len(seed.LaneCredit))
		for i, c := range seed.LaneCredit {
			parts[i] = strconv.FormatInt(c, 10)
		}
		ext.LCredit, ext.LSpec = strings.Join(parts, ","), seed.LaneSpec
	}
	for _, hs := range seed.Sessions {
		ext.Sessions = append(ext.Sessions, [3]any{hs.Visitor, hs.Until.UnixMicro(), hs.Forget.UnixMicro()})
	}
	b, err := json.Marshal(ext)
	if err != nil {
		panic(err) // strings and numbers always encode
	}
	return string(b)
}

// parseSurvivors reads snapshot.lua's "forgotten:settle until:blank:lost
// at:margin from:margin to".
func parseSurvivors(s string, snap *waitingroom.Snapshot, now time.Time) error {
	f := strings.Split(s, ":")
	if len(f) != 6 {
		return fmt.Errorf("malformed survivors field %q", s)
	}
	forgot, err1 := strconv.ParseUint(f[0], 10, 64)
	settle, err2 := strconv.ParseInt(f[1], 10, 64)
	lost, err3 := strconv.ParseInt(f[3], 10, 64)
	mf, err4 := strconv.ParseUint(f[4], 10, 64)
	mt, err5 := strconv.ParseUint(f[5], 10, 64)
	if err1 != nil || err2 != nil || err3 != nil || err4 != nil || err5 != nil {
		return fmt.Errorf("malformed survivors field %q", s)
	}
	snap.Margin = [2]uint64{mf, mt}
	snap.Forgotten, snap.Blank = forgot, f[2] == "1"
	if settle > 0 {
		snap.SettleUntil = fromMicros(settle, now)
	}
	if lost > 0 {
		snap.LostAt = fromMicros(lost, now)
	}
	return nil
}
