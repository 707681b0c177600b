package bench

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"regexp"
	"runtime"
	"strconv"
	"strings"
	"time"
)

// NumbersOptions are what the Numbers table of docs/benchmarks.md is measured with.
type NumbersOptions struct {
	Own      Options       // our generator's rounds
	Wrk      WrkOptions    // wrk's rounds
	Redis    RedisOptions  // the round-trip count
	RedisURL string        // the Redis store for the joins on Redis
	GoTest   time.Duration // bound on each `go test -bench` run
}

// Row is one line of the Numbers table.
type Row struct {
	Path, Target, Measured, Generator, Command string
}

// Numbers measures every figure of the Numbers table (docs/benchmarks.md) in one run and
// returns the rows, in the table's order. wrk's rows come first for each
// path: it is a generator we did not write, so its figures are the
// authoritative ones (see docs/benchmarks.md); ours are beside them as a check.
func Numbers(o NumbersOptions) ([]Row, error) {
	own := fmt.Sprintf("onsale, %d conns, %d×%gs rounds", o.Own.Conns, o.Own.Rounds, o.Own.RoundSecs)
	wrk := fmt.Sprintf("wrk, %d threads, %d conns, %d×%s rounds", o.Wrk.Threads, o.Wrk.Conns, o.Wrk.Rounds, o.Wrk.Round)
	o.Wrk.RedisURL = o.RedisURL
	w, err := Wrk(o.Wrk)
	if err != nil {
		return nil, err
	}
	proxy, err := Proxy(o.Own, 1000)
	if err != nil {
		return nil, fmt.Errorf("proxy: %w", err)
	}
	poll, err := Poll(o.Own, "", 2000)
	if err != nil {
		return nil, fmt.Errorf("poll: %w", err)
	}
	join, err := Join(o.Own, "")
	if err != nil {
		return nil, fmt.Errorf("join: %w", err)
	}
	joinRedis, err := Join(o.Own, o.RedisURL)
	if err != nil {
		return nil, fmt.Errorf("join on Redis: %w", err)
	}
	refuse, err := Refuse(o.Own)
	if err != nil {
		return nil, fmt.Errorf("refuse: %w", err)
	}
	challenge, err := Challenge(o.Own)
	if err != nil {
		return nil, fmt.Errorf("challenge: %w", err)
	}
	trips, err := Redis(o.Redis)
	if err != nil {
		return nil, fmt.Errorf("redis: %w", err)
	}
	// The figures `go test -bench` measures, by benchmark name.
	gb := make(map[string]map[string]float64)
	for _, b := range []struct{ pkg, name, benchtime string }{
		{"./waitingroom/redisstore/", "MemoryPerWaitingFan", "1x"},
		{"./waitingroom/redisstore/", "MemoryPerAccount", "1x"},
		{"./waitingroom/clientlimit/", "MemoryPerClient", "1x"},
		{"./waitingroom/", "PoWVerify", "1s"},
		{"./booking/pgstore/", "BestAvailable", "10x"},
		{"./booking/pgstore/", "ZoneSales", "10x"},
	} {
		if gb[b.name], err = goBench(o.GoTest, b.pkg, b.name, b.benchtime); err != nil {
			return nil, err
		}
	}
	mem, acct, perClient := gb["MemoryPerWaitingFan"], gb["MemoryPerAccount"], gb["MemoryPerClient"]
	verify, best, zones := gb["PoWVerify"], gb["BestAvailable"], gb["ZoneSales"]

	scale, err := Scale(ScaleOptions{Sizes: []uint64{1e4, 1e6, 1e7}})
	if err != nil {
		return nil, fmt.Errorf("scale: %w", err)
	}

	wrkCmd := fmt.Sprintf("`bin/onsale bench wrk -rounds %d -round %s -only %%s`", o.Wrk.Rounds, o.Wrk.Round)
	rows := []Row{
		{"admitted request through Foyer vs bare `reverse_proxy` without Foyer's cookies (what a fan pays for the room)", "≥ 0.97×, p99 ≤ 1.1×", ratioCell(w["admitted"], 0), wrk, fmt.Sprintf(wrkCmd, "admitted")},
		{"admitted request vs bare `reverse_proxy` given the same cookies (the room's own work)", "≥ 0.97×", ratioCell(w["admitted"], 1), wrk, fmt.Sprintf(wrkCmd, "admitted")},
		{"bare `reverse_proxy` given Foyer's cookies vs without them (what the cookie bytes alone cost, no waiting room)", "—", ratioCell(w["admitted"], 2), wrk, fmt.Sprintf(wrkCmd, "admitted")},
		{"admitted request vs bare `reverse_proxy`, same cookies", "≥ 0.95×, p99 ≤ 1.2×", ratioCell([]Ratio{proxy}, 0), own, "`bin/onsale bench proxy`"},
		{"status poll vs Caddy `respond` without cookies", "≥ 0.95×, p99 ≤ 1.2×", ratioCell(w["poll"], 0), wrk, fmt.Sprintf(wrkCmd, "poll")},
		{"status poll vs Caddy `respond`, same cookies", "≥ 0.95×", ratioCell(w["poll"], 1), wrk, fmt.Sprintf(wrkCmd, "poll")},
		{"status poll vs Caddy `respond`, same cookies", "≥ 0.9×", ratioCell([]Ratio{poll}, 0), own, "`bin/onsale bench poll`"},
		{"join vs Caddy `respond`, memory store", "≥ 0.5×", ratioCell(w["join"], 0), wrk, fmt.Sprintf(wrkCmd, "join")},
		{"join vs Caddy `respond`, memory store", "≥ 0.5×", ratioCell([]Ratio{join}, 0), own, "`bin/onsale bench join`"},
		{"join vs Caddy `respond`, Redis store", "≥ 0.8×", ratioCell(w["join-redis"], 0), wrk, fmt.Sprintf(wrkCmd, "join-redis") + " `-store redis://127.0.0.1:6379`"},
		{"join vs Caddy `respond`, Redis store", "≥ 0.8×", ratioCell([]Ratio{joinRedis}, 0), own, "`bin/onsale bench join -store redis://127.0.0.1:6379`"},
		{"join refused by `join_limit` (429) vs Caddy `respond` 429 of the same size", "≥ 0.9×", ratioCell([]Ratio{refuse}, 0), own, "`bin/onsale bench refuse`"},
		{"memory per client address `join_limit` tracks, 131,072 addresses", "bounded: at most 65,536 per room per node",
			fmt.Sprintf("**%s B** (a plain map of `rate.Limiter`s: %s B, unbounded)", metric(perClient, "B/client", "%.0f"), metric(perClient, "B/client-plain-map", "%.0f")),
			"Go heap before and after", "`go test -bench MemoryPerClient ./waitingroom/clientlimit`"},
		{"a newcomer handed a proof-of-work seed (`challenge pow`) vs Caddy `respond`", "≥ 0.9×", ratioCell([]Ratio{challenge}, 0), own, "`bin/onsale bench challenge`"},
		{"checking a right proof-of-work answer vs opening a ticket (what a poll pays)", "≤ 2×",
			fmt.Sprintf("**%s×** (%s ns a check)", metric(verify, "verify/open-ticket", "%.2f"), metric(verify, "ns/verify", "%.0f")),
			"go test, alternating blocks of 256", "`go test -bench PoWVerify ./waitingroom`"},
		{"Redis round trips per join / poll / admitted request", "≤ 1 / 0 / 0",
			fmt.Sprintf("**%s** / **%s** / **%s**", strings.TrimSpace(figure(trips["join"])), strings.TrimSpace(figure(trips["status poll"])), strings.TrimSpace(figure(trips["admitted request"]))),
			fmt.Sprintf("INFO commandstats, %d requests of each kind over %d conns", o.Redis.N, o.Redis.Conns), "`bin/onsale bench redis`"},
		{"Redis memory per waiting fan, after 100,000 joins", "≤ 2 B",
			fmt.Sprintf("**%s B** (one sorted-set member per fan: %s B)", metric(mem, "bytes/fan", "%.4f"), metric(mem, "zset-bytes/fan", "%.0f")),
			"INFO memory before and after", "`go test -bench MemoryPerWaitingFan ./waitingroom/redisstore`"},
		{"Redis memory per account with the account block, after 100,000 accounts joined", "≤ 64 B",
			fmt.Sprintf("**%s B** (`MEMORY USAGE` of the buckets: %s B; %s× of one plain hash)", metric(acct, "bytes/account", "%.0f"), metric(acct, "usage-bytes/account", "%.0f"), metric(acct, "x-of-one-hash", "%.2f")),
			"INFO memory before and after", "`go test -bench MemoryPerAccount ./waitingroom/redisstore`"},
		{"controller step on a line of 10⁴ / 10⁶ / 10⁷ places (Redis store, joins through `JoinMany` at full speed, the live counts covering the whole line)", "flat",
			scaleCell(scale, func(p ScalePoint) string { return fmt.Sprintf("%.0f", p.StepUs) }, " µs") +
				"; Redis commands " + scaleCell(scale, func(p ScalePoint) string { return fmt.Sprintf("%.0f", p.StepCalls) }, "") + ", 1 round trip",
			"wall time (median of 20 steps) and INFO commandstats", "`bin/onsale bench scale`"},
		{"status poll of the fan at the last place, 10⁴ / 10⁶ / 10⁷ places; their position and ETA against the bench's count of live places ahead", "flat; right",
			scaleCell(scale, func(p ScalePoint) string { return fmt.Sprintf("%.0f", p.PollNs) }, " ns") + "; " + scaleTailCell(scale),
			"`Room.Peek`, median of 5 rounds of 40,000 polls", "`bin/onsale bench scale`"},
		{"Redis memory of the room, 10⁴ / 10⁶ / 10⁷ places (a few thousand polling)", "flat",
			scaleCell(scale, func(p ScalePoint) string { return fmt.Sprintf("%d", p.KeyBytes) }, " B"),
			"MEMORY USAGE of every key", "`bin/onsale bench scale`"},
		{"best-available holds, 64 shoppers vs 1, one section (PostgreSQL)", "≥ 1.0×",
			fmt.Sprintf("**%s×** (16 shoppers: %s×)", metric(best, "64-vs-1", "%.2f"), metric(best, "16-vs-1", "%.2f")),
			"go test, 10 rounds of 256 holds", "`go test -bench BestAvailable ./booking/pgstore`"},
		{"standing-zone sales, counters on 8 rows vs 1 (PostgreSQL)", "faster",
			fmt.Sprintf("**%s×**", metric(zones, "8-rows-vs-1", "%.2f")),
			"go test, 10 rounds of 256 sales", "`go test -bench ZoneSales ./booking/pgstore`"},
	}
	return rows, nil
}

// scaleCell is one figure of each size of line, "**a / b / c** unit".
func scaleCell(ps []ScalePoint, f func(ScalePoint) string, unit string) string {
	var parts []string
	for _, p := range ps {
		parts = append(parts, f(p))
	}
	return "**" + strings.Join(parts, " / ") + "**" + unit
}

// scaleTailCell says how the last fan's status compared, on the longest line.
func scaleTailCell(ps []ScalePoint) string {
	if len(ps) == 0 {
		return ""
	}
	t := ps[len(ps)-1].Last
	return fmt.Sprintf("at place %d: %s, %d ahead (counted: %d±%d), ETA %d s (computed: %d s)",
		t.Place, t.State, t.Position, t.Expect, t.Slack, t.ETA, t.ExpectETA)
}

// ratioCell is a ratio as the table shows it: the median in bold, its
// spread over the paired rounds, and the same for p99.
func ratioCell(rs []Ratio, i int) string {
	if i >= len(rs) {
		return "not measured"
	}
	r := rs[i]
	return fmt.Sprintf("**%.2f×** (%.2f–%.2f), p99 %.2f× (%.2f–%.2f)",
		r.Throughput, r.ThroughputLow, r.ThroughputHigh, r.P99, r.P99Low, r.P99High)
}

var benchMetric = regexp.MustCompile(`([0-9.]+(?:e[-+]?[0-9]+)?) ([^\s]+)`)

// goBench runs one benchmark with go test and returns its reported metrics
// by unit.
func goBench(bound time.Duration, pkg, name, benchtime string) (map[string]float64, error) {
	ctx, cancel := context.WithTimeout(context.Background(), bound)
	defer cancel()
	cmd := exec.CommandContext(ctx, "go", "test", "-run", "^$", "-bench", "^Benchmark"+name+"$", "-benchtime", benchtime, "-count", "1", pkg)
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	if err := cmd.Run(); err != nil {
		return nil, fmt.Errorf("go test -bench %s %s: %v\n%s", name, pkg, err, out.String())
	}
	fmt.Print(out.String())
	return parseBenchLine(out.String(), name)
}

// parseBenchLine reads the metrics of a benchmark's result line.
func parseBenchLine(out, name string) (map[string]float64, error) {
	for _, line := range strings.Split(out, "\n") {
		if !strings.HasPrefix(line, "Benchmark"+name) {
			continue
		}
		fields := strings.SplitN(line, "\t", 3)
		if len(fields) < 3 {
			continue
		}
		m := map[string]float64{}
		for _, kv := range benchMetric.FindAllStringSubmatch(fields[2], -1) {
			v, err := strconv.ParseFloat(kv[1], 64)
			if err == nil {
				m[kv[2]] = v
			}
		}
		return m, nil
	}
	return nil, fmt.Errorf("no result line for Benchmark%s in:\n%s", name, out)
}

func metric(m map[string]float64, unit, format string) string {
	v, ok := m[unit]
	if !ok {
		return "?"
	}
	return fmt.Sprintf(format, v)
}

// Machine describes where the figures were measured.
func Machine() string {
	model := "unknown CPU"
	if b, err := os.ReadFile("/proc/cpuinfo"); err == nil {
		for _, line := range strings.Split(string(b), "\n") {
			if k, v, ok := strings.Cut(line, ":"); ok && strings.TrimSpace(k) == "model name" {
				model = strings.TrimSpace(v)
				break
			}
		}
	}
	return fmt.Sprintf("%d cores (%s), %s/%s, %s", runtime.NumCPU(), model, runtime.GOOS, runtime.GOARCH, runtime.Version())
}

// Table renders the rows as the Numbers table of docs/benchmarks.md, with when and where
// they were measured.
func Table(rows []Row, when time.Time) string {
	var b strings.Builder
	fmt.Fprintf(&b, "Measured %s on %s, load generators, Caddy, Redis and PostgreSQL all sharing it, by `make bench`.\n\n",
		when.UTC().Format("2006-01-02"), Machine())
	b.WriteString("| path | target | measured: median (lowest–highest) | generator | command |\n|---|---|---|---|---|\n")
	for _, r := range rows {
		fmt.Fprintf(&b, "| %s | %s | %s | %s | %s |\n", r.Path, r.Target, r.Measured, r.Generator, r.Command)
	}
	return b.String()
}

// Between these markers of docs/benchmarks.md, the table make bench writes.
const (
	numbersBegin = "<!-- numbers:begin -->"
	numbersEnd   = "<!-- numbers:end -->"
)

// WriteDoc replaces the Numbers table of the Markdown file at path
// (docs/benchmarks.md for make bench).
func WriteDoc(path, table string) error {
	b, err := os.ReadFile(path)
	if err != nil {
		return err
	}
	s := string(b)
	i, j := strings.Index(s, numbersBegin), strings.Index(s, numbersEnd)
	if i < 0 || j < i {
		return fmt.Errorf("%s has no %s ... %s markers", path, numbersBegin, numbersEnd)
	}
	s = s[:i+len(numbersBegin)] + "\n" + table + s[j:]
	return os.WriteFile(path, []byte(s), 0o644)
}
