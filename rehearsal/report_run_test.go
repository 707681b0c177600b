package rehearsal

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"
)

// TestRehearsalWritesReport plays a small on-sale on the real servers with
// -report: the report is written, holds its four charts, and its figures
// are those of the verdict it holds.
func TestRehearsalWritesReport(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and starts the servers")
	}
	c := smallSale(t)
	report := c.Report
	if err := Run(context.Background(), c, nil); err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(report)
	if err != nil {
		t.Fatal(err)
	}
	html := string(b)
	if n := strings.Count(html, "<svg"); n != 4 {
		t.Fatalf("%d charts in the report, want 4", n)
	}
	verdict, _, _ := strings.Cut(html[strings.Index(html, "<pre>"):], "</pre>")
	m := regexp.MustCompile(`sold / capacity\s+(\d+ / \d+ places)`).FindStringSubmatch(verdict)
	if m == nil || !strings.Contains(html, `<th scope="row">sold / capacity</th><td>`+m[1]+`</td>`) {
		t.Fatalf("the report's sale is not its verdict's (%v)", m)
	}
	t.Logf("report of %d bytes; %s", len(b), m[1])
}

// smallSale builds the servers into a temporary directory and returns a
// small sale on them: 300 fans for 100 places, a minute at most, its report
// in that directory.
func smallSale(t *testing.T) Config {
	t.Helper()
	dir := t.TempDir()
	bins := map[string]string{"foyer": "../cmd/foyer", "booking": "../cmd/booking"}
	for name, pkg := range bins {
		if out, err := exec.Command("go", "build", "-o", filepath.Join(dir, name), pkg).CombinedOutput(); err != nil {
			t.Fatalf("building %s: %v\n%s", name, err, out)
		}
	}
	return Config{
		Fans: 300, Seats: 100, Arrival: 3 * time.Second, MaxTime: time.Minute, Think: 200 * time.Millisecond,
		Grace: 5 * time.Second, Jitter: 0.2, Abandon: 0.03, Late: 0.01, Workers: 64, Seed: 1, Report: filepath.Join(dir, "out.html"),
		Stack: StackConfig{
			FoyerBin: filepath.Join(dir, "foyer"), BookingBin: filepath.Join(dir, "booking"), Store: "memory",
			Rate: 6000, Cap: 1000, Session: 10 * time.Minute, HoldTTL: 5 * time.Minute,
		},
	}
}
