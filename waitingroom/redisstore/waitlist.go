package redisstore

import (
	"fmt"
	"strings"
	"time"

	"github.com/foyer-dev/foyer/waitingroom"
)

// The waitlist's accounting is done in lua/advance.lua and lua/supply.lua
// (see the waitlist functions of lua/lib.lua); these read what they write.

// parseWaitlist reads the snapshot's waitlist field: "" when the line is no
// waitlist (and never was, or the store forgot), "since:from:admitted:owed"
// while it is one, and "ended:<µs>" once it stopped being one.
func parseWaitlist(s string) (waitingroom.WaitlistState, error) {
	if s == "" {
		return waitingroom.WaitlistState{}, nil
	}
	if at, ok := strings.CutPrefix(s, "ended:"); ok {
		n, err := supplyFields(at, 1)
		if err != nil {
			return waitingroom.WaitlistState{}, fmt.Errorf("waitlist %q: %w", s, err)
		}
		return waitingroom.WaitlistState{Ended: time.UnixMicro(n[0]).UTC()}, nil
	}
	n, err := supplyFields(s, 4)
	if err != nil {
		return waitingroom.WaitlistState{}, fmt.Errorf("waitlist %q: %w", s, err)
	}
	return waitingroom.WaitlistState{
		Since: time.UnixMicro(n[0]).UTC(), From: uint64(n[1]), Admitted: uint64(n[2]), Owed: uint64(n[3]),
	}, nil
}

// parseWaitlistEntry reads the waitlist's history entries: "ws:from:at",
// "we:serving:admitted:at" and "w:start:count:fans:units:supply:owed:sample:at".
func parseWaitlistEntry(s string) (waitingroom.HistoryEntry, error) {
	kind, rest, _ := strings.Cut(s, ":")
	var e waitingroom.HistoryEntry
	switch kind {
	case "ws":
		n, err := supplyFields(rest, 2)
		if err != nil {
			return e, err
		}
		e = waitingroom.HistoryEntry{Kind: waitingroom.HistoryWaitlistStart, Start: uint64(n[0]), At: time.UnixMicro(n[1]).UTC()}
	case "we":
		n, err := supplyFields(rest, 3)
		if err != nil {
			return e, err
		}
		e = waitingroom.HistoryEntry{Kind: waitingroom.HistoryWaitlistEnd, Start: uint64(n[0]), Count: uint64(n[1]), At: time.UnixMicro(n[2]).UTC()}
	case "w":
		n, err := supplyFields(rest, 8)
		if err != nil {
			return e, err
		}
		e = waitingroom.HistoryEntry{
			Kind: waitingroom.HistoryWaitlist, Start: uint64(n[0]), Count: uint64(n[1]), Number: uint64(n[6]),
			At: time.UnixMicro(n[7]).UTC(),
			Waitlist: &waitingroom.WaitlistStep{
				Fans: uint64(n[2]), Units: uint64(n[3]), Supply: uint64(n[4]), Owed: uint64(n[5]),
			},
		}
	default:
		return e, fmt.Errorf("bad entry %q", s)
	}
	return e, nil
}
