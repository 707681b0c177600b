package waitingroom

import "time"

// flow estimates how fast a room moves from the counters a node has seen over the
// last minutes. The store keeps only monotone totals; rates are differences of
// two samples, so any node can compute them without extra store state.
//
// After a loss of the store the outcomes are not the fans' own for a while:
// the places of a re-seed's margin, which nobody holds, and admissions
// restored from a view that predates their claims are let in and lapse, and
// a line re-created blank may restart its counters. Counted, they would drag
// the show-up share toward nothing and every position with it. So after a
// loss the share restarts from the one measured before it (prior) and counts
// only the outcomes of places placed after it: from an admission grace after
// serving passed every place the re-created room started with.
type flow struct {
	samples []sample // oldest first, one per refresh, at most flowHistory old
	prior   float64  // the show-up share measured before the last loss; 0: none
	// afterLoss is set from a loss until outcomes are clean again; lossSeq is
	// the order key the re-created room's line started at (0 until known),
	// and cleanAt when outcomes count again (zero until known).
	afterLoss bool
	lossSeq   uint64
	cleanAt   time.Time
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

// add records the counters of a snapshot taken at at; settling says the room
// still settles after a loss, and grace is the admission grace.
func (f *flow) add(at time.Time, c Counters, settling bool, grace time.Duration) {
	if n := len(f.samples); n > 0 && !at.After(f.samples[n-1].at) {
		return
	}
	if f.afterLoss && f.cleanAt.IsZero() {
		if f.lossSeq == 0 && !settling {
			f.lossSeq = max(c.Seq, 1)
		}
		if f.lossSeq > 0 && c.Serving >= f.lossSeq {
			// Lapses are counted up to a grace after the admission.
			f.cleanAt = at.Add(grace + time.Second)
		}
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

// lost forgets the history, for when the counters it was built on are gone
// (the store lost the room), keeping the show-up share measured so far as the
// prior until outcomes are clean again.
func (f *flow) lost() {
	if s, ok := f.measuredShowUp(time.Time{}); ok {
		f.prior = s
	}
	f.samples = f.samples[:0]
	f.afterLoss, f.lossSeq, f.cleanAt = true, 0, time.Time{}
}

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
// long, so "people ahead" is the places ahead scaled by this share. After a
// loss it is the prior until outcomes are clean again (see flow).
func (f *flow) showUp() float64 {
	prior := f.prior
	if prior == 0 {
		prior = 1
	}
	if f.afterLoss && f.cleanAt.IsZero() {
		return prior
	}
	s, ok := f.measuredShowUp(f.cleanAt)
	if !ok {
		return prior
	}
	return s
}

// measuredShowUp is the show-up share over the history from no earlier than
// from, and whether enough outcomes were seen to tell.
func (f *flow) measuredShowUp(from time.Time) (float64, bool) {
	if len(f.samples) < 2 {
		return 0, false
	}
	b := f.samples[len(f.samples)-1]
	var a sample
	found := false
	for _, s := range f.samples {
		if b.at.Sub(s.at) <= flowHistory && !s.at.Before(from) {
			a, found = s, true
			break
		}
	}
	if !found || b.at.Sub(a.at) < minRateSpan {
		return 0, false
	}
	claimed := float64(b.c.Claimed - a.c.Claimed)
	lapsed := float64(b.c.Abandoned - a.c.Abandoned)
	if claimed+lapsed < 20 {
		return 0, false // too few outcomes to scale anyone's place by
	}
	return max(0.05, claimed/(claimed+lapsed)), true
}
