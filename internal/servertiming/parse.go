package servertiming

import (
	"strconv"
	"strings"
	"time"
)

// Parse reads back the figures Header wrote, for a load test that wants to
// know where a slow answer's time went. Metrics it does not know are
// skipped, so a proxy may add its own; ok is false when none of ours is
// there.
func Parse(header string) (f Figures, ok bool) {
	for _, metric := range strings.Split(header, ",") {
		params := strings.Split(metric, ";")
		name := strings.TrimSpace(params[0])
		var dur time.Duration
		var desc string
		for _, p := range params[1:] {
			k, v, _ := strings.Cut(strings.TrimSpace(p), "=")
			switch k {
			case "dur":
				ms, err := strconv.ParseFloat(v, 64)
				if err != nil || ms < 0 {
					return Figures{}, false
				}
				dur = time.Duration(ms * float64(time.Millisecond))
			case "desc":
				desc = strings.Trim(v, `"`)
			}
		}
		switch name {
		case "pool":
			f.PoolWait, ok = dur, true
		case "db":
			f.DB, ok = dur, true
			if n, _, found := strings.Cut(desc, " "); found {
				f.RoundTrips, _ = strconv.Atoi(n)
			}
		case "total":
			f.Total, ok = dur, true
		}
	}
	return f, ok
}
