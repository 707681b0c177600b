package bench

import (
	"os"
	"strings"
	"testing"
	"time"
)

// Every round runs each contender once; over 2n rounds, from an even one,
// every contender runs twice in every place.
func TestRoundOrderPutsEveryContenderInEveryPlace(t *testing.T) {
	for n := 1; n <= 4; n++ {
		for start := 0; start < 4*n; start += 2 {
			seen := make([][]int, n) // seen[contender][position]
			for i := range seen {
				seen[i] = make([]int, n)
			}
			for r := start; r < start+2*n; r++ {
				order := roundOrder(r, n)
				if len(order) != n {
					t.Fatalf("n=%d round %d: order %v has %d entries", n, r, order, len(order))
				}
				ran := make([]bool, n)
				for pos, c := range order {
					if c < 0 || c >= n || ran[c] {
						t.Fatalf("n=%d round %d: order %v is not a permutation", n, r, order)
					}
					ran[c] = true
					seen[c][pos]++
				}
			}
			for c := range seen {
				for pos, k := range seen[c] {
					if k != 2 {
						t.Fatalf("n=%d rounds %d..%d: contender %d ran %d times in place %d, want 2", n, start, start+2*n-1, c, k, pos)
					}
				}
			}
		}
	}
}

// The second round of each two runs the first one's order backwards: any two
// contenders are as far apart one way as the other.
func TestRoundOrderRunsEachOrderBothWays(t *testing.T) {
	for n := 2; n <= 4; n++ {
		for r := 0; r < 4*n; r += 2 {
			a, b := roundOrder(r, n), roundOrder(r+1, n)
			for i := range a {
				if a[i] != b[n-1-i] {
					t.Fatalf("n=%d: round %d runs %v, round %d runs %v, not its reverse", n, r, a, r+1, b)
				}
			}
		}
	}
}

// A machine that speeds up by 5% with every wrk run, and contenders that are
// equally fast: a comparison that runs them in one fixed order would find the
// one that runs later faster in every round. Taking turns, the drift falls
// on both sides, and the median ratio is 1.
func TestWrkCompareTakesTheDriftOutOfTheRatio(t *testing.T) {
	dir := t.TempDir()
	script := `#!/bin/sh
state="` + dir + `/runs"
n=$(cat "$state" 2>/dev/null || echo 0)
n=$((n+1))
echo $n > "$state"
for last; do :; done
echo "$last" >> "` + dir + `/urls"
rps=$(awk -v n=$n 'BEGIN { printf "%.2f", 1000 * 1.05^n }')
cat <<REPORT
Running 1s test @ $last
  Latency Distribution
     50%    0.89ms
     99%    7.76ms
  1000 requests in 1.00s, 756.82KB read
Requests/sec:   $rps
REPORT
`
	wrk := dir + "/wrk"
	if err := os.WriteFile(wrk, []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
	o := WrkOptions{Wrk: wrk, Threads: 1, Conns: 1, Rounds: 6, Round: time.Second}
	bases := []wrkTarget{{"first", "http://127.0.0.1:1/a", nil}, {"second", "http://127.0.0.1:1/b", nil}}
	ratios, err := wrkCompare(o, bases, wrkTarget{"candidate", "http://127.0.0.1:1/c", nil})
	if err != nil {
		t.Fatal(err)
	}
	if len(ratios) != 3 {
		t.Fatalf("%d ratios, want 2 against the baselines and one between them", len(ratios))
	}
	for i, r := range ratios {
		if r.Rounds != 6 || r.Throughput < 0.99 || r.Throughput > 1.01 || r.ThroughputLow >= 1 || r.ThroughputHigh <= 1 {
			t.Errorf("ratio %d: %.3f (%.3f-%.3f) over %d rounds; equally fast contenders on a drifting machine should come out at 1, with pairs either side of it",
				i, r.Throughput, r.ThroughputLow, r.ThroughputHigh, r.Rounds)
		}
	}
	urls, _ := os.ReadFile(dir + "/urls")
	if got := strings.Count(string(urls), "\n"); got != 3+6*3 {
		t.Errorf("wrk ran %d times, want 3 warm-ups and 6 rounds of 3", got)
	}
}
