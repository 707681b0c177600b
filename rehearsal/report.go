package rehearsal

import (
	"bytes"
	"fmt"
	"html/template"
	"os"
	"strconv"
	"strings"
	"time"
)

// reportFile is the HTML report's file, made before the sale starts and
// written once its verdict is in. A rehearsal that ends without a verdict
// leaves no empty report behind.
type reportFile struct {
	f       *os.File
	path    string
	written bool
}

func createReport(path string) (*reportFile, error) {
	if path == "" {
		return nil, nil
	}
	f, err := os.Create(path)
	if err != nil {
		return nil, fmt.Errorf("rehearsal: -report: %w", err)
	}
	return &reportFile{f: f, path: path}, nil
}

func (rf *reportFile) close() {
	_ = rf.f.Close()
	if !rf.written {
		_ = os.Remove(rf.path)
	}
}

// reportData is what the report's template is given: the verdict's
// figures, worded by the same helpers as the text verdict, the charts, and
// the text verdict itself.
type reportData struct {
	Title, Setup, When string
	Targets            []reportRow
	Sale, FIFO         []reportRow
	Latency            []reportLatency
	Charts             []reportChart
	Fates              *reportFates // the fans the site failed, when the scenario fails checkouts
	Calibration        *reportCalibration
	Refunds            *reportRefunds
	Verdict            string
}

type reportRow struct{ Name, Value string }

type reportLatency struct {
	Name                          string
	Requests                      int
	P50, P99, Max, P99Due, Answer string
	Over                          bool
}

type reportChart struct {
	ID, Caption, Summary string
	SVG                  template.HTML
}

// writeReport renders the report of the recorded run.
func (r *rehearsal) writeReport(a afterRun, v verdictFigures, verdictText string) error {
	var buf bytes.Buffer
	if err := r.renderReport(&buf, a, v, verdictText); err != nil {
		return err
	}
	if _, err := r.report.f.Write(buf.Bytes()); err != nil {
		return err
	}
	if err := r.report.f.Sync(); err != nil {
		return err
	}
	r.report.written = true
	return nil
}

func (r *rehearsal) renderReport(buf *bytes.Buffer, a afterRun, v verdictFigures, verdictText string) error {
	c := r.cfg
	d := reportData{
		Title: "On-sale rehearsal",
		Setup: fmt.Sprintf("%d fans for %d places, arriving over %v; room %d/min, cap %d, session %v, grace %v; store %s; booking on %s",
			c.Fans, r.capacity, c.Arrival, c.Stack.Rate, c.Stack.Cap, c.Stack.Session, c.Grace, storeName(r), bookingStore(c.Stack.DatabaseURL)),
		When:    r.t0.UTC().Format(time.RFC3339),
		Verdict: verdictText,
	}
	soldOut := fmt.Sprintf("NO: %d places left", r.capacity-v.sale.sold)
	if v.sale.soldOut {
		soldOut = "yes: last place paid at " + r.lastPaid()
	}
	var p99s []string
	for _, g := range v.groups {
		if g.top {
			state := "under"
			if g.sum.p99 >= p99Target {
				state = "OVER"
			}
			p99s = append(p99s, g.name+" "+ms(g.sum.p99)+" "+state)
		}
	}
	d.Targets = []reportRow{
		{"sold out", met(v.sale.soldOut)},
		{"0 oversold", met(v.sale.proven())},
		{"FIFO order kept", met(v.fifo.ok())},
		{"p99 < 50 ms", met(v.p99Met) + " (" + strings.Join(p99s, ", ") + ")"},
	}
	d.Sale = []reportRow{
		{"sold / capacity", fmt.Sprintf("%d / %d places", v.sale.sold, r.capacity)},
		{"sold out", soldOut},
		{"oversold", fmt.Sprintf("%d", v.sale.oversold)},
		{"fans' delivered orders", fmt.Sprintf("%d tickets in %d orders", v.sale.fanTickets, len(r.orders))},
	}
	f := v.fifo
	d.FIFO = []reportRow{
		{"checked", fmt.Sprintf("%d patient fans with a place in line (%d admitted)", f.checked, f.admitted)},
		{"keys follow arrival", fmt.Sprintf("%d inversions", f.keyInversions)},
		{"passes follow keys", fmt.Sprintf("%d inversions", f.passInversions)},
		{"passes follow arrival", fmt.Sprintf("%d inversions", f.arrivalInversions)},
		{"polling granularity", fmt.Sprintf("%d fans got their pass after a larger key had one, by at most %v", f.late, f.maxLateness.Round(time.Millisecond))},
		{"left out", v.excluded},
	}
	for _, g := range v.groups {
		d.Latency = append(d.Latency, reportLatency{
			Name: strings.TrimSpace(g.name), Requests: g.sum.n, P50: ms(g.sum.p50), P99: ms(g.sum.p99), Max: ms(g.sum.max),
			P99Due: ms(g.due.p99), Answer: g.answers, Over: g.top && g.sum.p99 >= p99Target,
		})
	}

	admitted := admittedPerSecond(r.fans, r.elapsed)
	line, err := lineChart(r.series, admitted)
	if err != nil {
		return fmt.Errorf("line chart: %w", err)
	}
	wins, window := latencyOverTime(r.workers, r.elapsed)
	lat, err := latencyChart(wins, window)
	if err != nil {
		return fmt.Errorf("latency chart: %w", err)
	}
	sold := soldCurve(r.orders, r.t0)
	soldSVG, err := soldChart(sold, r.capacity, r.elapsed)
	if err != nil {
		return fmt.Errorf("sold chart: %w", err)
	}
	recs, _ := fifoRecords(r.fans)
	offsets := turnOffsets(recs)
	groups := turnGroups(offsets)
	fifoSVG, err := fifoChart(groups)
	if err != nil {
		return fmt.Errorf("FIFO chart: %w", err)
	}
	peak := 0.0
	for _, p := range admitted {
		peak = max(peak, p.y)
	}
	fifoNote := fmt.Sprintf("%d admitted patient fans", len(offsets))
	if n, k := len(offsets), len(groups); k > 0 && k < n {
		size := strconv.Itoa(n / k)
		if n%k != 0 {
			size += " or " + strconv.Itoa(n/k+1)
		}
		fifoNote += fmt.Sprintf(", in %d groups of %s neighbours", k, size)
	}
	lo, hi := 0, 0
	for _, o := range offsets {
		lo, hi = min(lo, o), max(hi, o)
	}
	fifoNote += fmt.Sprintf("; passes came from %d to %d places off their turn", lo, hi)
	d.Charts = []reportChart{
		{"line", "Fans waiting, sessions active, and passes given each second",
			fmt.Sprintf("%d seconds sampled; at most %.0f passes in one second", len(r.series), peak), inlineSVG(line, "line")},
		{"latency", "Latency of join, poll and shop requests over time: p99 solid, p50 dashed, the 50 ms target in grey",
			fmt.Sprintf("%d windows of %v", len(wins), window), inlineSVG(lat, "latency")},
		{"sold", "The sell-out curve: places sold by the time their order was paid",
			fmt.Sprintf("%d of %d places; %s", int(sold[len(sold)-1].y), r.capacity, soldOut), inlineSVG(soldSVG, "sold")},
		{"fifo", "Order of admission: how far each admitted fan's pass came from their turn (their rank in the order the passes arrived, less their place in line), by place in line; " +
			"a line kept in order stays on 0, and the band's width is the polling granularity: fans let in at one step learn of it at their next polls",
			fifoNote + "; FIFO order kept: " + met(v.fifo.ok()), inlineSVG(fifoSVG, "fifo")},
	}
	if d.Fates, err = r.fatesSection(v); err != nil {
		return err
	}
	if c := r.calibration; c != nil {
		svg, err := toldChart(r.toldSeries())
		if err != nil {
			return fmt.Errorf("outcomes chart: %w", err)
		}
		d.Calibration = &reportCalibration{Rows: c.rows(), Chart: &reportChart{ID: "told",
			Caption: "The outcome told in each status answer, second by second (docs/supply.md)",
			Summary: fmt.Sprintf("%d fans told an outcome; %d told unlikely, %d of them got tickets", c.fans, c.told[2], c.toldServed[2]),
			SVG:     inlineSVG(svg, "told")}}
		d.Targets = append(d.Targets, reportRow{"outcome calibrated", met(c.ok)})
	}
	if j := r.refundJudged; j != nil {
		d.Refunds = &reportRefunds{Rows: j.rows()}
		d.Targets = append(d.Targets, reportRow{"refunded places sold again to the waitlist, in order", met(j.ok)})
	}
	if r.failsCheckouts() && r.retryOn() {
		d.Targets = append(d.Targets, reportRow{"0 failed fans behind their place", met(v.fates.behindOK()) +
			fmt.Sprintf(" (%d of %d the site failed; requeued first and in order)", v.fates.behind, v.fates.failed)})
	}
	return reportTemplate.Execute(buf, d)
}

// storeName is the room's store as the run's first line names it.
func storeName(r *rehearsal) string {
	if r.st != nil {
		return r.st.storeName
	}
	return r.cfg.Stack.Store
}

// inlineSVG names a chart for screen readers by its caption and summary.
func inlineSVG(svg, id string) template.HTML {
	svg = strings.Replace(svg, "<svg", `<svg role="img" aria-labelledby="cap-`+id+` sum-`+id+`"`, 1)
	return template.HTML(svg) // made here by the plotting library, not from input
}

var reportTemplate = template.Must(template.New("report").Parse(`<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>{{.Title}} · {{.When}}</title>
<style>
body { margin: 0 auto; max-width: 60rem; padding: 16px 20px 40px; color: #1d1b18; background: #fff;
  font: 15px/1.45 system-ui, -apple-system, "Segoe UI", Roboto, "Helvetica Neue", Arial, sans-serif; }
h1 { font-size: 1.6rem; margin: 0 0 4px; }
h2 { font-size: 1.2rem; margin: 28px 0 8px; }
.setup { color: #57524a; margin: 0; }
table { border-collapse: collapse; font-variant-numeric: tabular-nums; margin: 0 0 8px; }
caption { text-align: left; color: #57524a; padding: 0 0 4px; }
th, td { padding: 5px 10px; border-bottom: 1px solid #ddd6ca; text-align: left; vertical-align: top; }
td.num { text-align: right; }
.bad { color: #a1160a; font-weight: 600; }
figure { margin: 16px 0 24px; }
figcaption { font-weight: 600; }
figure p { color: #57524a; margin: 2px 0 6px; }
svg { max-width: 100%; height: auto; }
pre { background: #f6f4ef; padding: 12px; overflow-x: auto; font-size: 12px; }
</style>
</head>
<body>
<header>
<h1>{{.Title}}</h1>
<p class="setup">{{.Setup}}. Started <time datetime="{{.When}}">{{.When}}</time>.</p>
</header>
<main>
<section aria-labelledby="targets-h">
<h2 id="targets-h">Targets</h2>
<table id="targets">
<caption>Sold out, 0 oversold, FIFO order kept, p99 under 50 ms</caption>
<tbody>{{range .Targets}}<tr><th scope="row">{{.Name}}</th><td>{{.Value}}</td></tr>
{{end}}</tbody>
</table>
</section>
<section aria-labelledby="sale-h">
<h2 id="sale-h">The sale</h2>
<table id="sale"><caption>Counted by the booking service, and from the tickets the fans saw delivered</caption>
<tbody>{{range .Sale}}<tr><th scope="row">{{.Name}}</th><td>{{.Value}}</td></tr>
{{end}}</tbody></table>
</section>
<section aria-labelledby="fifo-h">
<h2 id="fifo-h">Order of the line</h2>
<table id="fifo"><caption>From the order key in every pass, and when each fan was told to wait</caption>
<tbody>{{range .FIFO}}<tr><th scope="row">{{.Name}}</th><td>{{.Value}}</td></tr>
{{end}}</tbody></table>
</section>
{{with .Fates}}<section aria-labelledby="fates-h">
<h2 id="fates-h">Fans the site failed</h2>
<table id="fates"><caption>Every fan whose checkout the booking service failed on its side, and where they ended; without and with the service's retry</caption>
<thead><tr><th scope="col"></th>{{range .Columns}}<th scope="col">{{.}}</th>{{end}}</tr></thead>
<tbody>{{range .Rows}}<tr><th scope="row">{{.Name}}</th>{{$bad := .Bad}}{{range .Values}}<td class="num{{if $bad}} bad{{end}}">{{.}}</td>{{end}}</tr>
{{end}}</tbody></table>
{{with .Chart}}{{template "figure" .}}{{end}}
</section>
{{end}}{{with .Calibration}}<section aria-labelledby="calibration-h">
<h2 id="calibration-h">Calibration of the outcome</h2>
<table id="calibration"><caption>Every fan's status answers, by the outcome told and whether the fan got tickets; beside it, the fairness report's account</caption>
<tbody>{{range .Rows}}<tr><th scope="row">{{.Name}}</th><td>{{.Value}}</td></tr>
{{end}}</tbody></table>
{{with .Chart}}{{template "figure" .}}{{end}}
</section>
{{end}}{{with .Refunds}}<section aria-labelledby="refunds-h">
<h2 id="refunds-h">Refunds after the sell-out</h2>
<table id="refunds"><caption>Paid orders refunded through the provider's signed webhook once the sale sold out, and where their places went: to the fans the room let in from its waitlist; beside it, the fairness report's account of the waitlist</caption>
<tbody>{{range .Rows}}<tr><th scope="row">{{.Name}}</th><td>{{.Value}}</td></tr>
{{end}}</tbody></table>
</section>
{{end}}<section aria-labelledby="latency-h">
<h2 id="latency-h">Latency</h2>
<table id="latency"><caption>Every request the fans made, from sending it to its answer; "p99 if due" counts from when the fan meant to send it</caption>
<thead><tr><th scope="col">requests</th><th scope="col">count</th><th scope="col">p50</th><th scope="col">p99</th><th scope="col">max</th><th scope="col">p99 if due</th><th scope="col">answers</th></tr></thead>
<tbody>{{range .Latency}}<tr><th scope="row">{{.Name}}</th><td class="num">{{.Requests}}</td><td class="num">{{.P50}}</td><td class="num{{if .Over}} bad{{end}}">{{.P99}}</td><td class="num">{{.Max}}</td><td class="num">{{.P99Due}}</td><td>{{.Answer}}</td></tr>
{{end}}</tbody></table>
</section>
<section aria-labelledby="charts-h">
<h2 id="charts-h">Over time</h2>
{{range .Charts}}<figure id="chart-{{.ID}}">
<figcaption id="cap-{{.ID}}">{{.Caption}}</figcaption>
<p id="sum-{{.ID}}">{{.Summary}}</p>
{{.SVG}}
</figure>
{{end}}</section>
<section aria-labelledby="verdict-h">
<h2 id="verdict-h">The verdict as printed</h2>
<pre>{{.Verdict}}</pre>
</section>
</main>
</body>
</html>
{{define "figure"}}<figure id="chart-{{.ID}}">
<figcaption id="cap-{{.ID}}">{{.Caption}}</figcaption>
<p id="sum-{{.ID}}">{{.Summary}}</p>
{{.SVG}}
</figure>{{end}}`))
