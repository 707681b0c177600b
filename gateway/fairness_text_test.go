package gateway

import (
	"encoding/hex"
	"encoding/json"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/foyer-dev/foyer/waitingroom"
)

// writeReport saves a fairness report where verify-draw can read it.
func writeReport(t *testing.T, rep waitingroom.FairnessReport) string {
	t.Helper()
	data, err := json.Marshal(rep)
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), "report.json")
	if err := os.WriteFile(path, data, 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}

// TestVerifyDrawOfARoomWithoutADraw: a room that drew nobody publishes no
// seed, and verify-draw says so plainly rather than call the missing seed a
// malformed one.
func TestVerifyDrawOfARoomWithoutADraw(t *testing.T) {
	at := time.Date(2026, 6, 1, 10, 0, 0, 0, time.UTC)
	path := writeReport(t, waitingroom.FairnessReport{
		Room: "walk-in", Reason: "closed", QueueingMethod: waitingroom.FIFO, Complete: true,
		Epochs:     []waitingroom.HistoryEntry{},
		Admissions: []waitingroom.HistoryEntry{{Kind: waitingroom.HistoryAdmit, Start: 0, Count: 3, At: at}},
		Counts:     waitingroom.FairnessCounts{Issued: 3, Serving: 3, Admitted: 3},
	})
	out, err := verifyDraw(t, "--report", path, "--draw-index", "0")
	if err == nil || !strings.Contains(err.Error(), "room walk-in made no draw") || strings.Contains(err.Error(), "hex") {
		t.Errorf("verify-draw of a room without a draw: %v\n%s", err, out)
	}
	// A seed that is there but broken is still called broken.
	path = writeReport(t, waitingroom.FairnessReport{Room: "walk-in", Algorithm: waitingroom.DrawAlgorithm, Seed: "zz", Commitment: strings.Repeat("0", 64)})
	if _, err := verifyDraw(t, "--report", path, "--draw-index", "0"); err == nil || !strings.Contains(err.Error(), "64 lowercase hexadecimal digits (32 bytes)") {
		t.Errorf("verify-draw of a broken seed: %v", err)
	}
}

// TestVerifyDrawCountsWhoWasAhead: the count of those ahead agrees with its
// noun: nobody, 1 person, 2 people.
func TestVerifyDrawCountsWhoWasAhead(t *testing.T) {
	seed := make([]byte, waitingroom.DrawSeedSize)
	for i := range seed {
		seed[i] = byte(i)
	}
	const size = 10
	size64 := uint64(size)
	path := writeReport(t, waitingroom.FairnessReport{
		Room: "draw", Reason: "sold_out", Algorithm: waitingroom.DrawAlgorithm,
		Commitment: waitingroom.DrawCommitment(seed), Seed: hex.EncodeToString(seed), DrawSize: &size64,
		Epochs: []waitingroom.HistoryEntry{}, Admissions: []waitingroom.HistoryEntry{},
	})
	draw := waitingroom.NewDraw(seed, size)
	want := map[uint64]string{0: "(0-based: nobody was ahead", 1: "(0-based: 1 person was ahead", 2: "(0-based: 2 people were ahead"}
	for index := range uint64(size) {
		place := draw.Place(index)
		phrase, ok := want[place]
		if !ok {
			continue
		}
		out, err := verifyDraw(t, "--report", path, "--draw-index", strconv.FormatUint(index, 10))
		if err != nil || !strings.Contains(out, phrase) {
			t.Errorf("draw_index %d (place %d): %v\n%s\nwant %q", index, place, err, out, phrase)
		}
		delete(want, place)
	}
	if len(want) > 0 {
		t.Errorf("places never met: %v", want)
	}
}

// TestFairnessPageNamesThePlacesLetIn: Serving is the first place not yet
// reached, so a complete history covers the places below it, not up to it.
func TestFairnessPageNamesThePlacesLetIn(t *testing.T) {
	for serving, want := range map[uint64]string{
		0: "the admissions cover no place (nobody was let in)",
		1: "the admissions cover place 0<",
		9: "the admissions cover every place from 0 to 8<",
	} {
		rep := waitingroom.FairnessReport{Room: "r", Reason: "closed", Complete: true, Counts: waitingroom.FairnessCounts{Serving: serving}}
		var b strings.Builder
		if err := fairnessPage.Execute(&b, rep); err != nil {
			t.Fatal(err)
		}
		if !strings.Contains(b.String(), want) {
			t.Errorf("serving %d: the page lacks %q", serving, want)
		}
	}
}

func TestCountAgreesWithItsNoun(t *testing.T) {
	for _, tc := range []struct {
		n    uint64
		want string
	}{{0, "0 people"}, {1, "1 person"}, {2, "2 people"}, {21, "21 people"}} {
		if got := count(tc.n, "person", "people"); got != tc.want {
			t.Errorf("count(%d) = %q, want %q", tc.n, got, tc.want)
		}
	}
}
