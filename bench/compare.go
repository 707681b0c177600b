package bench

import (
	"fmt"
	"net/http"
	"sort"
	"time"

	"github.com/foyer-dev/foyer/internal/loadgen"
)

type contender struct {
	name  string
	req   loadgen.Request
	check func(*http.Response) error
}

// Ratio is a candidate set against its baseline over paired rounds: the
// median of the per-round ratios, and the lowest and highest of them.
type Ratio struct {
	Throughput, ThroughputLow, ThroughputHigh float64
	P99, P99Low, P99High                      float64
	Rounds                                    int
}

func ratioOf(tput, tail []float64) Ratio {
	return Ratio{
		Throughput: medianOf(tput), ThroughputLow: minOf(tput), ThroughputHigh: maxOf(tput),
		P99: medianOf(tail), P99Low: minOf(tail), P99High: maxOf(tail), Rounds: len(tput),
	}
}

// compare runs the baseline and the candidate in alternating rounds after a
// warm-up of each, and prints each one's median figures and their ratios.
func compare(c Options, base, cand contender) (Ratio, error) {
	round := time.Duration(c.RoundSecs * float64(time.Second))
	for _, k := range []contender{base, cand} {
		if _, err := loadgen.Run(c.Conns, time.Second, c.MaxRequests, k.req, k.check); err != nil {
			return Ratio{}, fmt.Errorf("warm-up of %s: %w", k.name, err)
		}
	}
	var rb, rc []loadgen.Result
	pair := []contender{base, cand}
	for i := 0; i < c.Rounds; i++ {
		for _, j := range roundOrder(i, len(pair)) {
			k := pair[j]
			res, err := loadgen.Run(c.Conns, round, c.MaxRequests, k.req, k.check)
			if err != nil {
				return Ratio{}, fmt.Errorf("%s: %w", k.name, err)
			}
			if j == 0 {
				rb = append(rb, res)
			} else {
				rc = append(rc, res)
			}
			fmt.Printf("  round %d  %-22s %9.0f req/s  p50 %7s  p99 %7s\n", i+1, k.name, res.RPS(), res.Quantile(.5).Round(time.Microsecond), res.Quantile(.99).Round(time.Microsecond))
		}
	}
	// Each round of the candidate is set against the baseline round next to
	// it, and the two take turns going first (roundOrder), so that a machine
	// growing busier or quieter over the run weighs on both sides alike.
	p99 := func(r loadgen.Result) float64 { return float64(r.Quantile(.99)) }
	var tput, tail []float64
	for i := range rb {
		tput = append(tput, rc[i].RPS()/rb[i].RPS())
		tail = append(tail, p99(rc[i])/p99(rb[i]))
	}
	fmt.Printf("median  %-22s %9.0f req/s  p99 %s\n", base.name, median(rb, loadgen.Result.RPS), time.Duration(median(rb, p99)).Round(time.Microsecond))
	fmt.Printf("median  %-22s %9.0f req/s  p99 %s\n", cand.name, median(rc, loadgen.Result.RPS), time.Duration(median(rc, p99)).Round(time.Microsecond))
	r := ratioOf(tput, tail)
	fmt.Printf("ratio   throughput %.3f x (%.3f-%.3f)   p99 %.3f x (%.3f-%.3f)   (median of %d paired rounds)\n",
		r.Throughput, r.ThroughputLow, r.ThroughputHigh, r.P99, r.P99Low, r.P99High, r.Rounds)
	return r, nil
}

func median(rs []loadgen.Result, f func(loadgen.Result) float64) float64 {
	v := make([]float64, len(rs))
	for i, r := range rs {
		v[i] = f(r)
	}
	return medianOf(v)
}

func medianOf(v []float64) float64 {
	v = append([]float64(nil), v...)
	sort.Float64s(v)
	if n := len(v); n%2 == 0 {
		return (v[n/2-1] + v[n/2]) / 2
	}
	return v[len(v)/2]
}
