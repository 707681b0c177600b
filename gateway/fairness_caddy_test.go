package gateway

import (
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/foyer-dev/foyer/waitingroom"
)

// TestCaddyFairnessReport runs a sale with a pre-queue draw through a real
// Caddy: the report is refused while the sale runs, published once it sells
// out (JSON, and a page for browsers), and `foyer verify-draw` recomputes from
// it, for each fan, the admission in which the room let them in. One
// registrant never comes back: let in just before the sell-out, their place
// is counted as unclaimed, so the counts account for every place let in. The
// draw endpoint names the draw's size draw_size, as the report does.
func TestCaddyFairnessReport(t *testing.T) {
	clock := useTestClock(t)
	start := clock.Now().Add(time.Minute).UTC().Format(time.RFC3339)
	newCaddy(t, caddyConfig(t.TempDir(), fmt.Sprintf(`
	http://localhost:9080 {
		waiting_room {
			room fair-draw
			total_active_users 100
			new_users_per_minute 300
			event_start %s
			shuffle_at_event_start
		}
		respond "origin"
	}`, start)))
	report := base + "/_waiting-room/fairness"

	type registrant struct {
		f        *fan
		index    uint64
		admitted time.Time
	}
	var fans []*registrant
	for i := range 13 {
		f := newFan(t)
		st := f.status(base)
		if st.State != waitingroom.StatePrequeue || st.DrawIndex == nil || *st.DrawIndex != uint64(i) {
			t.Fatalf("registrant %d: %+v, want the pre-queue with draw_index %d", i, st, i)
		}
		fans = append(fans, &registrant{f: f, index: *st.DrawIndex})
	}
	// The last registrant never comes back once the draw is made.
	absent := fans[len(fans)-1]
	fans = fans[:len(fans)-1]
	if resp, body := newFan(t).get(report); resp.StatusCode != http.StatusNotFound || !strings.Contains(body, `"not_published"`) {
		t.Fatalf("report while the sale runs: %d %s, want 404 not_published", resp.StatusCode, body)
	}
	// A fan who follows a link to it meanwhile reads why, in their language,
	// as a page; a program gets the same code with the words in its language.
	if resp, body := newFan(t).get(report, "Accept", "text/html", "Accept-Language", "de-CH, fr;q=0.8"); resp.StatusCode != http.StatusNotFound ||
		!strings.HasPrefix(resp.Header.Get("Content-Type"), "text/html") || !strings.Contains(body, `lang="de"`) ||
		!strings.Contains(body, "veröffentlicht, sobald") {
		t.Fatalf("the report's page while the sale runs, in German: %d %s %s", resp.StatusCode, resp.Header.Get("Content-Type"), body)
	}
	if resp, body := newFan(t).get(report, "Accept-Language", "ar"); resp.StatusCode != http.StatusNotFound ||
		!strings.Contains(body, `"not_published"`) || resp.Header.Get("Content-Language") != "ar" {
		t.Fatalf("the report's JSON while the sale runs, in Arabic: %d %q %s", resp.StatusCode, resp.Header.Get("Content-Language"), body)
	}

	clock.step(t, 60) // the sale starts: the draw is made; five a second go in
	for sec := 0; sec < 5; sec++ {
		for _, r := range fans {
			if r.admitted.IsZero() && r.f.status(base).State == waitingroom.StateAdmitted {
				r.admitted = clock.Now()
			}
		}
		clock.step(t, 1)
	}
	if code, body := adminCall(t, http.MethodPost, "/waiting-room/fair-draw/sold-out", ""); code != http.StatusOK {
		t.Fatalf("sold-out: %d %s", code, body)
	}
	clock.step(t, 1)

	resp, body := newFan(t).get(report, "Accept", "application/json")
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("report after the sell-out: %d %s", resp.StatusCode, body)
	}
	var rep waitingroom.FairnessReport
	if err := json.Unmarshal([]byte(body), &rep); err != nil {
		t.Fatal(err)
	}
	if rep.Reason != "sold_out" || !rep.Complete || rep.DrawSize == nil || *rep.DrawSize != 13 || rep.Seed == "" {
		t.Fatalf("report %s: want sold out, complete, a draw of 13 with its seed", body)
	}
	// Every place let in was claimed, lapsed, or is unclaimed: the absent
	// registrant's, let in before the sell-out, whose grace still runs.
	c := rep.Counts
	if c.Serving != 13 || c.Serving != c.Admitted+c.Skipped || c.Admitted != c.Claimed-c.Returned+c.Lapsed+c.Unclaimed || c.Unclaimed != 1 {
		t.Fatalf("counts %+v: want 13 places reached, each let in and accounted for, the absent registrant's unclaimed", c)
	}
	if out, err := verifyDraw(t, "--report", report, "--draw-index", fmt.Sprint(absent.index)); err != nil || !strings.Contains(out, "let in at ") {
		t.Fatalf("verify-draw for the absent registrant: %v\n%s", err, out)
	}
	var draw struct {
		DrawSize *uint64 `json:"draw_size"`
		Size     *uint64 `json:"size"`
		Seed     string  `json:"seed"`
	}
	if resp, body := newFan(t).get(base + "/_waiting-room/draw"); resp.StatusCode != http.StatusOK || json.Unmarshal([]byte(body), &draw) != nil ||
		draw.DrawSize == nil || *draw.DrawSize != 13 || draw.Size == nil || *draw.Size != 13 || draw.Seed != rep.Seed {
		t.Fatalf("draw endpoint: %d %s, want draw_size 13 (and its deprecated alias size) and the report's seed", resp.StatusCode, body)
	}
	for i, r := range fans {
		if r.admitted.IsZero() {
			t.Fatalf("registrant %d was never let in", i)
		}
		out, err := verifyDraw(t, "--report", report, "--draw-index", fmt.Sprint(r.index))
		if err != nil {
			t.Fatalf("verify-draw for %d: %v\n%s", r.index, err, out)
		}
		// The fan polled right after each step of the controller: the
		// admission that let them in is the step just before they saw it.
		want := "let in at " + r.admitted.UTC().Format(time.RFC3339Nano)
		if !strings.Contains(out, "the seed matches the commitment") || !strings.Contains(out, want) {
			t.Fatalf("verify-draw for draw_index %d:\n%s\nwant %q", r.index, out, want)
		}
	}

	resp, page := newFan(t).get(report, "Accept", "text/html,application/xhtml+xml")
	if resp.StatusCode != http.StatusOK || !strings.HasPrefix(resp.Header.Get("Content-Type"), "text/html") ||
		!strings.Contains(page, "Fairness report: fair-draw") || !strings.Contains(page, rep.Seed) || !strings.Contains(page, "complete") {
		t.Fatalf("report page: %d %s\n%s", resp.StatusCode, resp.Header.Get("Content-Type"), page)
	}
	// The page is in the fan's language: Arabic from the browser's
	// Accept-Language, German chosen from the menu (?lang=de), which is
	// remembered; the JSON report is the same whatever the language.
	resp, page = newFan(t).get(report, "Accept", "text/html", "Accept-Language", "ar-EG,ar;q=0.9,en;q=0.5")
	if resp.StatusCode != http.StatusOK || !strings.Contains(page, `<html lang="ar" dir="rtl">`) ||
		!strings.Contains(page, "تقرير العدالة: fair-draw") || !strings.Contains(page, rep.Seed) || strings.Contains(page, "fairness.") ||
		strings.Contains(page, "Fairness report") || !strings.Contains(resp.Header.Get("Vary"), "Accept-Language") ||
		resp.Header.Get("Cache-Control") != "private, max-age=5" {
		t.Fatalf("report page in Arabic: %d %v\n%s", resp.StatusCode, resp.Header, page)
	}
	de := newFan(t)
	if resp, page := de.get(report+"?lang=de", "Accept", "text/html"); resp.StatusCode != http.StatusOK ||
		!strings.Contains(page, `<html lang="de" dir="ltr">`) || !strings.Contains(page, "Fairness-Bericht: fair-draw") || strings.Contains(page, "fairness.") {
		t.Fatalf("report page in German: %d\n%s", resp.StatusCode, page)
	}
	if _, page := de.get(report, "Accept", "text/html", "Accept-Language", "en"); !strings.Contains(page, "Fairness-Bericht") {
		t.Fatalf("the chosen German was not remembered:\n%s", page)
	}
	for _, lang := range []string{"ar", "de"} {
		if resp, body := newFan(t).get(report, "Accept", "application/json", "Accept-Language", lang); resp.StatusCode != http.StatusOK ||
			resp.Header.Get("Cache-Control") != "public, max-age=5" || !sameJSON(t, body, rep) {
			t.Fatalf("JSON report with Accept-Language %s: %d %s", lang, resp.StatusCode, body)
		}
	}
	if out, err := verifyDraw(t, "--report", report, "--draw-index", "13"); err == nil {
		t.Fatalf("verify-draw of an index no draw covers succeeded:\n%s", out)
	}
}

// sameJSON reports whether body is rep, field for field.
func sameJSON(t *testing.T, body string, rep waitingroom.FairnessReport) bool {
	t.Helper()
	want, err := json.Marshal(rep)
	if err != nil {
		t.Fatal(err)
	}
	var a, b any
	return json.Unmarshal([]byte(body), &a) == nil && json.Unmarshal(want, &b) == nil && fmt.Sprint(a) == fmt.Sprint(b)
}

// verifyDraw runs the registered verify-draw command.
func verifyDraw(t *testing.T, args ...string) (string, error) {
	t.Helper()
	return runRegistered(t, "verify-draw", args...)
}
