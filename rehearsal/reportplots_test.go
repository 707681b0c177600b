package rehearsal

import (
	"testing"

	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
)

// TestLegendStandsOutsideTheData: a chart's legend is framed in a column
// of its own, right of the plot and within the chart, so it never covers a
// line, however many entries it has; and the columns are one width, so the
// charts' axes line up down the report.
func TestLegendStandsOutsideTheData(t *testing.T) {
	var rights []vg.Length
	for _, names := range [][]string{
		{"sold", "capacity"},
		{"waiting", "active sessions", "admitted in the second"},
		{"join p99", "join p50", "poll p99", "poll p50", "shop p99", "shop p50", "target (p99)"},
		{"middle 90% of a group", "median of a group", "in turn"},
	} {
		p := newPlot("A chart", "x", "y")
		for i, name := range names {
			if err := addLine(p, name, []point{{0, float64(i)}, {10, float64(i + 1)}}, colorA, false); err != nil {
				t.Fatal(err)
			}
		}
		c, err := draw.NewFormattedCanvas(chartW, chartH, "svg")
		if err != nil {
			t.Fatal(err)
		}
		dc := draw.New(c)
		plotC, frame, ok := chartLayout(dc, p, &p.Legend)
		if !ok {
			t.Fatalf("%v: no legend", names)
		}
		data := p.DataCanvas(plotC).Rectangle
		if frame.Min.X <= data.Max.X || frame.Min.X <= plotC.Max.X {
			t.Errorf("%v: the legend's frame starts at x=%v, within the plot (data to %v, plot to %v)", names, frame.Min.X, data.Max.X, plotC.Max.X)
		}
		if frame.Max.X > dc.Max.X || frame.Max.Y > dc.Max.Y || frame.Min.Y < dc.Min.Y || frame.Min.Y >= frame.Max.Y {
			t.Errorf("%v: the legend's frame %v is not within the chart %v", names, frame, dc.Rectangle)
		}
		rights = append(rights, plotC.Max.X)
	}
	for _, r := range rights[1:] {
		if r != rights[0] {
			t.Errorf("the plots end at %v: the charts' axes do not line up", rights)
			break
		}
	}

	// A chart without a legend keeps the whole width.
	p := newPlot("A chart", "x", "y")
	c, _ := draw.NewFormattedCanvas(chartW, chartH, "svg")
	if plotC, _, ok := chartLayout(draw.New(c), p, &p.Legend); ok || plotC.Max.X != chartW {
		t.Errorf("no legend: a column of %v was kept", chartW-plotC.Max.X)
	}
}
