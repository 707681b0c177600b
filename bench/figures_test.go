package bench

import (
	"testing"
	"time"

	"github.com/foyer-dev/foyer/internal/loadgen"
)

func TestMedianOfPairedRounds(t *testing.T) {
	for _, c := range []struct {
		v    []float64
		want float64
	}{
		{[]float64{3, 1, 2}, 2},
		{[]float64{4, 1, 3, 2}, 2.5},
		{[]float64{7}, 7},
	} {
		in := append([]float64(nil), c.v...)
		if got := medianOf(c.v); got != c.want {
			t.Errorf("median of %v: %v, want %v", in, got, c.want)
		}
		for i := range in {
			if in[i] != c.v[i] {
				t.Fatalf("medianOf reordered its input: %v", c.v)
			}
		}
	}
	rounds := []loadgen.Result{{Requests: 100, Elapsed: time.Second}, {Requests: 300, Elapsed: time.Second}, {Requests: 200, Elapsed: time.Second}}
	if got := median(rounds, loadgen.Result.RPS); got != 200 {
		t.Errorf("median req/s %v, want 200", got)
	}
}

func TestCommandCountFigures(t *testing.T) {
	c := commandCount{ops: 4, sent: 4, executed: 10, byName: map[string]int64{"evalsha": 4, "zadd": 5, "get": 1, "set": 0}}
	if got := figure(c.perOp(c.sent)); got != " 1.00" {
		t.Errorf("sent per op %q", got)
	}
	if got := figure(c.perOp(c.executed)); got != " 2.50" {
		t.Errorf("executed per op %q", got)
	}
	// A trace of the background's jitter is not a minus sign's worth.
	if got := figure(-0.004); got != " 0.00" {
		t.Errorf("jitter shown as %q", got)
	}
	if got := c.detail(); got != "zadd +5, evalsha +4, get +1" {
		t.Errorf("detail %q: want the largest first, zeros left out", got)
	}
	if got := (commandCount{}).detail(); got != "no commands beyond the background" {
		t.Errorf("empty detail %q", got)
	}
	for name, sent := range map[string]bool{"evalsha": true, "eval_ro": true, "script|load": true, "zadd": false, "get": false} {
		if isSent(name) != sent {
			t.Errorf("isSent(%q) = %v", name, !sent)
		}
	}
}
