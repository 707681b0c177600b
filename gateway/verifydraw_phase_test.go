package gateway

import (
	"encoding/hex"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/foyer-dev/foyer/waitingroom"
)

// phaseReport is a first-come room's report whose phase "general" had its
// own pre-queue, drawn at its start: keys 0-2 first come, 3-7 the phase's
// draw (with the test vectors' S0 as its seed), 8-9 first come after it.
func phaseReport(committed time.Time) waitingroom.FairnessReport {
	seed := formsSeed()
	opens := time.Date(2026, 6, 1, 10, 30, 0, 0, time.UTC)
	start := opens.Add(30 * time.Minute)
	first, n := uint64(3), uint64(5)
	return waitingroom.FairnessReport{
		Room: "phased", Reason: "closed", GeneratedAt: start.Add(time.Hour), QueueingMethod: waitingroom.FIFO,
		Algorithm: waitingroom.DrawAlgorithm,
		PhaseDraws: []waitingroom.PhaseDraw{{
			Phase: "general", PrequeueStart: &opens, Start: start,
			Commitment: waitingroom.DrawCommitment(seed), CommittedAt: &committed,
			Seed: hex.EncodeToString(seed), FirstKey: &first, DrawSize: &n,
		}},
		Admissions: []waitingroom.HistoryEntry{
			{Kind: waitingroom.HistoryAdmit, Start: 0, Count: 3, At: opens.Add(-time.Minute)},
			{Kind: waitingroom.HistoryAdmit, Start: 3, Count: 7, At: start.Add(time.Second)},
		},
		Complete: true,
		Counts:   waitingroom.FairnessCounts{Issued: 10, Serving: 10, Admitted: 10, Claimed: 10},
	}
}

// TestVerifyDrawPhaseDraw: verify-draw places a key a phase's draw covered
// with the phase's own seed, checked against its commitment, warns when
// the report does not show that seed committed before the phase's
// pre-queue opened, says of a first-come key in a room whose only draws are
// its phases' that no draw covered it, and refuses a phase seed that does
// not match its commitment.
func TestVerifyDrawPhaseDraw(t *testing.T) {
	early := time.Date(2026, 6, 1, 9, 0, 0, 0, time.UTC)
	rep := phaseReport(early)
	c := rep.PhaseDraws[0].Commitment
	p := 3 + waitingroom.NewDraw(formsSeed(), 5).Place(2)
	placed := fmt.Sprintf("room phased: the seed matches the commitment %s\n", c) +
		fmt.Sprintf("draw_index 5 (the fan's order key) has place %d (0-based: %d people were ahead in line)\n", p, p) +
		"placed by phase general's draw of order keys 3-7, at its start 2026-06-01T11:00:00Z\n"
	admitted := "let in at 2026-06-01T11:00:01Z, with places 3-9 (the line reached them then; a place nobody had been seen at was passed over)\n"
	if out, err := verifyDraw(t, "--report", writeReport(t, rep), "--draw-index", "5"); err != nil || out != placed+admitted {
		t.Errorf("a key the phase's draw placed: %v\n%s\nwant:\n%s", err, out, placed+admitted)
	}
	fifo := "room phased: no draw covered draw_index 8 (the room draws only in its phases)\n" +
		"draw_index 8 (the fan's order key) has place 8 (0-based: 8 people were ahead in line)\n" +
		"placed first come, first served: no draw covered order key 8, so the place is the order key\n" + admitted
	if out, err := verifyDraw(t, "--report", writeReport(t, rep), "--draw-index", "8"); err != nil || out != fifo {
		t.Errorf("a first-come key after the phase's draw: %v\n%s\nwant:\n%s", err, out, fifo)
	}
	late := phaseReport(time.Date(2026, 6, 1, 10, 45, 0, 0, time.UTC))
	want := placed + "warning: phase general's report does not show its seed committed before its pre-queue opened\n" + admitted
	if out, err := verifyDraw(t, "--report", writeReport(t, late), "--draw-index", "5"); err != nil || out != want {
		t.Errorf("a seed committed after the pre-queue opened: %v\n%s\nwant:\n%s", err, out, want)
	}
	bad := phaseReport(early)
	bad.PhaseDraws[0].Seed = strings.Repeat("0", 64)
	if out, err := verifyDraw(t, "--report", writeReport(t, bad), "--draw-index", "5"); err == nil ||
		!strings.Contains(err.Error(), "phase general's draw: the seed does not match the commitment") {
		t.Errorf("a phase seed that does not match: %v\n%s", err, out)
	}
}
