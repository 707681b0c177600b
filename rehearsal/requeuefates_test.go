package rehearsal

import (
	"testing"
	"time"
)

func at(n float64) time.Duration { return time.Duration(n * float64(time.Second)) }

// TestJudgeFates: a requeued fan let in again before the line ends on
// their place; one kept waiting after a fan behind them surely got in (told
// to wait after the requeue) ends behind; one let in before the requeue who
// only learns of it afterwards (or is told to wait within a node's view lag
// of it) does not count; a fan who gave up is passed
// by every fan behind them let in after; a fan whose later try went through
// keeps their session; and requeued fans let in out of the order requeued
// are counted.
func TestJudgeFates(t *testing.T) {
	line := []admission{
		{key: 5, passAt: at(10), notBefore: at(9)},     // the failed fan's own first pass
		{key: 20, passAt: at(31), notBefore: at(28)},   // let in before the requeue at 30, learns after
		{key: 21, passAt: at(34), notBefore: at(32)},   // surely let in after the requeue
		{key: 22, passAt: at(33), notBefore: at(30.4)}, // told to wait within a node's view lag of it: not surely after
		{key: 3, passAt: at(35), notBefore: at(33)},    // ahead in line, surely after the requeue
	}
	cases := []struct {
		name                    string
		recs                    []failedRecord
		behind, passed, line1st int
		order                   int
	}{{
		name: "requeued, let in again before the line",
		recs: []failedRecord{{key: 5, joinStart: 0, passAt: at(10), failStart: at(29), failEnd: at(30), requeued: true, requeueWait: at(31.5), readmitAt: at(32)}},
	}, {
		name:   "requeued, kept waiting after a fan behind got in",
		recs:   []failedRecord{{key: 5, joinStart: 0, passAt: at(10), failStart: at(29), failEnd: at(30), requeued: true, requeueWait: at(36), readmitAt: at(37)}},
		behind: 1, passed: 1, line1st: 1,
	}, {
		name:   "gave up: passed by every fan behind let in after",
		recs:   []failedRecord{{key: 5, joinStart: 0, passAt: at(10), failStart: at(29), failEnd: at(30), requeueWait: -1, readmitAt: -1, gaveUp: true}},
		behind: 1, passed: 3,
	}, {
		name: "kept the session",
		recs: []failedRecord{{key: 5, joinStart: 0, passAt: at(10), failStart: at(29), failEnd: at(30), requeueWait: -1, readmitAt: -1, kept: true, bought: true}},
	}, {
		name: "two requeued, the later let in while the earlier waits",
		recs: []failedRecord{
			{key: 1, passAt: 0, joinStart: 0, failStart: at(29), failEnd: at(29.5), requeued: true, requeueWait: at(33.5), readmitAt: at(34)},
			{key: 2, passAt: 0, joinStart: 0, failStart: at(30), failEnd: at(30.2), requeued: true, requeueWait: -1, readmitAt: at(33)},
		},
		order: 1,
	}}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			q := judgeFates(c.recs, line)
			if q.behind != c.behind || q.maxPassedBy != c.passed || q.lineFirst != c.line1st || q.orderInversions != c.order {
				t.Fatalf("behind %d (passed by %d), line first %d, order %d; want %d (%d), %d, %d",
					q.behind, q.maxPassedBy, q.lineFirst, q.orderInversions, c.behind, c.passed, c.line1st, c.order)
			}
			if q.behindOK() != (c.behind == 0 && c.line1st == 0 && c.order == 0) {
				t.Fatalf("behindOK %v", q.behindOK())
			}
		})
	}
	q := judgeFates([]failedRecord{{key: 5, joinStart: at(1), passAt: at(10), failEnd: at(30), requeued: true, requeueWait: -1, readmitAt: at(32)}}, line)
	if q.waitMax != at(11) || q.readmitted != 1 || q.requeued != 1 {
		t.Fatalf("waited %v, readmitted %d; want 11 s (9 before the pass, 2 after the requeue), 1", q.waitMax, q.readmitted)
	}
}

// TestRequeueErrOnlyWithRetry: the run fails on a fan behind their place
// only when the booking service sends retry.
func TestRequeueErrOnlyWithRetry(t *testing.T) {
	behind := requeueFates{failed: 1, behind: 1, maxPassedBy: 3}
	r := &rehearsal{cfg: Config{Stack: StackConfig{FailPayments: 0.02}}}
	if r.requeueErr(behind) == nil {
		t.Fatal("with retry, a fan behind their place did not fail the run")
	}
	if r.requeueErr(requeueFates{failed: 4}) != nil {
		t.Fatal("with retry, no fan behind failed the run")
	}
	r.cfg.Stack.NoRetry = true
	if r.requeueErr(behind) != nil {
		t.Fatal("without retry, a fan behind failed the run: that is the baseline")
	}
}
