package main

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"sort"
	"strings"
	"time"
)

// event is one line of `go test -json` (cmd/test2json).
type event struct {
	Action     string
	Package    string
	Test       string
	Output     string
	Elapsed    float64
	ImportPath string
}

// marker starts the message of an integration test that could not run.
const marker = "integration test not run:"

type key struct{ pkg, test string }

// report accumulates a run.
type report struct {
	out                  io.Writer
	output               map[key][]string // buffered output per test, and per package (test "")
	passed, failed, skip int
	failures             []key
	buildFailed          []string
	missing              map[string][]string // what was missing -> tests that skipped for it
	packages             int
}

func newReport(out io.Writer) *report {
	return &report{out: out, output: map[key][]string{}, missing: map[string][]string{}}
}

func (r *report) add(e event) {
	switch e.Action {
	case "build-output":
		r.output[key{e.ImportPath, "build"}] = append(r.output[key{e.ImportPath, "build"}], e.Output)
		return
	case "build-fail":
		r.buildFailed = append(r.buildFailed, e.ImportPath)
		fmt.Fprintf(r.out, "FAIL\t%s [build failed]\n", e.ImportPath)
		for _, l := range r.output[key{e.ImportPath, "build"}] {
			fmt.Fprint(r.out, l)
		}
		return
	}
	k := key{e.Package, e.Test}
	switch e.Action {
	case "output":
		r.output[k] = append(r.output[k], e.Output)
	case "pass":
		if e.Test != "" {
			r.passed++
			delete(r.output, k)
			return
		}
		r.packages++
		fmt.Fprintf(r.out, "ok  \t%s\t%.1fs\n", e.Package, e.Elapsed)
		delete(r.output, k)
	case "skip":
		if e.Test == "" {
			delete(r.output, k)
			return // a package without tests
		}
		r.skip++
		if why, ok := r.skipReason(k); ok {
			r.missing[why] = append(r.missing[why], e.Package+"."+e.Test)
		}
		delete(r.output, k)
	case "fail":
		if e.Test != "" {
			r.failed++
			r.failures = append(r.failures, k)
			fmt.Fprintf(r.out, "--- FAIL: %s (%s)\n", e.Test, e.Package)
			for _, l := range r.output[k] {
				fmt.Fprint(r.out, l)
			}
			delete(r.output, k)
			return
		}
		r.packages++
		// Output outside any test (a panic, a timeout, TestMain) belongs to the package.
		for _, l := range r.output[k] {
			fmt.Fprint(r.out, l)
		}
		fmt.Fprintf(r.out, "FAIL\t%s\t%.1fs\n", e.Package, e.Elapsed)
		delete(r.output, k)
	}
}

// skipReason finds the integration marker in a skipped test's output.
func (r *report) skipReason(k key) (string, bool) {
	for _, l := range r.output[k] {
		_, after, ok := strings.Cut(l, marker)
		if !ok {
			continue
		}
		why := strings.TrimSpace(after)
		if i := strings.Index(why, " ("); i > 0 {
			why = why[:i] // drop the advice in parentheses: group by what was missing
		}
		return why, true
	}
	return "", false
}

// finish prints the summary and tells whether the run is green.
func (r *report) finish(elapsed time.Duration) bool {
	fmt.Fprintln(r.out)
	if len(r.missing) > 0 {
		n := 0
		whys := make([]string, 0, len(r.missing))
		for why, tests := range r.missing {
			n += len(tests)
			whys = append(whys, why)
		}
		sort.Strings(whys)
		fmt.Fprintf(r.out, "SKIPPED: %d integration tests did not run, for want of:\n", n)
		for _, why := range whys {
			tests := r.missing[why]
			sort.Strings(tests)
			fmt.Fprintf(r.out, "  - %s (%d: %s)\n", why, len(tests), strings.Join(tests, ", "))
		}
		fmt.Fprintln(r.out, "  run scripts/services.sh and scripts/deps.sh, or set CI=true to make these failures")
	}
	if len(r.buildFailed) > 0 {
		fmt.Fprintf(r.out, "build failed: %s\n", strings.Join(r.buildFailed, ", "))
	}
	for _, f := range r.failures {
		fmt.Fprintf(r.out, "failed: %s %s\n", f.pkg, f.test)
	}
	fmt.Fprintf(r.out, "%d packages in %s\n", r.packages, elapsed.Round(time.Second))
	fmt.Fprintf(r.out, "tests: %d passed, %d failed, %d skipped\n", r.passed, r.failed, r.skip)
	return r.failed == 0 && len(r.buildFailed) == 0 && r.passed > 0
}

func main() {
	start := time.Now()
	r := newReport(os.Stdout)
	sc := bufio.NewScanner(os.Stdin)
	sc.Buffer(make([]byte, 1<<20), 16<<20)
	bad := false
	for sc.Scan() {
		line := sc.Bytes()
		var e event
		if err := json.Unmarshal(line, &e); err != nil || e.Action == "" {
			// go test prints some things outside JSON (a build error of a test binary, go vet).
			fmt.Fprintln(os.Stdout, string(line))
			if strings.HasPrefix(string(line), "FAIL") {
				bad = true
			}
			continue
		}
		r.add(e)
	}
	if err := sc.Err(); err != nil {
		fmt.Fprintf(os.Stderr, "testreport: reading go test -json: %v\n", err)
		os.Exit(2)
	}
	if !r.finish(time.Since(start)) || bad {
		os.Exit(1)
	}
}
