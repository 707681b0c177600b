package rehearsal

import (
	"bytes"
	"encoding/xml"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"time"
)

// recordedRun is a rehearsal as it stands when the fans have stopped: the
// fans' records, the workers' request samples, the delivered orders and the
// second-by-second samples, all the verdict and the report read. 400 fans
// for 100 places: the first 150 are admitted in key order, a pass a tenth
// of a second; the first 50 buy two seats each; the rest sell out waiting.
func recordedRun(t *testing.T) (*rehearsal, afterRun) {
	t.Helper()
	const fans, capacity, admitted, buyers = 400, 100, 150, 50
	r := &rehearsal{
		cfg: Config{Fans: fans, Seats: capacity, Arrival: 10 * sec, Workers: 2,
			Stack: StackConfig{Store: "memory", Rate: 600, Cap: 100, Session: 10 * time.Minute}, Grace: 30 * sec},
		capacity: capacity,
		t0:       time.Date(2026, 12, 1, 10, 0, 0, 0, time.UTC),
		elapsed:  30 * sec,
		orders:   map[string]orderSeen{},
	}
	r.fans = make([]fan, fans)
	for i := range r.fans {
		f := newFan(patient, 0)
		f.joinStart = time.Duration(i) * 20 * time.Millisecond
		f.joinEnd = f.joinStart + 5*time.Millisecond
		f.lastWait = f.joinEnd
		f.outcome = outSoldOutLine
		if i < admitted {
			f.admitted, f.key = true, uint64(i)
			f.passAt = sec + time.Duration(i)*100*time.Millisecond
			f.lastWait = f.passAt - 500*time.Millisecond
			f.outcome = outSoldOutShop
		}
		if i < buyers {
			f.outcome = outBought
			r.orders[fmt.Sprintf("o%d", i)] = orderSeen{
				seats:  []string{fmt.Sprintf("A-%d-1", i), fmt.Sprintf("A-%d-2", i)},
				paidAt: r.t0.Add(f.passAt + 3*sec), revoked: true,
			}
		}
		r.fans[i] = f
	}
	for w := range 2 {
		wk := &worker{}
		for i := range 3000 {
			at := uint32(i * 10) // ms: three thousand requests a worker over the 30 s
			kind := reqKind((i + w) % int(nKinds))
			if at < 1000 && kind.groupIndex() == 2 {
				kind = kindPoll // nobody shops in the first second
			}
			us := uint32(500 + (i%100)*40 + w*100) // 0.5 to 4.5 ms
			if i%1000 == 999 {
				us = 60_000 // one slow request in a thousand
			}
			wk.reqs = append(wk.reqs, reqSample{at: at, us: us, kind: kind})
			wk.byClass[kind][2]++
			wk.lags = append(wk.lags, lagSample{at: at, us: 100})
		}
		r.workers = append(r.workers, wk)
	}
	for s := 1; s <= 30; s++ {
		in := min(admitted, max(0, (s-1)*10))
		r.series = append(r.series, secondSample{
			at: time.Duration(s) * sec, arrived: int64(min(fans, s*50)), waiting: int64(min(fans, s*50) - in),
			admitted: int64(in), shopping: int64(min(in, 40)), roomRead: true, roomActive: min(in, 40),
		})
	}
	r.live.perSecond = make([]atomic.Int64, 31)
	var a afterRun
	a.inv = answered(true, 2*buyers)
	a.room.Counters.Seq = fans
	return r, a
}

// TestReportFromARecordedRun: the report of a recorded run stands alone, has
// its four charts drawn from the data, and says what the text verdict says.
func TestReportFromARecordedRun(t *testing.T) {
	r, a := recordedRun(t)
	v := r.figures(a)
	var text, page bytes.Buffer
	r.judge(&text, a, v)
	if err := r.renderReport(&page, a, v, text.String()); err != nil {
		t.Fatal(err)
	}
	html, verdict := page.String(), text.String()
	if dir := os.Getenv("FOYER_ARTIFACTS"); dir != "" {
		_ = os.WriteFile(filepath.Join(dir, "rehearsal-report.html"), page.Bytes(), 0o644)
	}

	// Four charts, each a well-formed SVG with something drawn in it, named
	// for screen readers.
	for _, id := range []string{"line", "latency", "sold", "fifo"} {
		_, fig, ok := strings.Cut(html, `<figure id="chart-`+id+`">`)
		if !ok {
			t.Fatalf("no %s chart", id)
		}
		fig, _, _ = strings.Cut(fig, "</figure>")
		i, j := strings.Index(fig, "<svg"), strings.LastIndex(fig, "</svg>")
		if i < 0 || j < i {
			t.Fatalf("the %s chart has no SVG", id)
		}
		svg := fig[i : j+len("</svg>")]
		if err := wellFormed(svg); err != nil {
			t.Fatalf("the %s chart: %v", id, err)
		}
		if n := strings.Count(svg, "<path"); n < 10 {
			t.Fatalf("the %s chart draws %d paths", id, n)
		}
		if !strings.Contains(svg, `role="img" aria-labelledby="cap-`+id+` sum-`+id+`"`) {
			t.Fatalf("the %s chart is not named", id)
		}
	}
	// Every series of the latency chart is in its legend.
	for _, name := range []string{"join p99", "join p50", "poll p99", "poll p50", "shop p99", "shop p50", "target (p99)"} {
		if !strings.Contains(html, ">"+name+"<") {
			t.Errorf("the latency chart's legend has no %q", name)
		}
	}
	// It stands alone: nothing is loaded from anywhere.
	if m := regexp.MustCompile(`(?i)<(script|link|img|iframe)\b|(src|href)="`).FindString(html); m != "" {
		t.Fatalf("the report loads something: %q", m)
	}

	// The same numbers as the verdict: every latency line...
	lines := regexp.MustCompile(`(?m)^ {2,4}(\S+)\s+(\d+)\s+([\d.]+ ms)\s+([\d.]+ ms)\s+([\d.]+ ms)\s+([\d.]+ ms)`).FindAllStringSubmatch(verdict, -1)
	if len(lines) != 9 {
		t.Fatalf("%d latency lines in the verdict, want 9:\n%s", len(lines), verdict)
	}
	for _, l := range lines {
		row := regexp.MustCompile(`<th scope="row">` + regexp.QuoteMeta(l[1]) + `</th><td class="num">` + l[2] +
			`</td><td class="num">` + regexp.QuoteMeta(l[3]) + `</td><td class="num[^"]*">` + regexp.QuoteMeta(l[4]) +
			`</td><td class="num">` + regexp.QuoteMeta(l[5]) + `</td><td class="num">` + regexp.QuoteMeta(l[6]) + `</td>`)
		if !row.MatchString(html) {
			t.Errorf("the report's latency of %s is not the verdict's %v", l[1], l[2:])
		}
	}
	// ...the sale, the order of the line and the targets.
	for _, c := range []struct{ verdict, report string }{
		{`sold / capacity\s+(\d+ / \d+ places)`, `<th scope="row">sold / capacity</th><td>%s</td>`},
		{`oversold\s+(\d+) \(`, `<th scope="row">oversold</th><td>%s</td>`},
		{`keys follow arrival (\d+) inversions`, `<th scope="row">keys follow arrival</th><td>%s inversions</td>`},
		{`passes follow keys  (\d+) inversions`, `<th scope="row">passes follow keys</th><td>%s inversions</td>`},
		{`passes follow arrival (\d+) inversions`, `<th scope="row">passes follow arrival</th><td>%s inversions</td>`},
		{`checked\s+(\d+) patient fans`, `<th scope="row">checked</th><td>%s patient fans`},
		{`\((\d+) admitted\)`, `(%s admitted)`},
		{`sold out\s+yes: last place paid at ([\d.]+ s)`, `yes: last place paid at %s`},
		{`(?m)^  sold out\s+(met|NOT met)$`, `<th scope="row">sold out</th><td>%s</td>`},
		{`(?m)^  0 oversold\s+(met|NOT met)$`, `<th scope="row">0 oversold</th><td>%s</td>`},
		{`(?m)^  FIFO order kept\s+(met|NOT met)$`, `<th scope="row">FIFO order kept</th><td>%s</td>`},
		{`(?m)^  p99 < 50 ms\s+(met|NOT met) \((.*)\)$`, `<th scope="row">p99 &lt; 50 ms</th><td>%s (%s)</td>`},
	} {
		m := regexp.MustCompile(c.verdict).FindStringSubmatch(verdict)
		if m == nil {
			t.Errorf("the verdict does not say %s:\n%s", c.verdict, verdict)
			continue
		}
		args := make([]any, len(m)-1)
		for i := range args {
			args[i] = strings.ReplaceAll(m[i+1], "<", "&lt;")
		}
		if want := fmt.Sprintf(c.report, args...); !strings.Contains(html, want) {
			t.Errorf("the report does not say %q, as the verdict does", want)
		}
	}
	// The charts' own figures: every admitted fan on the FIFO plot, every
	// place sold on the sell-out curve, the verdict in full.
	for _, want := range []string{"150 admitted patient fans", "100 of 100 places", "30 seconds sampled", "at most 10 passes in one second"} {
		if !strings.Contains(html, want) {
			t.Errorf("the report does not say %q", want)
		}
	}
	if !strings.Contains(html, "every fan done after 30.0 s") {
		t.Error("the report does not hold the text verdict")
	}
}

func wellFormed(doc string) error {
	d := xml.NewDecoder(strings.NewReader(doc))
	for {
		_, err := d.Token()
		if err == io.EOF {
			return nil
		}
		if err != nil {
			return err
		}
	}
}

// TestReportSeries: the series the charts draw, from the records.
func TestReportSeries(t *testing.T) {
	r, _ := recordedRun(t)
	adm := admittedPerSecond(r.fans, r.elapsed)
	total := 0.0
	for _, p := range adm {
		total += p.y
	}
	if total != 150 || adm[1].y != 10 || adm[0].y != 0 {
		t.Fatalf("admitted per second: %v passes, %v in second 1, %v in second 0; want 150, 10, 0", total, adm[1].y, adm[0].y)
	}
	sold := soldCurve(r.orders, r.t0)
	if last := sold[len(sold)-1]; last.y != 100 || last.x != 1+4.9+3 {
		t.Fatalf("sell-out curve ends at %+v, want 100 places at 8.9 s", last)
	}
	for i := 1; i < len(sold); i++ {
		if sold[i].y < sold[i-1].y || sold[i].x < sold[i-1].x {
			t.Fatalf("the sell-out curve goes back at %d: %+v", i, sold[i-1:i+1])
		}
	}
	recs, _ := fifoRecords(r.fans)
	offsets := turnOffsets(recs)
	if len(offsets) != 150 || slices.ContainsFunc(offsets, func(o int) bool { return o != 0 }) {
		t.Fatalf("turn offsets of 150 fans admitted in key order: %v", offsets)
	}
	wins, window := latencyOverTime(r.workers, r.elapsed)
	if window != sec || len(wins) != 31 {
		t.Fatalf("%d windows of %v, want 31 of 1s", len(wins), window)
	}
	if wins[0].p99[0] <= 0 || wins[30].p99[0] != -1 {
		t.Fatalf("p99 of joins: %v in the first window, %v in the empty last", wins[0].p99[0], wins[30].p99[0])
	}
}

// TestProgressBar: the bar says how many fans are done and where the sale is.
func TestProgressBar(t *testing.T) {
	r, _ := recordedRun(t)
	r.left.Store(100) // 300 of 400 done
	r.series = r.series[:2]
	bar := r.progressBar(secondSample{at: 12 * sec, waiting: 7, shopping: 3, places: 42, requests: 0})
	if !strings.Contains(bar, "[██████████████████░░░░░░]  75% of fans done") || !strings.Contains(bar, "sold 42/100") || !strings.HasPrefix(bar, "  12s") {
		t.Fatalf("bar %q", bar)
	}
	r.left.Store(1) // 399 of 400
	if bar := r.progressBar(secondSample{at: 13 * sec}); !strings.Contains(bar, " 99% of fans done") {
		t.Fatalf("one fan short of the end: %q", bar)
	}
	f, err := os.Create(filepath.Join(t.TempDir(), "log"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if isTerminal(f) {
		t.Fatal("a file is taken for a terminal: the bar would fill a log with redraws")
	}
}

// TestReportFile: a report that is never written leaves no file behind, and
// a path that cannot be written is refused before anything starts.
func TestReportFile(t *testing.T) {
	path := filepath.Join(t.TempDir(), "out.html")
	rf, err := createReport(path)
	if err != nil {
		t.Fatal(err)
	}
	rf.close()
	if _, err := os.Stat(path); !os.IsNotExist(err) {
		t.Fatalf("an unwritten report was left behind: %v", err)
	}
	if _, err := createReport(filepath.Join(t.TempDir(), "no", "such", "dir", "out.html")); err == nil || !strings.Contains(err.Error(), "-report") {
		t.Fatalf("a report in a missing directory: %v", err)
	}
	if rf, err := createReport(""); rf != nil || err != nil {
		t.Fatalf("no -report: %v %v", rf, err)
	}
}

// TestOrderOfAdmission: the order chart's figures. A fan whose pass came
// late is behind their turn by as many places as passes came before theirs
// out of turn, and those overtaken ahead of it; groups of neighbours sum up
// at most maxTurnGroups of them.
func TestOrderOfAdmission(t *testing.T) {
	recs := make([]fifoRecord, 6)
	for i := range recs {
		recs[i] = fifoRecord{admitted: true, key: uint64(10 + i), passAt: time.Duration(i) * sec}
	}
	recs[1].passAt = 3500 * time.Millisecond // key 11 polled late: after keys 12 and 13
	recs = append(recs, fifoRecord{key: 5})  // never admitted: not in line here
	got := turnOffsets(recs)
	if want := []int{0, 2, -1, -1, 0, 0}; !slices.Equal(got, want) {
		t.Fatalf("offsets %v, want %v", got, want)
	}

	offsets := make([]int, 1000)
	for i := range offsets {
		offsets[i] = i%10 - 5 // -5 to 4 in every ten
	}
	groups := turnGroups(offsets)
	if len(groups) != maxTurnGroups || groups[0].from != 0 || groups[len(groups)-1].to != 1000 {
		t.Fatalf("%d groups from %d to %d, want %d covering all 1000", len(groups), groups[0].from, groups[len(groups)-1].to, maxTurnGroups)
	}
	for i, g := range groups {
		if i > 0 && g.from != groups[i-1].to {
			t.Fatalf("group %d starts at %d, the one before ends at %d", i, g.from, groups[i-1].to)
		}
		if g.lo > g.median || g.median > g.hi {
			t.Fatalf("group %d: lo %v, median %v, hi %v", i, g.lo, g.median, g.hi)
		}
	}
	if few := turnGroups([]int{3, -1}); len(few) != 2 || few[0].median != 3 || few[1].lo != -1 {
		t.Fatalf("two fans: %+v, want a group each", few)
	}
	if len(turnGroups(nil)) != 0 {
		t.Fatal("no fans: want no groups")
	}
}
