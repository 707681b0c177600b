package rehearsal

import (
	"context"
	"os"
	"regexp"
	"strconv"
	"strings"
	"testing"
)

// TestRehearsalCalibrationScenario plays the scenario "calibration of the
// outcome" small, on the real servers: 210 fans for 70 places, the booking
// service reporting what is left to sell, every status answer's outcome
// recorded. The verdict holds: at least 90% of the fans told unlikely got no
// tickets, none was served after unlikely without at risk between (but for
// a rise of the supply), the fairness report's calibration adds up, and its
// count of what each place was told equals the fans' own; the report carries
// the table and the chart.
func TestRehearsalCalibrationScenario(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and starts the servers")
	}
	c := smallSale(t)
	c.Fans, c.Seats = 210, 70
	c.Calibration = true
	// A line that moves while the supply is measured: 210 fans arriving
	// over 3 s, let in at 20 a second.
	c.Stack.Rate = 1200
	html := playForReport(t, c)
	if !strings.Contains(html, `<figure id="chart-told">`) || !strings.Contains(html, `<table id="calibration">`) {
		t.Fatal("the report has no calibration table or chart")
	}
	cell := func(row string) string { return rowValue(t, html, row) }
	n, err := strconv.Atoi(cell("fans told an outcome"))
	if err != nil || n < c.Fans/2 {
		t.Fatalf("%s fans told an outcome, want most of %d: the status carried none", cell("fans told an outcome"), c.Fans)
	}
	if told := cell("told unlikely (got tickets)"); strings.HasPrefix(told, "0 ") {
		t.Fatalf("no fan was told unlikely (%s): the scenario judged nothing", told)
	}
	if !strings.HasPrefix(cell("fairness report adds up"), "met") {
		t.Fatalf("the fairness report's calibration: %s", cell("fairness report adds up"))
	}
	if eq := cell("fairness report equals the count of fans"); !strings.HasPrefix(eq, "met") {
		t.Fatalf("the fairness report's count of places told: %s", eq)
	}
	t.Logf("likely %s, at risk %s, unlikely %s; %s; %s", cell("told likely (got tickets)"), cell("told at risk (got tickets)"),
		cell("told unlikely (got tickets)"), cell("told unlikely and not served"), cell("served after unlikely without at risk"))
}

// rowValue is the value of a report table's row, by its name (as the HTML
// writes it); a row missing fails the test.
func rowValue(t *testing.T, html, row string) string {
	t.Helper()
	m := regexp.MustCompile(`<th scope="row">` + regexp.QuoteMeta(row) + `</th><td>([^<]*)</td>`).FindStringSubmatch(html)
	if m == nil {
		t.Fatalf("no row %q in the report", row)
	}
	return m[1]
}

// playForReport plays the sale c and returns its HTML report; a verdict
// that fails fails the test.
func playForReport(t *testing.T, c Config) string {
	t.Helper()
	if err := Run(context.Background(), c, nil); err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(c.Report)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}
