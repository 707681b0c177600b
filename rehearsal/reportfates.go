package rehearsal

import (
	"fmt"
	"image/color"

	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
)

// reportFates is the report's section on the fans the site failed
// (docs/rehearsal.md, "An origin that fails 2% of checkouts"): the fates
// table, a column per run, and a chart of where each one ended.
type reportFates struct {
	Columns []string
	Rows    []fateRow
	Chart   *reportChart
}

// fatesSection builds the section, or nil when no checkout was failed on
// purpose.
func (r *rehearsal) fatesSection(v verdictFigures) (*reportFates, error) {
	if !r.failsCheckouts() {
		return nil, nil
	}
	cols := r.fateColumns(v)
	sec := &reportFates{Rows: fateRows(cols)}
	for _, c := range cols {
		name := "with retry"
		if !c.retry {
			name = "without retry"
		}
		sec.Columns = append(sec.Columns, name)
	}
	svg, err := fatesChart(cols)
	if err != nil {
		return nil, fmt.Errorf("fates chart: %w", err)
	}
	summary := ""
	for i, c := range cols {
		if i > 0 {
			summary += "; "
		}
		summary += fmt.Sprintf("%s: %d failed, %d behind their place (passed by at most %d), %d got tickets",
			sec.Columns[i], c.fates.failed, c.fates.behind, c.fates.maxPassedBy, c.fates.bought)
	}
	sec.Chart = &reportChart{ID: "fates",
		Caption: "Fans the site failed: each one's place in line, and how many fans behind them got in first while they were kept out; on 0 they ended no later than they were",
		Summary: summary, SVG: inlineSVG(svg, "fates")}
	return sec, nil
}

// fatesChart: a point per fan the site failed, a series per run.
func fatesChart(cols []fateColumn) (string, error) {
	p := newPlot("Where the fans the site failed ended", "place in line (order key)", "fans behind them let in first")
	p.Y.Min = 0
	shapes := []struct {
		c     color.Color
		shape draw.GlyphDrawer
	}{{colorA, draw.CrossGlyph{}}, {colorB, draw.CircleGlyph{}}}
	for i, c := range cols {
		if len(c.fates.fates) == 0 {
			continue
		}
		xy := make(plotter.XYs, len(c.fates.fates))
		for j, f := range c.fates.fates {
			xy[j] = plotter.XY{X: float64(f.rec.key), Y: float64(f.passedBy)}
		}
		s, err := plotter.NewScatter(xy)
		if err != nil {
			return "", err
		}
		st := shapes[min(i, len(shapes)-1)]
		if c.retry {
			st = shapes[1]
		}
		s.GlyphStyle = draw.GlyphStyle{Color: st.c, Radius: vg.Points(2.5), Shape: st.shape}
		p.Add(s)
		name := "with retry"
		if !c.retry {
			name = "without retry"
		}
		p.Legend.Add(name, s)
	}
	return svgOf(p)
}
