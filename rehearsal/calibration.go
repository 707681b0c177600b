package rehearsal

import (
	"errors"
	"fmt"
	"image/color"
	"io"
	"strings"
	"sync/atomic"
	"time"

	"github.com/foyer-dev/foyer/waitingroom"
)

// The scenario "calibration of the outcome" (docs/rehearsal.md): more fans
// than places, the booking service reporting what is left to sell, and every
// status answer's outcome recorded (docs/supply.md). The verdict judges the
// estimates by the rehearsal's own count of who was told what and who got
// tickets, and sets it beside the fairness report's calibration.

// errCalibration fails a calibration rehearsal whose estimates broke a
// promise of docs/supply.md.
var errCalibration = errors.New("rehearsal: the outcome told to fans broke its promise")

// unlikelyBound is the share of fans told "unlikely" who must go unserved.
const unlikelyBound = 0.9

// told is what the room told one fan of their chance, as offsets from the
// start.
type told struct {
	likely, atRisk, unlikely bool // ever told each
	// lastUnlikely is the last answer "unlikely", and atRiskSince whether
	// an answer "at_risk" came after it.
	lastUnlikely time.Duration
	atRiskSince  bool
	// skipped: let in with "unlikely" the last word since the last
	// "at_risk" (or with no "at_risk" after it), between skipFrom and
	// skipTo.
	skipped          bool
	skipFrom, skipTo time.Duration
}

// outcomeIndex numbers the outcomes for the counts by second.
func outcomeIndex(o string) int {
	switch waitingroom.Outcome(o) {
	case waitingroom.OutcomeLikely:
		return 0
	case waitingroom.OutcomeAtRisk:
		return 1
	case waitingroom.OutcomeUnlikely:
		return 2
	}
	return -1
}

var outcomeLabels = [3]string{"likely", "at risk", "unlikely"}

// calibLive counts the answers by outcome, second by second, and the joins
// and polls whose answer never reached the fan (the transport failed, or a
// 503): the room may have told those fans an outcome they did not read.
type calibLive struct {
	bySec  [3][]atomic.Int64
	unread atomic.Int64
}

// noteOutcome records the outcome of a status answer sent at at.
func (r *rehearsal) noteOutcome(f *fan, outcome string, at time.Duration) {
	i := outcomeIndex(outcome)
	if i < 0 {
		return
	}
	if s := int(at / time.Second); s >= 0 && s < len(r.calib.bySec[i]) {
		r.calib.bySec[i][s].Add(1)
	}
	t := &f.told
	switch i {
	case 0:
		t.likely = true
	case 1:
		t.atRisk, t.atRiskSince = true, true
	case 2:
		t.unlikely, t.lastUnlikely, t.atRiskSince = true, at, false
	}
}

// noteLetIn records a fan's first pass: one told "unlikely" last, with no
// "at_risk" since, skipped at_risk (unless the supply rose meanwhile).
func (f *fan) noteLetIn(at time.Duration) {
	if t := &f.told; t.unlikely && !t.atRiskSince {
		t.skipped, t.skipFrom, t.skipTo = true, t.lastUnlikely, at
	}
}

// calibration is the scenario's count, and the fairness report's account
// beside it.
type calibration struct {
	fans                    int // fans told an outcome at least once
	letIn                   int // of them, how many were let in
	told                    [3]int
	toldServed              [3]int // of them, how many got tickets
	toldLetIn               [3]int // and how many were let in
	unread                  int    // answers to joins and polls the fans never read
	reportDiffers           []string
	skips, skipsExcused     int // let in and served after "unlikely" without "at_risk"; of them, after a rise of the supply
	report                  *waitingroom.SupplyCalibration
	reportErr               error
	reportBad               []string // where the report's figures do not add up
	unlikelyOK, skipsOK, ok bool
}

// calibrate counts the fans' outcomes and judges them; rep is the fairness
// report's supply account (nil with repErr when it could not be read).
func (r *rehearsal) calibrate(rep *waitingroom.SupplyCalibration, repErr error) calibration {
	c := calibration{report: rep, reportErr: repErr}
	for i := range r.fans {
		f := &r.fans[i]
		t := f.told
		if !t.likely && !t.atRisk && !t.unlikely {
			continue
		}
		c.fans++
		served := f.outcome == outBought
		if f.admitted {
			c.letIn++
		}
		for k, was := range [3]bool{t.likely, t.atRisk, t.unlikely} {
			if was {
				c.told[k]++
				if served {
					c.toldServed[k]++
				}
				if f.admitted {
					c.toldLetIn[k]++
				}
			}
		}
		if t.skipped && served {
			c.skips++
			if rep != nil && supplyRose(rep, r.t0.Add(t.skipFrom), r.t0.Add(t.skipTo)) {
				c.skipsExcused++
			}
		}
	}
	c.unlikelyOK = float64(c.told[2]-c.toldServed[2]) >= unlikelyBound*float64(c.told[2])
	c.skipsOK = c.skips == c.skipsExcused
	c.unread = int(r.calib.unread.Load())
	if rep != nil {
		c.reportBad = checkCalibration(rep)
		c.reportDiffers = c.compare(rep.Places)
	}
	c.ok = c.unlikelyOK && c.skipsOK && rep != nil && len(c.reportBad) == 0 && len(c.reportDiffers) == 0
	return c
}

// fansAsPlaces is the fans' own count in the shape of the report's count of
// places told (one fan, one place).
func (c calibration) fansAsPlaces() waitingroom.PlacesTold {
	in := func(k int) waitingroom.ToldLetIn {
		return waitingroom.ToldLetIn{Told: uint64(c.told[k]), LetIn: uint64(c.toldLetIn[k])}
	}
	return waitingroom.PlacesTold{Told: uint64(c.fans), LetIn: uint64(c.letIn), Likely: in(0), AtRisk: in(1), Unlikely: in(2)}
}

// toldFigures writes a count of places (or fans) told, as the verdict and
// the report show it.
func toldFigures(p waitingroom.PlacesTold) string {
	return fmt.Sprintf("told %d (let in %d); likely %d (%d), at risk %d (%d), unlikely %d (%d)",
		p.Told, p.LetIn, p.Likely.Told, p.Likely.LetIn, p.AtRisk.Told, p.AtRisk.LetIn, p.Unlikely.Told, p.Unlikely.LetIn)
}

// compare sets the fairness report's count of places told beside the fans'
// own, figure by figure, and says where they differ. One fan holds one
// place here, so they are equal, but for answers the room gave and the fan
// never read: each may have told one more place than the fans saw, never
// fewer.
func (c calibration) compare(p *waitingroom.PlacesTold) []string {
	if p == nil {
		return []string{"the report counts no places told"}
	}
	f := c.fansAsPlaces()
	var out []string
	for _, b := range []struct {
		name         string
		report, fans waitingroom.ToldLetIn
	}{
		{"an outcome", waitingroom.ToldLetIn{Told: p.Told, LetIn: p.LetIn}, waitingroom.ToldLetIn{Told: f.Told, LetIn: f.LetIn}},
		{outcomeLabels[0], p.Likely, f.Likely}, {outcomeLabels[1], p.AtRisk, f.AtRisk}, {outcomeLabels[2], p.Unlikely, f.Unlikely},
	} {
		for _, n := range []struct {
			what         string
			report, fans uint64
		}{{"told " + b.name, b.report.Told, b.fans.Told}, {"told " + b.name + " and let in", b.report.LetIn, b.fans.LetIn}} {
			if n.report < n.fans || n.report > n.fans+uint64(c.unread) {
				out = append(out, fmt.Sprintf("%s: the report %d, the fans %d (%d answers unread)", n.what, n.report, n.fans, c.unread))
			}
		}
	}
	return out
}

// equalsFans words the comparison of the report's count with the fans'.
func (c calibration) equalsFans() string {
	if len(c.reportDiffers) == 0 {
		if c.unread == 0 {
			return "met: equal, figure by figure"
		}
		return fmt.Sprintf("met: equal but for %d answers the fans never read", c.unread)
	}
	return "NOT MET: " + strings.Join(c.reportDiffers, "; ")
}

// supplyRose reports whether a sample between from and to reported more
// units than the one before it.
func supplyRose(rep *waitingroom.SupplyCalibration, from, to time.Time) bool {
	for i := 1; i < len(rep.Estimates); i++ {
		e := rep.Estimates[i]
		if e.Units > rep.Estimates[i-1].Units && !e.At.Before(from) && !e.At.After(to) {
			return true
		}
	}
	return false
}

// checkCalibration recounts the report's calibration from its own
// estimates: each estimate's bands cover the places waiting then, no band
// serves more than it told nor beyond served_up_to, and the totals are the
// sums of the estimates'. It says where they do not.
func checkCalibration(rep *waitingroom.SupplyCalibration) []string {
	var bad []string
	var sum waitingroom.SupplyTold
	for i, e := range rep.Estimates {
		bands := []waitingroom.ToldServed{e.Told.Likely, e.Told.AtRisk, e.Told.Unlikely}
		var n, served uint64
		for _, b := range bands {
			n += b.Told
			served += b.Served
			if b.Served > b.Told {
				bad = append(bad, fmt.Sprintf("estimate %d: %d served of %d told", i+1, b.Served, b.Told))
			}
		}
		if n != e.Waiting {
			bad = append(bad, fmt.Sprintf("estimate %d: %d places told, %d waiting", i+1, n, e.Waiting))
		}
		// The places served are those from the front up to served_up_to.
		if want := min(e.Waiting, rep.ServedUpTo-min(rep.ServedUpTo, e.Claimed)); served != want {
			bad = append(bad, fmt.Sprintf("estimate %d: %d served, want %d (claims %d, served up to %d)", i+1, served, want, e.Claimed, rep.ServedUpTo))
		}
		for _, p := range [][2]*waitingroom.ToldServed{{&sum.Likely, &e.Told.Likely}, {&sum.AtRisk, &e.Told.AtRisk}, {&sum.Unlikely, &e.Told.Unlikely}} {
			p[0].Told += p[1].Told
			p[0].Served += p[1].Served
		}
	}
	if sum != rep.Totals {
		bad = append(bad, fmt.Sprintf("totals %+v, the estimates add up to %+v", rep.Totals, sum))
	}
	return bad
}

// fairnessSupply reads the fairness report's supply account at the end of
// the run: the room publishes its report once it has sold out, so it is
// asked a few times.
func (r *rehearsal) fairnessSupply() (*waitingroom.SupplyCalibration, error) {
	// The nodes send what they told with their beats, once a second: the
	// last answers reach the store within two.
	time.Sleep(2 * time.Second)
	return fairnessPart(r, "supply", func(rep waitingroom.FairnessReport) *waitingroom.SupplyCalibration { return rep.Supply })
}

// fairnessPart reads one account of the fairness report (nil when absent),
// named for the error.
func fairnessPart[T any](r *rehearsal, name string, part func(waitingroom.FairnessReport) *T) (*T, error) {
	rep, err := r.fairnessReport()
	if err != nil {
		return nil, err
	}
	if p := part(rep); p != nil {
		return p, nil
	}
	return nil, errors.New("the fairness report has no " + name + " account")
}

// fairnessReport reads the fairness report at the end of the run: the room
// publishes its report once it has sold out, so it is asked a few times.
func (r *rehearsal) fairnessReport() (waitingroom.FairnessReport, error) {
	var last error
	for range 10 {
		rep, err := r.fetchFairness()
		if err == nil {
			return rep, nil
		}
		last = err
		time.Sleep(500 * time.Millisecond)
	}
	return waitingroom.FairnessReport{}, last
}

func (r *rehearsal) fetchFairness() (waitingroom.FairnessReport, error) {
	var rep waitingroom.FairnessReport
	return rep, getJSON(r.client, r.st.base+"/_waiting-room/fairness", "fairness report", 64<<20, &rep)
}

// print writes the scenario's part of the verdict.
func (c calibration) print(w io.Writer) {
	fmt.Fprintln(w, "\ncalibration of the outcome (docs/supply.md)")
	fmt.Fprintf(w, "  fans told an outcome %d\n", c.fans)
	for k, name := range outcomeLabels {
		fmt.Fprintf(w, "  told %-15s %d fans, %d of them got tickets\n", name, c.told[k], c.toldServed[k])
	}
	fmt.Fprintf(w, "  unlikely not served  %s: %d of %d (at least %.0f%%)\n", met(c.unlikelyOK), c.told[2]-c.toldServed[2], c.told[2], 100*unlikelyBound)
	fmt.Fprintf(w, "  at risk before served %s: %d served after \"unlikely\" with no \"at risk\" between, %d of them after the supply rose\n", met(c.skipsOK), c.skips, c.skipsExcused)
	switch {
	case c.report == nil:
		fmt.Fprintf(w, "  fairness report      UNAVAILABLE: %v\n", c.reportErr)
	default:
		t := c.report.Totals
		fmt.Fprintf(w, "  fairness report      %d estimates, served up to claim %d; places told likely %d (%d served), at risk %d (%d), unlikely %d (%d)\n",
			len(c.report.Estimates), c.report.ServedUpTo, t.Likely.Told, t.Likely.Served, t.AtRisk.Told, t.AtRisk.Served, t.Unlikely.Told, t.Unlikely.Served)
		fmt.Fprintf(w, "  report adds up       %s", met(len(c.reportBad) == 0))
		for _, b := range c.reportBad {
			fmt.Fprintf(w, "; %s", b)
		}
		fmt.Fprintln(w)
		if p := c.report.Places; p != nil {
			fmt.Fprintf(w, "  report, place by place: %s\n", toldFigures(*p))
		}
		fmt.Fprintf(w, "  fans, fan by fan:      %s\n", toldFigures(c.fansAsPlaces()))
		fmt.Fprintf(w, "  report equals fans   %s\n", c.equalsFans())
	}
}

// rows is the report's calibration table.
func (c calibration) rows() []reportRow {
	rows := []reportRow{{"fans told an outcome", fmt.Sprint(c.fans)}}
	for k, name := range outcomeLabels {
		rows = append(rows, reportRow{"told " + name + " (got tickets)", fmt.Sprintf("%d (%d)", c.told[k], c.toldServed[k])})
	}
	rows = append(rows,
		reportRow{"told unlikely and not served", fmt.Sprintf("%s: %d of %d, at least %.0f%% wanted", met(c.unlikelyOK), c.told[2]-c.toldServed[2], c.told[2], 100*unlikelyBound)},
		reportRow{"served after unlikely without at risk", fmt.Sprintf("%s: %d (%d after the supply rose)", met(c.skipsOK), c.skips, c.skipsExcused)})
	if c.report != nil {
		t := c.report.Totals
		rows = append(rows,
			reportRow{"fairness report: estimates, served up to", fmt.Sprintf("%d, claim %d", len(c.report.Estimates), c.report.ServedUpTo)},
			reportRow{"fairness report: places told likely / at risk / unlikely (served)", fmt.Sprintf("%d (%d) / %d (%d) / %d (%d)",
				t.Likely.Told, t.Likely.Served, t.AtRisk.Told, t.AtRisk.Served, t.Unlikely.Told, t.Unlikely.Served)},
			reportRow{"fairness report adds up", met(len(c.reportBad) == 0)})
		if p := c.report.Places; p != nil {
			rows = append(rows, reportRow{"fairness report: places told, place by place", toldFigures(*p)})
		}
		rows = append(rows,
			reportRow{"fans told, fan by fan", toldFigures(c.fansAsPlaces())},
			reportRow{"fairness report equals the count of fans", c.equalsFans()})
	} else {
		rows = append(rows, reportRow{"fairness report", fmt.Sprintf("UNAVAILABLE: %v", c.reportErr)})
	}
	return rows
}

// toldSeries is the answers of each outcome per second, for the chart.
func (r *rehearsal) toldSeries() [3][]point {
	var out [3][]point
	n := int(r.elapsed/time.Second) + 1
	for k := range out {
		for s := 0; s < n && s < len(r.calib.bySec[k]); s++ {
			out[k] = append(out[k], point{float64(s), float64(r.calib.bySec[k][s].Load())})
		}
	}
	return out
}

// toldChart: the status answers of each outcome, second by second.
func toldChart(series [3][]point) (string, error) {
	p := newPlot("Outcomes told", "seconds from the start", "status answers per second")
	for k, col := range []color.Color{colorC, colorA, colorB} {
		if len(series[k]) == 0 {
			continue
		}
		if err := addLine(p, outcomeLabels[k], series[k], col, k == 1); err != nil {
			return "", err
		}
	}
	p.Y.Min = 0
	return svgOf(p)
}

// reportCalibration is the report's section on the outcome told.
type reportCalibration struct {
	Rows  []reportRow
	Chart *reportChart
}

// reportState says in a word whether the fairness report was read and adds up.
func reportState(c *calibration) string {
	switch {
	case c.report == nil:
		return "unavailable"
	case len(c.reportBad) > 0:
		return "not adding up"
	}
	return "adding up"
}
