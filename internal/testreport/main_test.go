package main

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"
)

// A recorded run: one pass, one integration skip, one plain skip, one failure.
const recorded = `{"Action":"run","Package":"p/a","Test":"TestOK"}
{"Action":"pass","Package":"p/a","Test":"TestOK","Elapsed":0.01}
{"Action":"run","Package":"p/a","Test":"TestRedis"}
{"Action":"output","Package":"p/a","Test":"TestRedis","Output":"    x.go:1: SKIPPED, integration test not run: redis-server is not installed (set CI=true to make this a failure)\n"}
{"Action":"skip","Package":"p/a","Test":"TestRedis","Elapsed":0}
{"Action":"run","Package":"p/a","Test":"TestShort"}
{"Action":"output","Package":"p/a","Test":"TestShort","Output":"    x.go:2: short mode\n"}
{"Action":"skip","Package":"p/a","Test":"TestShort","Elapsed":0}
{"Action":"pass","Package":"p/a","Elapsed":0.5}
{"Action":"run","Package":"p/b","Test":"TestBad"}
{"Action":"output","Package":"p/b","Test":"TestBad","Output":"    b.go:9: want 1, got 2\n"}
{"Action":"fail","Package":"p/b","Test":"TestBad","Elapsed":0}
{"Action":"fail","Package":"p/b","Elapsed":0.2}
`

func TestReportCountsAndNamesSkips(t *testing.T) {
	var out bytes.Buffer
	r := newReport(&out)
	for _, e := range decode(t, recorded) {
		r.add(e)
	}
	if r.finish(0) {
		t.Error("a run with a failure reported green")
	}
	got := out.String()
	for _, want := range []string{
		"ok  \tp/a\t0.5s",
		"--- FAIL: TestBad (p/b)",
		"want 1, got 2",
		"SKIPPED: 1 integration tests did not run, for want of:",
		"redis-server is not installed (1: p/a.TestRedis)",
		"tests: 1 passed, 1 failed, 2 skipped",
	} {
		if !strings.Contains(got, want) {
			t.Errorf("report lacks %q:\n%s", want, got)
		}
	}
	if strings.Contains(got, "short mode") {
		t.Errorf("a plain skip's output was printed:\n%s", got)
	}
}

func TestReportGreenOnlyWhenSomethingRan(t *testing.T) {
	var out bytes.Buffer
	if newReport(&out).finish(0) {
		t.Error("a run with no test reported green")
	}
	r := newReport(&out)
	r.add(event{Action: "pass", Package: "p", Test: "TestA"})
	if !r.finish(0) {
		t.Error("a passing run reported red")
	}
}

func TestReportBuildFailure(t *testing.T) {
	var out bytes.Buffer
	r := newReport(&out)
	r.add(event{Action: "pass", Package: "p", Test: "TestA"})
	r.add(event{Action: "build-output", ImportPath: "p/c [p/c.test]", Output: "c.go:1: undefined: x\n"})
	r.add(event{Action: "build-fail", ImportPath: "p/c [p/c.test]"})
	if r.finish(0) {
		t.Error("a build failure reported green")
	}
	if !strings.Contains(out.String(), "undefined: x") {
		t.Errorf("build error not shown:\n%s", out.String())
	}
}

func decode(t *testing.T, s string) []event {
	t.Helper()
	var es []event
	for _, line := range strings.Split(strings.TrimSpace(s), "\n") {
		var e event
		if err := json.Unmarshal([]byte(line), &e); err != nil {
			t.Fatal(err)
		}
		es = append(es, e)
	}
	return es
}
