package rehearsal

import (
	"math"
	"slices"
	"time"

	"github.com/foyer-dev/foyer/internal/loadgen"
)

// reqKind is what a fan's request was for. Latencies are reported per kind and
// per group (join, poll, shop), because the three load the gateway very
// differently: a join writes to the store, a poll reads the node's view, and a
// shop request goes through to the booking service.
type reqKind uint8

const (
	kindJoin reqKind = iota
	kindPoll
	kindSeats
	kindHold
	kindCheckout
	kindPay
	kindOrder
	nKinds
)

var kindNames = [nKinds]string{"join", "poll", "seats", "hold", "checkout", "pay", "order"}

func (k reqKind) String() string { return kindNames[k] }

// groupIndex is the kind's group as an index: join 0, poll 1, shop 2.
func (k reqKind) groupIndex() int {
	switch k {
	case kindJoin:
		return 0
	case kindPoll:
		return 1
	}
	return 2
}

// reqSample is one request: when its answer came (milliseconds from the
// start), how long it took and how late it was sent against when the fan
// meant to send it (microseconds), and what it was.
type reqSample struct {
	at, us, lag uint32
	kind        reqKind
}

// lagSample is how late one step started (microseconds), and when.
type lagSample struct{ at, us uint32 }

func msOf(d time.Duration) uint32 { return uint32(min(max(d.Milliseconds(), 0), math.MaxUint32)) }
func usOf(d time.Duration) uint32 { return uint32(min(max(d.Microseconds(), 0), math.MaxUint32)) }

// windowStats is one slice of the run's timeline.
type windowStats struct {
	from     time.Duration
	requests int
	p99      [3]time.Duration // by group; -1 when the group had no request
	over     int              // requests at or over the target
	lagP99   time.Duration
}

// timeline cuts the run into windows and reads each one's p99 by group, so
// that a tail can be placed: the stampede's first seconds, the sell-out, or
// all along.
func timeline(reqs []reqSample, lags []lagSample, window, target time.Duration) []windowStats {
	if window <= 0 || len(reqs) == 0 {
		return nil
	}
	wms := uint32(max(1, window.Milliseconds()))
	var last uint32
	for _, r := range reqs {
		last = max(last, r.at)
	}
	n := int(last/wms) + 1
	byGroup := make([][3]samples, n)
	lagBy := make([]samples, n)
	out := make([]windowStats, n)
	for _, r := range reqs {
		i := int(r.at / wms)
		byGroup[i][r.kind.groupIndex()] = append(byGroup[i][r.kind.groupIndex()], r.us)
		out[i].requests++
		if time.Duration(r.us)*time.Microsecond >= target {
			out[i].over++
		}
	}
	for _, l := range lags {
		if i := int(l.at / wms); i < n {
			lagBy[i] = append(lagBy[i], l.us)
		}
	}
	for i := range out {
		out[i].from = time.Duration(i) * window
		for g := range 3 {
			out[i].p99[g] = -1
			if len(byGroup[i][g]) > 0 {
				out[i].p99[g] = summarize(byGroup[i][g]).p99
			}
		}
		out[i].lagP99 = summarize(lagBy[i]).p99
	}
	return out
}

// samples holds latencies in microseconds. Every request is kept, not a
// sample of them: a rehearsal is bounded in time, so even millions of
// requests fit in a few megabytes, and exact quantiles need no argument.
type samples []uint32

func (s *samples) add(d time.Duration) { *s = append(*s, usOf(d)) }

// summary is what the verdict prints of one set of latencies.
type summary struct {
	n             int
	p50, p99, max time.Duration
}

// summarize sorts s in place and reads its quantiles.
func summarize(s samples) summary {
	slices.Sort(s)
	if len(s) == 0 {
		return summary{}
	}
	return summary{n: len(s), p50: quantile(s, .50), p99: quantile(s, .99), max: quantile(s, 1)}
}

// quantile is the nearest-rank quantile of sorted samples, in the
// microseconds they are kept in.
func quantile(sorted samples, q float64) time.Duration {
	return time.Duration(loadgen.NearestRank(sorted, q)) * time.Microsecond
}
