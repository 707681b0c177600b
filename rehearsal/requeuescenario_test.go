package rehearsal

import (
	"regexp"
	"strings"
	"testing"
)

// TestRehearsalRequeueScenario plays the scenario "an origin that fails 2%
// of checkouts" small, on the real servers: 200 fans for 70 places, a
// quarter of the payments failed so that a few fans are, the sale played
// without and then with the booking service's retry, a minute at most each.
// The run with retry requeues the fans the site failed, lets every one in
// again to buy, in the order requeued, sells nothing twice, and no fan the
// site failed ends behind their place: the controller's step lets the
// requeued in first, whether or not their page has asked again
// (docs/rehearsal.md); the report sets the two runs side by side, with the
// chart.
func TestRehearsalRequeueScenario(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and starts the servers")
	}
	c := smallSale(t)
	c.Fans, c.Seats = 200, 70
	c.CompareRequeue, c.FailCheckouts = true, 0.25
	// A line, so that requeued fans have someone to go before: 200 fans
	// arriving over 3 s, let in at 20 a second. The cap stays above the
	// crowd: a fan who gave up keeps their session, as a browser left open
	// does, and under a small cap those would stop the line until -max-time.
	c.Stack.Rate = 1200
	html := playForReport(t, c)
	if n := strings.Count(html, "<svg"); n != 5 {
		t.Fatalf("%d charts in the report, want 5 (the fates' among them)", n)
	}
	if !strings.Contains(html, `<th scope="col">without retry</th><th scope="col">with retry</th>`) {
		t.Fatal("the report does not set the runs without and with retry side by side")
	}
	cell := func(row string) []string {
		m := regexp.MustCompile(`<th scope="row">` + regexp.QuoteMeta(row) + `</th><td class="num[^"]*">([^<]*)</td><td class="num[^"]*">([^<]*)</td>`).FindStringSubmatch(html)
		if m == nil {
			t.Fatalf("no row %q in the fates table", row)
		}
		return m[1:]
	}
	failed, requeued, behind := cell("fans the site failed"), cell("requeued (fans / room&#39;s count)"), cell("ended behind their place (most passed by)")
	again, bought := cell("let in again"), cell("got tickets")
	if failed[1] == "0" {
		t.Fatal("with retry, the site failed no fan: the scenario exercised nothing")
	}
	if strings.HasPrefix(requeued[1], "0 ") {
		t.Fatalf("with retry, %s fans failed and none requeued (%s)", failed[1], requeued[1])
	}
	if n := strings.Fields(requeued[1])[0]; again[1] != n || bought[1] != n {
		t.Fatalf("with retry: %s requeued, %s let in again, %s got tickets; want every one", n, again[1], bought[1])
	}
	if cell("oversold")[1] != "0" || cell("requeued let in out of the order requeued")[1] != "0" {
		t.Fatalf("with retry: oversold %s, out of the order requeued %s", cell("oversold")[1], cell("requeued let in out of the order requeued")[1])
	}
	if behind[1] != "0 (0)" {
		t.Fatalf("with retry: %s fans the site failed ended behind their place, want 0 (0)", behind[1])
	}
	if !strings.Contains(html, "0 failed fans behind their place</th><td>met") {
		t.Fatal("the report's targets do not say the failed fans kept their place")
	}
	t.Logf("failed %v, requeued %v, behind %v (without, with retry)", failed, requeued, behind)
}
