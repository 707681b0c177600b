package waitingroom

import "time"

// flow estimates how fast a room moves from the counters a node has seen over the
// last minutes. The store keeps only monotone totals; rates are differences of
// two samples, so any node can compute them without extra store state.
type flow struct {
	samples []sample // oldest first, one per refresh, at most flowHistory old
}

type sample struct {
	at time.Time
	c  Counters
}

const (
	flowHistory = 5 * time.Minute
	// rateWindow is the span the join rate is measured over: long enough to
	// smooth the per-second steps, short enough to follow a change.
	rateWindow = time.Minute
	// minRateSpan is the least history worth a measured rate: less, and the
	// burst that fills a freshly opened room passes for its pace.
	minRateSpan = 30 * time.Second
)

func (f *flow) add(at time.Time, c Counters) {
	if n := len(f.samples); n > 0 && !at.After(f.samples[n-1].at) {
		return
	}
	f.samples = append(f.samples, sample{at, c})
	cut := 0
	for cut < len(f.samples)-1 && at.Sub(f.samples[cut].at) > flowHistory {
		cut++
	}
	if cut > 0 {
		f.samples = append(f.samples[:0], f.samples[cut:]...)
	}
}

// reset forgets the history, for when the counters it was built on are gone.
func (f *flow) reset() { f.samples = f.samples[:0] }

// since returns the oldest sample no older than span, and the newest.
func (f *flow) since(span time.Duration) (sample, sample, bool) {
	if len(f.samples) < 2 {
		return sample{}, sample{}, false
	}
	last := f.samples[len(f.samples)-1]
	for _, s := range f.samples {
		if last.at.Sub(s.at) <= span {
			return s, last, last.at.Sub(s.at) >= minRateSpan
		}
	}
	return sample{}, sample{}, false
}

// joinRate is order keys handed out per second over the last minute.
func (f *flow) joinRate() float64 {
	a, b, ok := f.since(rateWindow)
	if !ok {
		return 0
	}
	return float64(b.c.Seq-a.c.Seq) / b.at.Sub(a.at).Seconds()
}

// showUp is the share of admitted places whose holder came to claim, over the
// whole history. People ahead in line who gave up do not hold anyone back for
// long, so "people ahead" is the places ahead scaled by this share.
func (f *flow) showUp() float64 {
	a, b, ok := f.since(flowHistory)
	if !ok {
		return 1
	}
	claimed := float64(b.c.Claimed - a.c.Claimed)
	lapsed := float64(b.c.Abandoned - a.c.Abandoned)
	if claimed+lapsed < 20 {
		return 1 // too few outcomes to scale anyone's place by
	}
	return max(0.05, claimed/(claimed+lapsed))
}
