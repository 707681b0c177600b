package loadgen

import (
	"cmp"
	"math"
)

// NearestRank is the nearest-rank quantile q of sorted values: the smallest
// value with at least q of all values at or below it, or the zero value when
// there is none. It never interpolates, so a reported p99 is a latency some
// request really had.
func NearestRank[T cmp.Ordered](sorted []T, q float64) T {
	var zero T
	if len(sorted) == 0 {
		return zero
	}
	i := int(math.Ceil(q*float64(len(sorted)))) - 1
	return sorted[max(0, min(i, len(sorted)-1))]
}
