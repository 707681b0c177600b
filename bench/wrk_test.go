package bench

import (
	"os"
	"strings"
	"testing"
	"time"
)

// A report as wrk 4.1 prints it with --latency, answers refused by the server
// included.
const wrkReport = `Running 1s test @ http://127.0.0.1:18777/nope
  1 threads and 2 connections
  Thread Stats   Avg      Stdev     Max   +/- Stdev
    Latency     1.56ms    1.52ms   9.85ms   85.57%
    Req/Sec     1.50k   157.45     1.74k    80.00%
  Latency Distribution
     50%    0.89ms
     75%    2.07ms
     90%    3.65ms
     99%    7.76ms
  1490 requests in 1.00s, 756.82KB read
  Socket errors: connect 0, read 2, write 0, timeout 1
  Non-2xx or 3xx responses: 1490
Requests/sec:   1484.09
Transfer/sec:    753.82KB
`

func TestParseWrk(t *testing.T) {
	r, err := parseWrk(wrkReport)
	if err != nil {
		t.Fatal(err)
	}
	want := wrkResult{rps: 1484.09, p99: 7760 * time.Microsecond, non2xx: 1490, errors: 3, seconds: 1}
	if r != want {
		t.Errorf("parseWrk = %+v, want %+v", r, want)
	}
	if _, err := parseWrk("Running 1s test\n  Latency Distribution\n"); err == nil {
		t.Error("a report without Requests/sec parsed")
	}
	if p, _ := parseWrk("     99%  312.00us\nRequests/sec: 10.0\n"); p.p99 != 312*time.Microsecond {
		t.Errorf("p99 in microseconds = %s", p.p99)
	}
}

func TestRunWrkRefusesAnythingButLoopback(t *testing.T) {
	_, err := runWrk(WrkOptions{Wrk: "true", Threads: 1, Conns: 1}, wrkTarget{name: "x", url: "http://example.com/"}, time.Second)
	if err == nil {
		t.Fatal("wrk would have loaded a host off loopback")
	}
}

func TestParseBenchLine(t *testing.T) {
	out := "goos: linux\nBenchmarkBestAvailable-2   \t      10\t 123456 ns/op\t      1534 holds/s@1\t      2860 holds/s@16\t 1.864 64-vs-1\t 1.75 16-vs-1\nPASS\n"
	m, err := parseBenchLine(out, "BestAvailable")
	if err != nil {
		t.Fatal(err)
	}
	if m["64-vs-1"] != 1.864 || m["holds/s@16"] != 2860 || m["ns/op"] != 123456 {
		t.Errorf("metrics %v", m)
	}
	if _, err := parseBenchLine("PASS\n", "BestAvailable"); err == nil {
		t.Error("no result line parsed")
	}
}

func TestWriteDocReplacesOnlyTheTable(t *testing.T) {
	path := t.TempDir() + "/benchmarks.md"
	before := "# x\n\n## Numbers\n\n" + numbersBegin + "\nold table\n" + numbersEnd + "\n\nafter\n"
	if err := os.WriteFile(path, []byte(before), 0o644); err != nil {
		t.Fatal(err)
	}
	rows := []Row{{"a path", "≥ 1×", ratioCell([]Ratio{{Throughput: 0.98, ThroughputLow: 0.95, ThroughputHigh: 1.01, P99: 1.02, P99Low: 0.9, P99High: 1.1}}, 0), "wrk", "`x`"}}
	if err := WriteDoc(path, Table(rows, time.Date(2026, 12, 1, 0, 0, 0, 0, time.UTC))); err != nil {
		t.Fatal(err)
	}
	b, _ := os.ReadFile(path)
	got := string(b)
	if strings.Contains(got, "old table") || !strings.HasSuffix(got, numbersEnd+"\n\nafter\n") || !strings.HasPrefix(got, "# x\n\n## Numbers\n\n"+numbersBegin+"\nMeasured 2026-12-01") ||
		!strings.Contains(got, "| a path | ≥ 1× | **0.98×** (0.95–1.01), p99 1.02× (0.90–1.10) | wrk | `x` |") {
		t.Errorf("the page after:\n%s", got)
	}
	if err := WriteDoc(t.TempDir()+"/none.md", "x"); err == nil {
		t.Error("a missing page was written")
	}
}
