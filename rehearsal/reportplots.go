package rehearsal

import (
	"bytes"
	"fmt"
	"image/color"
	"math"
	"strconv"
	"strings"
	"time"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
)

// The report's charts, drawn with gonum/plot to SVG.

var (
	colorA  = color.RGBA{R: 0xb4, G: 0x40, B: 0x0a, A: 0xff} // orange
	colorB  = color.RGBA{R: 0x1f, G: 0x5f, B: 0x9e, A: 0xff} // blue
	colorC  = color.RGBA{R: 0x2e, G: 0x7d, B: 0x32, A: 0xff} // green
	colorTg = color.RGBA{R: 0x80, G: 0x80, B: 0x80, A: 0xff} // targets, capacity
)

const chartW, chartH = 18 * vg.Centimeter, 8 * vg.Centimeter

func newPlot(title, x, y string) *plot.Plot {
	p := plot.New()
	p.Title.Text = title
	p.X.Label.Text = x
	p.Y.Label.Text = y
	p.X.Min = 0
	p.X.Tick.Marker = linearTicks{}
	p.Y.Tick.Marker = linearTicks{}
	p.Legend.Top = true
	p.Add(plotter.NewGrid())
	return p
}

func xys(pts []point) plotter.XYs {
	out := make(plotter.XYs, len(pts))
	for i, p := range pts {
		out[i].X, out[i].Y = p.x, p.y
	}
	return out
}

// addLine draws pts as one line in the legend under name.
func addLine(p *plot.Plot, name string, pts []point, c color.Color, dashed bool) error {
	if len(pts) == 0 {
		return nil
	}
	l, err := plotter.NewLine(xys(pts))
	if err != nil {
		return err
	}
	l.Color, l.Width = c, vg.Points(1.5)
	if dashed {
		l.Dashes = []vg.Length{vg.Points(4), vg.Points(3)}
	}
	p.Add(l)
	if name != "" {
		p.Legend.Add(name, l)
	}
	return nil
}

// svgOf renders p as an SVG element, without the XML prolog, ready to sit
// inside an HTML page.
func svgOf(p *plot.Plot) (string, error) {
	wt, err := p.WriterTo(chartW, chartH, "svg")
	if err != nil {
		return "", err
	}
	var buf bytes.Buffer
	if _, err := wt.WriteTo(&buf); err != nil {
		return "", err
	}
	s := buf.String()
	i := strings.Index(s, "<svg")
	if i < 0 {
		return "", fmt.Errorf("the plot wrote no <svg> element")
	}
	return s[i:], nil
}

// lineChart: fans waiting and sessions active, and passes given, per second.
func lineChart(series []secondSample, admitted []point) (string, error) {
	p := newPlot("The line", "seconds from the start", "fans")
	waiting, active := lineSeries(series)
	for _, l := range []struct {
		name string
		pts  []point
		c    color.Color
	}{{"waiting", waiting, colorA}, {"active sessions", active, colorB}, {"admitted in the second", admitted, colorC}} {
		if err := addLine(p, l.name, l.pts, l.c, false); err != nil {
			return "", err
		}
	}
	p.Y.Min = 0
	return svgOf(p)
}

// latencyChart: p50 (dashed) and p99 of join, poll and shop over time, on
// a log scale, with the 50 ms target.
func latencyChart(wins []latencyWindow, window time.Duration) (string, error) {
	p := newPlot(fmt.Sprintf("Latency, %v windows", window), "seconds from the start", "milliseconds (log scale)")
	p.Y.Scale = plot.LogScale{}
	p.Y.Tick.Marker = ticks125{}
	const floor = 0.05 // ms: a log scale has no zero
	names := [3]string{"join", "poll", "shop"}
	colors := [3]color.Color{colorA, colorB, colorC}
	last := 0.0
	for g := range 3 {
		for q, pick := range []func(latencyWindow) time.Duration{
			func(w latencyWindow) time.Duration { return w.p99[g] },
			func(w latencyWindow) time.Duration { return w.p50[g] },
		} {
			// A window without a request of the group breaks the line.
			var run []point
			named := false
			flush := func() error {
				name := ""
				if !named && len(run) > 0 {
					name = names[g] + [2]string{" p99", " p50"}[q]
					named = true
				}
				err := addLine(p, name, run, colors[g], q == 1)
				run = nil
				return err
			}
			for _, w := range wins {
				d := pick(w)
				if d < 0 {
					if err := flush(); err != nil {
						return "", err
					}
					continue
				}
				x := w.from.Seconds()
				last = max(last, x)
				run = append(run, point{x, max(floor, float64(d)/float64(time.Millisecond))})
			}
			if err := flush(); err != nil {
				return "", err
			}
		}
	}
	target := float64(p99Target / time.Millisecond)
	if err := addLine(p, "target (p99)", []point{{0, target}, {max(last, 1), target}}, colorTg, true); err != nil {
		return "", err
	}
	return svgOf(p)
}

// soldChart: the sell-out curve, against the venue's capacity.
func soldChart(sold []point, capacity int, end time.Duration) (string, error) {
	p := newPlot("Places sold", "seconds from the start", "places")
	if err := addLine(p, "sold", sold, colorA, false); err != nil {
		return "", err
	}
	right := max(end.Seconds(), sold[len(sold)-1].x, 1)
	if err := addLine(p, "capacity", []point{{0, float64(capacity)}, {right, float64(capacity)}}, colorTg, true); err != nil {
		return "", err
	}
	p.Y.Min = 0
	return svgOf(p)
}

// maxFIFOPoints bounds the FIFO chart's points: beyond it, every k-th
// admission is drawn (in time order), which keeps the shape.
const maxFIFOPoints = 20_000

// fifoChart: each admitted fan's order key against when its pass arrived.
func fifoChart(pts []point) (string, int, error) {
	shown := pts
	if len(pts) > maxFIFOPoints {
		k := (len(pts) + maxFIFOPoints - 1) / maxFIFOPoints
		shown = nil
		for i := 0; i < len(pts); i += k {
			shown = append(shown, pts[i])
		}
	}
	p := newPlot("Order of admission", "pass received, seconds from the start", "order key")
	if len(shown) > 0 {
		s, err := plotter.NewScatter(xys(shown))
		if err != nil {
			return "", 0, err
		}
		s.GlyphStyle = draw.GlyphStyle{Color: colorB, Radius: vg.Points(1), Shape: draw.CircleGlyph{}}
		p.Add(s)
	}
	p.Y.Min = 0
	svg, err := svgOf(p)
	return svg, len(shown), err
}

// ticks125 marks a log scale at 1, 2 and 5 times each power of ten, so that
// a range within one decade (2 to 60 ms, say) still reads.
type ticks125 struct{}

func (ticks125) Ticks(lo, hi float64) []plot.Tick {
	var out []plot.Tick
	for e := math.Floor(math.Log10(lo)); e <= math.Ceil(math.Log10(hi)); e++ {
		for _, m := range []float64{1, 2, 5} {
			v := m * math.Pow(10, e)
			if v >= lo && v <= hi {
				out = append(out, plot.Tick{Value: v, Label: strconv.FormatFloat(v, 'g', -1, 64)})
			}
		}
	}
	return out
}

// linearTicks marks an axis every 1, 2 or 5 times a power of ten, five to
// ten marks in all, labelled without needless decimals.
type linearTicks struct{}

func (linearTicks) Ticks(lo, hi float64) []plot.Tick {
	if hi <= lo {
		return []plot.Tick{{Value: lo, Label: strconv.FormatFloat(lo, 'g', -1, 64)}}
	}
	raw := (hi - lo) / 5
	pow := math.Pow(10, math.Floor(math.Log10(raw)))
	step := pow
	for _, m := range []float64{1, 2, 5, 10} {
		if m*pow >= raw {
			step = m * pow
			break
		}
	}
	var out []plot.Tick
	for v := math.Ceil(lo/step) * step; v <= hi+step/1e9; v += step {
		out = append(out, plot.Tick{Value: v, Label: strconv.FormatFloat(v, 'g', -1, 64)})
	}
	return out
}
