package bench

import (
	"context"
	"errors"
	"fmt"
	"net/url"
	"os/exec"
	"regexp"
	"strconv"
	"time"
)

// WrkOptions are what the wrk comparison takes. wrk is a load generator we
// did not write: its figures check our own generator's, and they are the
// ones the Numbers table of docs/benchmarks.md calls authoritative (see there).
type WrkOptions struct {
	Foyer     string        // path of the foyer binary
	Wrk       string        // path of the wrk binary
	Threads   int           // wrk -t
	Conns     int           // wrk -c
	Rounds    int           // rounds per contender, alternated
	Round     time.Duration // wrk -d of each round
	RedisURL  string        // the Redis store for the join on Redis; empty skips it
	Scenarios []string      // admitted, poll, join, join-redis; empty is all
}

// wrkTarget is one contender of a wrk comparison: a URL and the headers
// every request carries.
type wrkTarget struct {
	name    string
	url     string
	headers []string // "Name: value"
}

// wrkResult is what one wrk run printed.
type wrkResult struct {
	rps     float64
	p99     time.Duration
	non2xx  int64
	errors  int64
	seconds float64
}

// Wrk runs each scenario with wrk: the waiting room's path against its
// baselines, in alternating rounds, and prints per round figures and the
// median ratio with its spread (lowest and highest paired ratio).
func Wrk(o WrkOptions) (map[string][]Ratio, error) {
	if o.Wrk == "" {
		o.Wrk = "wrk"
	}
	if _, err := exec.LookPath(o.Wrk); err != nil {
		return nil, fmt.Errorf("wrk not found (apt-get install -y wrk; make bench installs it): %w", err)
	}
	want := func(s string) bool {
		if len(o.Scenarios) == 0 {
			return true
		}
		for _, x := range o.Scenarios {
			if x == s {
				return true
			}
		}
		return false
	}
	fmt.Printf("wrk: %d threads, %d connections, %d rounds of %s per contender, taking turns\n",
		o.Threads, o.Conns, o.Rounds, o.Round)
	out := map[string][]Ratio{}
	for _, sc := range []struct {
		name string
		run  func() ([]Ratio, error)
	}{
		{"admitted", func() ([]Ratio, error) { return wrkAdmitted(o) }},
		{"poll", func() ([]Ratio, error) { return wrkPoll(o) }},
		{"join", func() ([]Ratio, error) { return wrkJoin(o, "") }},
		{"join-redis", func() ([]Ratio, error) { return wrkJoin(o, o.RedisURL) }},
	} {
		if !want(sc.name) || (sc.name == "join-redis" && o.RedisURL == "") {
			continue
		}
		r, err := sc.run()
		if err != nil {
			return out, fmt.Errorf("%s: %w", sc.name, err)
		}
		out[sc.name] = r
	}
	return out, nil
}

// wrkAdmitted sets an admitted fan's request through Foyer against bare
// reverse_proxy to the same upstream twice: given the same cookies (what the
// room's own work costs), and without them (what the fan pays for the room
// against the site without one, cookie bytes included).
func wrkAdmitted(o WrkOptions) ([]Ratio, error) {
	p, err := startProxySites(o.Foyer)
	if err != nil {
		return nil, err
	}
	defer p.stop()
	passes, err := admitFans(p.gated, 1)
	if err != nil {
		return nil, err
	}
	cookie := "Cookie: " + passes[0].Name + "=" + passes[0].Value
	fmt.Println("\nadmitted request (wrk)")
	return wrkCompare(o,
		[]wrkTarget{
			{"bare reverse_proxy, no cookies", p.bare, nil},
			{"bare reverse_proxy, same cookies", p.bare, []string{cookie}},
		},
		wrkTarget{"foyer (admitted)", p.gated, []string{cookie}})
}

// wrkPoll sets a status poll of a fan in line against Caddy respond.
func wrkPoll(o WrkOptions) ([]Ratio, error) {
	site, err := startRoomSite(o.Foyer, "")
	if err != nil {
		return nil, err
	}
	defer site.proc.Stop()
	status := site.room + "/_waiting-room/status"
	tickets, err := joinFans(status, 1)
	if err != nil {
		return nil, err
	}
	accept := "Accept: application/json"
	cookie := "Cookie: " + tickets[0].Name + "=" + tickets[0].Value
	fmt.Println("\nstatus poll (wrk)")
	return wrkCompare(o,
		[]wrkTarget{
			{"caddy respond, no cookies", site.respond, []string{accept}},
			{"caddy respond, same cookies", site.respond, []string{accept, cookie}},
		},
		wrkTarget{"foyer status poll", status, []string{accept, cookie}})
}

// wrkJoin sets newcomers joining (no cookies: every request is a new place)
// against Caddy respond.
func wrkJoin(o WrkOptions, store string) ([]Ratio, error) {
	site, err := startRoomSite(o.Foyer, store)
	if err != nil {
		return nil, err
	}
	defer site.proc.Stop()
	accept := "Accept: application/json"
	fmt.Printf("\njoin, store %s (wrk)\n", storeName(store))
	return wrkCompare(o,
		[]wrkTarget{{"caddy respond", site.respond, []string{accept}}},
		wrkTarget{"foyer join", site.room + "/_waiting-room/status", []string{accept}})
}

// wrkCompare runs a warm-up of every contender, then rounds in which every
// contender runs once, in turns (roundOrder), and prints for each baseline the
// median of the paired ratios (the candidate's round against that baseline's
// round of the same number) with their lowest and highest.
func wrkCompare(o WrkOptions, bases []wrkTarget, cand wrkTarget) ([]Ratio, error) {
	all := append(append([]wrkTarget(nil), bases...), cand)
	for _, t := range all {
		if _, err := runWrk(o, t, time.Second); err != nil {
			return nil, fmt.Errorf("warm-up of %s: %w", t.name, err)
		}
	}
	results := make([][]wrkResult, len(all))
	for i := range results {
		results[i] = make([]wrkResult, o.Rounds)
	}
	for r := 0; r < o.Rounds; r++ {
		for _, i := range roundOrder(r, len(all)) {
			t := all[i]
			res, err := runWrk(o, t, o.Round)
			if err != nil {
				return nil, fmt.Errorf("%s: %w", t.name, err)
			}
			results[i][r] = res
			fmt.Printf("  round %d  %-34s %9.0f req/s  p99 %8s\n", r+1, t.name, res.rps, res.p99.Round(time.Microsecond))
		}
	}
	c := results[len(all)-1]
	var ratios []Ratio
	for i, b := range bases {
		var tput, tail []float64
		for r := range c {
			tput = append(tput, c[r].rps/results[i][r].rps)
			tail = append(tail, float64(c[r].p99)/float64(results[i][r].p99))
		}
		r := ratioOf(tput, tail)
		fmt.Printf("ratio vs %-34s throughput %.3f x (%.3f-%.3f)  p99 %.3f x (%.3f-%.3f)  median of %d paired rounds\n",
			b.name, r.Throughput, r.ThroughputLow, r.ThroughputHigh, r.P99, r.P99Low, r.P99High, r.Rounds)
		ratios = append(ratios, r)
	}
	// With two baselines (the same site with and without the candidate's
	// cookies), the second against the first is what the extra bytes cost
	// on their own, with no waiting room: the share of the gap that is the
	// browser's to send, not the room's work.
	if len(bases) == 2 {
		var tput, tail []float64
		for r := range results[0] {
			tput = append(tput, results[1][r].rps/results[0][r].rps)
			tail = append(tail, float64(results[1][r].p99)/float64(results[0][r].p99))
		}
		r := ratioOf(tput, tail)
		fmt.Printf("ratio of %s vs %s: throughput %.3f x (%.3f-%.3f)  p99 %.3f x (%.3f-%.3f)\n",
			bases[1].name, bases[0].name, r.Throughput, r.ThroughputLow, r.ThroughputHigh, r.P99, r.P99Low, r.P99High)
		ratios = append(ratios, r)
	}
	return ratios, nil
}

// runWrk runs wrk once against t, bounded by the round's length (wrk's -d)
// and a hard deadline should wrk hang, and refuses a run with errors or
// answers other than 2xx/3xx: a fast wrong answer is no figure.
func runWrk(o WrkOptions, t wrkTarget, d time.Duration) (wrkResult, error) {
	u, err := url.Parse(t.url)
	if err != nil {
		return wrkResult{}, err
	}
	if h := u.Hostname(); h != "127.0.0.1" && h != "::1" && h != "localhost" {
		return wrkResult{}, fmt.Errorf("refusing to load %s: loopback only", t.url)
	}
	ctx, cancel := context.WithTimeout(context.Background(), d+30*time.Second)
	defer cancel()
	args := []string{"-t", strconv.Itoa(o.Threads), "-c", strconv.Itoa(o.Conns),
		"-d", fmt.Sprintf("%ds", max(1, int(d.Round(time.Second).Seconds()))), "--latency", "--timeout", "5s"}
	for _, h := range t.headers {
		args = append(args, "-H", h)
	}
	out, err := exec.CommandContext(ctx, o.Wrk, append(args, t.url)...).CombinedOutput()
	if err != nil {
		return wrkResult{}, fmt.Errorf("wrk: %v\n%s", err, out)
	}
	res, err := parseWrk(string(out))
	if err != nil {
		return wrkResult{}, err
	}
	if res.non2xx > 0 || res.errors > 0 {
		return res, fmt.Errorf("wrk saw %d non-2xx/3xx answers and %d socket errors:\n%s", res.non2xx, res.errors, out)
	}
	return res, nil
}

var (
	wrkRPS    = regexp.MustCompile(`(?m)^Requests/sec:\s+([0-9.]+)`)
	wrkP99    = regexp.MustCompile(`(?m)^\s+99%\s+([0-9.]+)(us|ms|s)\s*$`)
	wrkNon2xx = regexp.MustCompile(`(?m)^\s+Non-2xx or 3xx responses:\s+(\d+)`)
	wrkErrors = regexp.MustCompile(`(?m)^\s+Socket errors: connect (\d+), read (\d+), write (\d+), timeout (\d+)`)
	wrkIn     = regexp.MustCompile(`(?m)requests in ([0-9.]+)(ms|s|m),`)
)

// parseWrk reads the figures of wrk's --latency report.
func parseWrk(out string) (wrkResult, error) {
	var r wrkResult
	m := wrkRPS.FindStringSubmatch(out)
	if m == nil {
		return r, errors.New("no Requests/sec in wrk's output:\n" + out)
	}
	r.rps, _ = strconv.ParseFloat(m[1], 64)
	m = wrkP99.FindStringSubmatch(out)
	if m == nil {
		return r, errors.New("no 99% latency in wrk's output (was --latency given?):\n" + out)
	}
	r.p99 = wrkDuration(m[1], m[2])
	if m = wrkNon2xx.FindStringSubmatch(out); m != nil {
		r.non2xx, _ = strconv.ParseInt(m[1], 10, 64)
	}
	if m = wrkErrors.FindStringSubmatch(out); m != nil {
		for _, s := range m[1:] {
			n, _ := strconv.ParseInt(s, 10, 64)
			r.errors += n
		}
	}
	if m = wrkIn.FindStringSubmatch(out); m != nil {
		r.seconds = wrkDuration(m[1], m[2]).Seconds()
	}
	return r, nil
}

func wrkDuration(num, unit string) time.Duration {
	f, _ := strconv.ParseFloat(num, 64)
	switch unit {
	case "us":
		return time.Duration(f * float64(time.Microsecond))
	case "ms":
		return time.Duration(f * float64(time.Millisecond))
	case "m":
		return time.Duration(f * float64(time.Minute))
	}
	return time.Duration(f * float64(time.Second))
}

func minOf(v []float64) float64 {
	m := v[0]
	for _, x := range v {
		m = min(m, x)
	}
	return m
}

func maxOf(v []float64) float64 {
	m := v[0]
	for _, x := range v {
		m = max(m, x)
	}
	return m
}
