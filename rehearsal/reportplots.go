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
	colorBd = color.RGBA{R: 0xc6, G: 0xdb, B: 0xef, A: 0xff} // a band around colorB
	// colorFrame frames the legend.
	colorFrame = color.RGBA{R: 0xb0, G: 0xb0, B: 0xb0, A: 0xff}
)

const chartW, chartH = 18 * vg.Centimeter, 8 * vg.Centimeter

// legendColumn is the least width of the legend's column beside a chart.
const legendColumn = 5 * vg.Centimeter

func newPlot(title, x, y string) *plot.Plot {
	p := plot.New()
	p.Title.Text = title
	p.X.Label.Text = x
	p.Y.Label.Text = y
	p.X.Min = 0
	p.X.Tick.Marker = linearTicks{}
	p.Y.Tick.Marker = linearTicks{}
	p.Legend.Padding = vg.Points(2)
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
// inside an HTML page. The legend stands in a column of its own right of
// the axes, level with the top of the data, on white with a thin frame:
// gonum/plot draws it inside the data area, where it covered the very
// lines it names (the waiting fans' peak, the latency at the start).
func svgOf(p *plot.Plot) (string, error) {
	c, err := draw.NewFormattedCanvas(chartW, chartH, "svg")
	if err != nil {
		return "", err
	}
	dc := draw.New(c)
	dc.SetColor(color.White)
	dc.Fill(dc.Rectangle.Path())
	legend := p.Legend
	p.Legend = plot.NewLegend() // none inside the data; restored below
	defer func() { p.Legend = legend }()
	plotC, frame, ok := chartLayout(dc, p, &legend)
	p.Draw(plotC)
	if ok {
		dc.SetColor(color.White)
		dc.Fill(frame.Path())
		dc.SetLineStyle(draw.LineStyle{Color: colorFrame, Width: vg.Points(0.5)})
		dc.Stroke(frame.Path())
		legend.Top, legend.Left = true, true
		legend.Draw(draw.Canvas{Canvas: dc.Canvas, Rectangle: vg.Rectangle{
			Min: vg.Point{X: frame.Min.X + legendPad, Y: frame.Min.Y + legendPad},
			Max: vg.Point{X: frame.Max.X - legendPad, Y: frame.Max.Y - legendPad},
		}})
	}
	var buf bytes.Buffer
	if _, err := c.WriteTo(&buf); err != nil {
		return "", err
	}
	s := buf.String()
	i := strings.Index(s, "<svg")
	if i < 0 {
		return "", fmt.Errorf("the plot wrote no <svg> element")
	}
	return s[i:], nil
}

// legendPad is the room inside the legend's frame; legendGap the room
// between the chart and the frame.
const legendPad, legendGap = vg.Length(4), vg.Length(8)

// chartLayout splits a chart's canvas: the plot's part, and the legend's
// frame in a column of its own at the right, level with the top of the
// data. ok is false when the legend has no entry; the plot then has it all.
func chartLayout(dc draw.Canvas, p *plot.Plot, legend *plot.Legend) (plotC draw.Canvas, frame vg.Rectangle, ok bool) {
	size := legend.Rectangle(dc).Size()
	if size.X <= 0 {
		return dc, vg.Rectangle{}, false
	}
	// One width for every chart's column, unless a legend needs more,
	// so that the charts' axes line up down the page.
	col := max(size.X+2*legendPad, legendColumn)
	plotC = draw.Crop(dc, 0, -(col + legendGap), 0, 0)
	top := dc.Max.Y
	if p.Title.Text != "" {
		top -= p.Title.TextStyle.Rectangle(p.Title.Text).Size().Y + p.Title.Padding
	}
	edge := vg.Points(0.5) // the frame's stroke stays on the canvas
	frame = vg.Rectangle{
		Min: vg.Point{X: dc.Max.X - col, Y: top - size.Y - 2*legendPad - legend.TextStyle.FontExtents().Descent},
		Max: vg.Point{X: dc.Max.X - edge, Y: top - edge},
	}
	return plotC, frame, true
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

// fifoChart: how far each admitted fan's pass came from their turn, by
// place in line, in groups of neighbours (see turnGroups): the median of
// each group, and the band of its middle 90%. A scatter of order key
// against the pass's arrival was a cloud: the fans let in at one step learn
// of it at their next polls, seconds apart, so every step drew a smear and
// no line could be read in them. Here a line kept in order is a median on
// 0, and the band's width is that polling granularity, in places.
func fifoChart(groups []turnGroup) (string, error) {
	p := newPlot("Order of admission", "place in line (order key, 0 = first admitted)", "pass order − place (places)")
	if len(groups) > 0 {
		var median, band plotter.XYs
		for _, g := range groups {
			x := float64(g.from+g.to-1) / 2
			median = append(median, plotter.XY{X: x, Y: g.median})
			band = append(band, plotter.XY{X: x, Y: g.hi})
		}
		for i := len(groups) - 1; i >= 0; i-- {
			band = append(band, plotter.XY{X: float64(groups[i].from+groups[i].to-1) / 2, Y: groups[i].lo})
		}
		poly, err := plotter.NewPolygon(band)
		if err != nil {
			return "", err
		}
		poly.Color, poly.LineStyle.Width = colorBd, 0
		p.Add(poly)
		p.Legend.Add("middle 90% of a group", poly)
		// The line of 0 goes under the median, which it would hide where
		// the line is kept in order, yet after it in the legend.
		last := float64(groups[len(groups)-1].to - 1)
		if err := addLine(p, "", []point{{0, 0}, {max(last, 1), 0}}, colorTg, true); err != nil {
			return "", err
		}
		if err := addLine(p, "median of a group", pointsOf(median), colorB, false); err != nil {
			return "", err
		}
		turn, err := plotter.NewLine(plotter.XYs{{X: 0, Y: 0}, {X: 1, Y: 0}})
		if err != nil {
			return "", err
		}
		turn.Color, turn.Width, turn.Dashes = colorTg, vg.Points(1.5), []vg.Length{vg.Points(4), vg.Points(3)}
		p.Legend.Add("in turn", turn)
	}
	return svgOf(p)
}

func pointsOf(xy plotter.XYs) []point {
	out := make([]point, len(xy))
	for i, v := range xy {
		out[i] = point{v.X, v.Y}
	}
	return out
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
