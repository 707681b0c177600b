package gateway

import (
	"encoding/hex"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/foyer-dev/foyer/waitingroom"
)

// formsSeed is the test vectors' S0: the bytes 0x00 to 0x1f.
func formsSeed() []byte {
	seed := make([]byte, waitingroom.DrawSeedSize)
	for i := range seed {
		seed[i] = byte(i)
	}
	return seed
}

// formsReport is a random room's report with every kind of order key: 0-5
// placed by the pre-queue's draw, 6-8 by rolling draw epoch 1, 9 let in on
// the spot (first come), 10-11 still waiting for a draw when the room sold
// out, and none handed out from 12 on.
func formsReport() waitingroom.FairnessReport {
	seed := formsSeed()
	at := time.Date(2026, 6, 1, 10, 1, 0, 0, time.UTC)
	six := uint64(6)
	return waitingroom.FairnessReport{
		Room: "forms", Reason: "sold_out", GeneratedAt: at.Add(time.Minute), QueueingMethod: waitingroom.Random,
		Algorithm: waitingroom.DrawAlgorithm, Commitment: waitingroom.DrawCommitment(seed), CommittedAt: &at,
		Seed: hex.EncodeToString(seed), DrawSize: &six,
		Epochs: []waitingroom.HistoryEntry{{Kind: waitingroom.HistoryDraw, Start: 6, Count: 3, Number: 1, At: at.Add(10 * time.Second)}},
		Admissions: []waitingroom.HistoryEntry{
			{Kind: waitingroom.HistoryAdmit, Start: 0, Count: 6, At: at},
			{Kind: waitingroom.HistoryAdmit, Start: 6, Count: 3, At: at.Add(10 * time.Second)},
			{Kind: waitingroom.HistoryAdmit, Start: 9, Count: 1, At: at.Add(20 * time.Second)},
		},
		Complete: true,
		Counts:   waitingroom.FairnessCounts{Issued: 12, Serving: 10, Admitted: 10, Claimed: 10},
	}
}

const formsCommitment = "room forms: the seed matches the commitment 630dcd2966c4336691125448bbb25b4ff412a49c732db2c8abc1b8581bd710dd\n"

// TestVerifyDrawTellsEveryKeyApart: verify-draw tells a key a draw placed
// from one placed first come (its place is the key, and it says when the
// line reached it), from one still waiting for a rolling draw when the sale
// ended (no place; not an error), from one the room never handed out (an
// error); and an incomplete report gets its note under every answer, a
// place the line reached with no admission left being called lost rather
// than never reached.
func TestVerifyDrawTellsEveryKeyApart(t *testing.T) {
	rep := formsReport()
	seed := formsSeed()
	pre := waitingroom.NewDraw(seed, 6).Place(4)
	ep := 6 + waitingroom.NewDraw(waitingroom.EpochSeed(seed, 1), 3).Place(1)
	path := writeReport(t, rep)
	for _, tc := range []struct {
		index string
		want  string
	}{
		{"4", formsCommitment + fmt.Sprintf("draw_index 4 (the fan's order key) has place %d (0-based: %s in line)\n", pre, aheadOf(pre)) +
			"placed by the pre-queue's draw of order keys 0-5\n" +
			"let in at 2026-06-01T10:01:00Z, with places 0-5 (the line reached them then; a place nobody had been seen at was passed over)\n"},
		{"7", formsCommitment + fmt.Sprintf("draw_index 7 (the fan's order key) has place %d (0-based: %d people were ahead in line)\n", ep, ep) +
			"placed by rolling draw epoch 1 of order keys 6-8\n" +
			"let in at 2026-06-01T10:01:10Z, with places 6-8 (the line reached them then; a place nobody had been seen at was passed over)\n"},
		{"9", formsCommitment + "draw_index 9 (the fan's order key) has place 9 (0-based: 9 people were ahead in line)\n" +
			"placed first come, first served: no draw covered order key 9, so the place is the order key\n" +
			"let in at 2026-06-01T10:01:20Z, with places 9-9 (the line reached them then; a place nobody had been seen at was passed over)\n"},
		{"11", formsCommitment + "draw_index 11 (the fan's order key) has no place: it was waiting for the next rolling draw when the sale ended, and the line never reached it\n"},
	} {
		out, err := verifyDraw(t, "--report", path, "--draw-index", tc.index)
		if err != nil || out != tc.want {
			t.Errorf("draw_index %s: %v\n%s\nwant:\n%s", tc.index, err, out, tc.want)
		}
	}
	if out, err := verifyDraw(t, "--report", path, "--draw-index", "12"); err == nil ||
		err.Error() != "draw_index 12 was never handed out: the room handed out the order keys 0 to 11" {
		t.Errorf("draw_index 12, never handed out: %v\n%s", err, out)
	}

	// The same room as first come, first served at the end: a key no draw
	// covered is first come whether or not the line reached it.
	fifo := rep
	fifo.QueueingMethod = waitingroom.FIFO
	want := formsCommitment + "draw_index 11 (the fan's order key) has place 11 (0-based: 11 people were ahead in line)\n" +
		"placed first come, first served: no draw covered order key 11, so the place is the order key\n" +
		"the line never reached that place: the sale ended first\n"
	if out, err := verifyDraw(t, "--report", writeReport(t, fifo), "--draw-index", "11"); err != nil || out != want {
		t.Errorf("draw_index 11 of a fifo room: %v\n%s\nwant:\n%s", err, out, want)
	}

	// The history before a loss is gone: the pre-queue's places were
	// reached, but no admission is left to say when.
	lost := rep
	lost.Complete = false
	lost.Admissions = rep.Admissions[1:]
	const note = "note: the report's history is incomplete (the room's store lost part of it)\n"
	lostPath := writeReport(t, lost)
	for index, want := range map[string]string{
		"4": formsCommitment + fmt.Sprintf("draw_index 4 (the fan's order key) has place %d (0-based: %s in line)\n", pre, aheadOf(pre)) +
			"placed by the pre-queue's draw of order keys 0-5\n" +
			"the line reached that place, but the report no longer has the admission that did\n" + note,
		"9": formsCommitment + "draw_index 9 (the fan's order key) has place 9 (0-based: 9 people were ahead in line)\n" +
			"placed first come, first served: no draw covered order key 9, so the place is the order key\n" +
			"let in at 2026-06-01T10:01:20Z, with places 9-9 (the line reached them then; a place nobody had been seen at was passed over)\n" + note,
		"10": formsCommitment + "draw_index 10 (the fan's order key) has no place: it was waiting for the next rolling draw when the sale ended, and the line never reached it\n" + note,
	} {
		if out, err := verifyDraw(t, "--report", lostPath, "--draw-index", index); err != nil || out != want {
			t.Errorf("incomplete report, draw_index %s: %v\n%s\nwant:\n%s", index, err, out, want)
		}
	}
}

// TestVerifyDrawRefusesWhatItCannotCheck: an algorithm other than
// feistel-hmac-sha256-v1 (or none) is refused, as is a seed or a
// commitment that is not 64 lowercase hexadecimal digits, whichever it is.
func TestVerifyDrawRefusesWhatItCannotCheck(t *testing.T) {
	for name, c := range map[string]struct {
		change func(*waitingroom.FairnessReport)
		err    string
	}{
		"another algorithm": {func(r *waitingroom.FairnessReport) { r.Algorithm = "other" }, `names the algorithm "other"`},
		"no algorithm":      {func(r *waitingroom.FairnessReport) { r.Algorithm = "" }, `names the algorithm ""`},
		"an uppercase seed": {func(r *waitingroom.FairnessReport) { r.Seed = strings.ToUpper(r.Seed) }, "the seed is not 64 lowercase hexadecimal digits"},
		"an uppercase commitment": {func(r *waitingroom.FairnessReport) { r.Commitment = strings.ToUpper(r.Commitment) },
			"the commitment is not 64 lowercase hexadecimal digits"},
		"a short seed":  {func(r *waitingroom.FairnessReport) { r.Seed = r.Seed[:62] }, "the seed is not 64 lowercase hexadecimal digits"},
		"another seed":  {func(r *waitingroom.FairnessReport) { r.Seed = "1" + r.Seed[1:] }, "the seed does not match the commitment"},
		"no seed":       {func(r *waitingroom.FairnessReport) { r.Seed = "" }, "the seed is not 64 lowercase hexadecimal digits"},
		"no commitment": {func(r *waitingroom.FairnessReport) { r.Commitment = "" }, "the commitment is not 64 lowercase hexadecimal digits"},
	} {
		rep := formsReport()
		c.change(&rep)
		out, err := verifyDraw(t, "--report", writeReport(t, rep), "--draw-index", "4")
		if err == nil || !strings.Contains(err.Error(), c.err) {
			t.Errorf("%s: %v\n%s\nwant an error with %q", name, err, out, c.err)
		}
	}
}

// TestVerifyDrawOfTheDrawEndpoint: given the draw endpoint's answer, which
// lists only the latest 64 rolling draws and no admission, verify-draw
// places a key that a listed draw covered and says the rest is the report's
// to tell; it refuses a key no listed draw covers (an older epoch, a
// first-come place or a key still waiting: the answer cannot tell them
// apart), and an answer without the seed. It no longer takes the missing
// admissions for a line that never reached the place.
func TestVerifyDrawOfTheDrawEndpoint(t *testing.T) {
	seed := formsSeed()
	info := waitingroom.DrawInfo{Room: "forms", Enabled: true, Algorithm: waitingroom.DrawAlgorithm,
		Commitment: waitingroom.DrawCommitment(seed), Seed: hex.EncodeToString(seed)}
	// Epochs 8 to 71 of 3 keys each, the latest 64: epochs 1 to 7 covered
	// the keys 0 to 20 and are no longer listed.
	for e := uint64(8); e <= 71; e++ {
		info.Epochs = append(info.Epochs, waitingroom.DrawEpoch{Epoch: e, Start: 3 * (e - 1), Count: 3, Number: e, Size: 3})
	}
	write := func(info waitingroom.DrawInfo) string {
		data, err := json.Marshal(info)
		if err != nil {
			t.Fatal(err)
		}
		path := filepath.Join(t.TempDir(), "draw.json")
		if err := os.WriteFile(path, data, 0o600); err != nil {
			t.Fatal(err)
		}
		return path
	}
	path := write(info)
	place := 30 + waitingroom.NewDraw(waitingroom.EpochSeed(seed, 11), 3).Place(1)
	want := formsCommitment + fmt.Sprintf("draw_index 31 (the fan's order key) has place %d (0-based: %d people were ahead in line)\n", place, place) +
		"placed by rolling draw epoch 11 of order keys 30-32\n" +
		"note: this is the draw endpoint's answer, not the fairness report: it lists no admissions, so whether and when the line reached that place is the report's to tell\n"
	if out, err := verifyDraw(t, "--report", path, "--draw-index", "31"); err != nil || out != want {
		t.Errorf("draw_index 31 from the draw endpoint: %v\n%s\nwant:\n%s", err, out, want)
	}
	for _, index := range []string{"4", "213", "500"} { // epoch 2, then past the last epoch
		if out, err := verifyDraw(t, "--report", path, "--draw-index", index); err == nil || !strings.Contains(err.Error(), "no draw the draw endpoint lists covers that draw_index") {
			t.Errorf("draw_index %s, which no listed draw covers: %v\n%s", index, err, out)
		}
	}
	info.Seed = ""
	if out, err := verifyDraw(t, "--report", write(info), "--draw-index", "31"); err == nil || !strings.Contains(err.Error(), "does not show the seed yet") {
		t.Errorf("a draw endpoint without the seed: %v\n%s", err, out)
	}
	if out, err := verifyDraw(t, "--report", write(waitingroom.DrawInfo{Room: "walk-in"}), "--draw-index", "0"); err == nil || !strings.Contains(err.Error(), "made no draw") {
		t.Errorf("a draw endpoint of a room that draws nobody: %v\n%s", err, out)
	}
}
