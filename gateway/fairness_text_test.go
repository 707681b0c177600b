package gateway

import (
	"encoding/json"
	"os"
	"path/filepath"
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
	path = writeReport(t, waitingroom.FairnessReport{Room: "walk-in", Seed: "zz", Commitment: "00"})
	if _, err := verifyDraw(t, "--report", path, "--draw-index", "0"); err == nil || !strings.Contains(err.Error(), "32 bytes of hex") {
		t.Errorf("verify-draw of a broken seed: %v", err)
	}
}
