package loadgen

import (
	"testing"
	"time"
)

func TestNearestRank(t *testing.T) {
	hundred := make([]time.Duration, 100)
	for i := range hundred {
		hundred[i] = time.Duration(i+1) * time.Millisecond
	}
	for _, c := range []struct {
		name   string
		sorted []time.Duration
		q      float64
		want   time.Duration
	}{
		{"none", nil, .99, 0},
		{"one", []time.Duration{7}, .5, 7},
		{"p50 of 1..100", hundred, .5, 50 * time.Millisecond},
		{"p99 of 1..100", hundred, .99, 99 * time.Millisecond},
		{"max of 1..100", hundred, 1, 100 * time.Millisecond},
		{"p0 is the smallest", hundred, 0, time.Millisecond},
		{"p99 of three is the largest", []time.Duration{1, 2, 3}, .99, 3},
	} {
		if got := NearestRank(c.sorted, c.q); got != c.want {
			t.Errorf("%s: %v, want %v", c.name, got, c.want)
		}
	}
}
