package gateway

import (
	"encoding/hex"
	"encoding/json"
	"html/template"
	"net/url"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/foyer-dev/foyer/internal/i18n"
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
		if page := fairnessPageIn(t, rep, "en"); !strings.Contains(page, want) {
			t.Errorf("serving %d: the page lacks %q", serving, want)
		}
	}
}

// fairnessSample is a report with every part of the page: a draw, rolling
// draws and admissions.
func fairnessSample() waitingroom.FairnessReport {
	at := time.Date(2026, 6, 1, 10, 0, 1, 250e6, time.UTC)
	size := uint64(1200)
	return waitingroom.FairnessReport{
		Room: "tour-2026", Reason: "sold_out", GeneratedAt: at.Add(time.Hour), QueueingMethod: waitingroom.Random,
		Algorithm: waitingroom.DrawAlgorithm, Commitment: strings.Repeat("ab", 32), Seed: strings.Repeat("cd", 32),
		CommittedAt: &at, DrawSize: &size, Complete: true,
		Epochs: []waitingroom.HistoryEntry{{Number: 1, Start: 1200, Count: 1, At: at.Add(time.Minute)}},
		Admissions: []waitingroom.HistoryEntry{
			{Kind: waitingroom.HistoryAdmit, Start: 0, Count: 1, At: at.Add(time.Second)},
			{Kind: waitingroom.HistoryAdmit, Start: 1, Count: 1200, At: at.Add(2 * time.Second)},
		},
		Counts: waitingroom.FairnessCounts{Issued: 1201, Serving: 1201, Admitted: 1201, Claimed: 1201},
	}
}

// fairnessPageIn renders the fairness page of rep in a built-in language,
// with the language menu.
func fairnessPageIn(t *testing.T, rep waitingroom.FairnessReport, code string) string {
	t.Helper()
	ls := allLanguages(t)
	l := ls.lookup(code)
	if l.Code != code {
		t.Fatalf("no built-in %s", code)
	}
	var b strings.Builder
	if err := renderFairness(&b, rep, l, ls.menu(&url.URL{Path: "/_waiting-room/fairness"}, l)); err != nil {
		t.Fatal(err)
	}
	return b.String()
}

// TestFairnessPageInTheFansLanguage: every word of the fairness page is the
// catalog's, in the page's language and direction: Arabic reads right to
// left in Arabic words and Arabic digits, German in German with its own
// grouping, English as before; no key is left unworded in any language, and
// the machine's values (seed, commitment, method) are shown as they are.
func TestFairnessPageInTheFansLanguage(t *testing.T) {
	rep := fairnessSample()
	en, err := builtinCatalogs()
	if err != nil {
		t.Fatal(err)
	}
	var englishWords []string
	for key, m := range en[i18n.Reference].Msgs {
		if strings.HasPrefix(key, "fairness.") && !m.Plural && len(m.Forms[0]) > 12 && !strings.Contains(m.Forms[0], "{") {
			englishWords = append(englishWords, m.Forms[0])
		}
	}
	for _, tc := range []struct {
		code, dir string
		want      []string
	}{
		{"ar", "rtl", []string{"تقرير العدالة: tour-2026", "نفدت التذاكر.", "الأماكن التي بلغها الطابور", "قرعة عشوائية", "كامل",
			"تغطي مرات الدخول كل الأماكن من ٠ إلى ١٬٢٠٠", "١٬٢٠٠ مفتاح ترتيب", "مكان واحد", "<time datetime=\"2026-06-01T10:00:01.25Z\">٢٠٢٦-٠٦-٠١ ١٠:٠٠:٠١.٢٥٠ UTC</time>"}},
		{"de", "ltr", []string{"Fairness-Bericht: tour-2026", "Der Verkauf ist ausverkauft.", "Vergebene Ordnungsschlüssel", "Auslosung",
			"vollständig", "die Einlässe decken jeden Platz von 0 bis 1.200 ab", "1.200 Ordnungsschlüssel", "1 Platz", "1.200 Plätze", "2026-06-01 10:00:01.250 UTC"}},
		{"en", "ltr", []string{"Fairness report: tour-2026", "The sale has sold out.", "Places the line reached", "random draw",
			">complete</span>: the admissions cover every place from 0 to 1,200", "1,200 order keys", "1 place<", "1,200 places",
			"2026-06-01 10:00:01.250 UTC", "Accept: application/json", "Order keys drawn at the start (the pre-queue&#39;s registrations)"}},
	} {
		page := fairnessPageIn(t, rep, tc.code)
		if want := `<html lang="` + tc.code + `" dir="` + tc.dir + `">`; !strings.Contains(page, want) {
			t.Errorf("%s: the page lacks %s", tc.code, want)
		}
		for _, w := range append(tc.want, rep.Seed, rep.Commitment, "(random)", `hreflang="de"`, `aria-current="true">`) {
			if !strings.Contains(page, w) {
				t.Errorf("%s: the page lacks %q", tc.code, w)
			}
		}
		if strings.Contains(page, "fairness.") {
			t.Errorf("%s: a key is left unworded:\n%s", tc.code, page)
		}
		if tc.code == "en" {
			continue
		}
		for _, w := range englishWords {
			if strings.Contains(page, template.HTMLEscapeString(w)) {
				t.Errorf("%s: the page has English %q", tc.code, w)
			}
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

// TestFairnessPageShowsPhaseDraws: a room whose only draws are its phases'
// shows each phase's draw (its keys, commitment, time of commitment and
// seed) and the way to check a place, not "no draw", in every language,
// every word from the catalog.
func TestFairnessPageShowsPhaseDraws(t *testing.T) {
	rep := phaseReport(time.Date(2026, 6, 1, 9, 0, 0, 0, time.UTC))
	pd := rep.PhaseDraws[0]
	page := fairnessPageIn(t, rep, "en")
	for _, w := range []string{"Draws of the phases&#39; pre-queues", "<td>general</td>", "3–7", pd.Commitment, pd.Seed,
		"2026-06-01 09:00:00.000 UTC", "foyer verify-draw"} {
		if !strings.Contains(page, w) {
			t.Errorf("the page lacks %q", w)
		}
	}
	if strings.Contains(page, "No draw") {
		t.Error("the page says there was no draw")
	}
	for _, l := range allLanguages(t).locales {
		if page := fairnessPageIn(t, rep, l.Code); strings.Contains(page, "fairness.") || !strings.Contains(page, pd.Seed) {
			t.Errorf("%s: a key left unworded, or the seed missing", l.Code)
		}
	}
}
