package gateway

import (
	"context"
	"sync"
	"time"

	"github.com/caddyserver/caddy/v2"

	"github.com/foyer-dev/foyer/internal/loop"
)

// The dashboard's history: every second the node writes down what its own
// view of each room says (no store call: the view is what it already keeps
// for status polls), in three rings per room: the last hour second by
// second, the last hour in ten-second steps, and the whole sale before that
// in one-minute steps (a week of them at most, so a room's history stays
// under about 1.5 MB however long it runs). The page draws the hour: ten-
// second steps, the last five minutes second by second. The CSV download
// (?format=csv) is the whole sale: minutes, then the last hour's seconds. A
// viewer reads the rings and the view; however many watch, the store never
// hears of them.
const (
	fineStep    = time.Second
	fineSamples = 3600 // an hour, second by second
	pageFine    = 300  // of which the page shows the last five minutes
	coarseEvery = 10   // fine samples per coarse one
	coarseSteps = 360  // an hour of ten-second samples
	saleEvery   = 60   // fine samples per sale (minute) sample
	saleSteps   = 7 * 24 * 60
)

// dashSample is a room at one moment. Gauges are their value then; this
// node's rates are averaged over the time since the previous sample.
type dashSample struct {
	T       int64  `json:"t"` // Unix milliseconds
	Waiting uint64 `json:"waiting"`
	Active  int    `json:"active"`
	Pending int    `json:"pending"`
	// Admitted is the places admitted in the minute before the sample: a
	// true rate per minute, not one second's count times 60, which swings
	// between 0 and 60 times the admissions of a second when a few are let
	// in every few seconds. Null until the node has watched a whole minute.
	Admitted *float64 `json:"admitted_per_min"`
	// ETA is the wait of whoever joined last, in seconds; -1 while the line
	// does not move.
	ETA     int64   `json:"eta"`
	Healthy bool    `json:"healthy"`
	Joins   float64 `json:"joins_per_s"` // this node's joins per second
	Polls   float64 `json:"polls_per_s"` // this node's status answers per second
}

// ring is a fixed-size ring of samples, oldest first when read.
type ring struct {
	buf  []dashSample
	next int
	full bool
}

func newRing(n int) ring { return ring{buf: make([]dashSample, n)} }

func (r *ring) push(s dashSample) {
	r.buf[r.next] = s
	r.next = (r.next + 1) % len(r.buf)
	if r.next == 0 {
		r.full = true
	}
}

// appendTo appends the samples, oldest first, that are newer than after.
func (r *ring) appendTo(out []dashSample, after int64) []dashSample {
	if r.full {
		for _, s := range r.buf[r.next:] {
			if s.T > after {
				out = append(out, s)
			}
		}
	}
	for _, s := range r.buf[:r.next] {
		if s.T > after {
			out = append(out, s)
		}
	}
	return out
}

// each calls f on the samples, oldest first, skipping the first skip.
func (r *ring) each(skip int, f func(dashSample)) {
	var parts [2][]dashSample
	if r.full {
		parts = [2][]dashSample{r.buf[r.next:], r.buf[:r.next]}
	} else {
		parts[1] = r.buf[:r.next]
	}
	for _, part := range parts {
		if skip >= len(part) {
			skip -= len(part)
			continue
		}
		for _, s := range part[skip:] {
			f(s)
		}
		skip = 0
	}
}

// len is the number of samples held.
func (r *ring) len() int {
	if r.full {
		return len(r.buf)
	}
	return r.next
}

func (r *ring) oldest() (dashSample, bool) {
	switch {
	case r.full:
		return r.buf[r.next], true
	case r.next > 0:
		return r.buf[0], true
	}
	return dashSample{}, false
}

// roomHistory is one room's rings, and what the next sample's rates are
// measured from.
type roomHistory struct {
	fine, coarse, sale ring
	pending            []dashSample // fine samples not yet folded into a coarse one
	pendingSale        []dashSample // nor into a sale one

	prevAt          time.Time
	prevJoins, prev uint64 // prev: polls
	// admitted is the room's admitted counter at each sample of the last
	// minute, oldest first, from the last one at or before the minute's
	// start: the base the sliding minute is counted from.
	admitted []counterAt
}

// counterAt is a counter's value when it was sampled.
type counterAt struct {
	at time.Time
	n  uint64
}

// rateWindow is the span the dashboard's admission rate is counted over.
const rateWindow = time.Minute

// observe turns the room's figures now into a sample and keeps it.
func (h *roomHistory) observe(at time.Time, in roomFigures) dashSample {
	s := dashSample{
		T: at.UnixMilli(), Waiting: in.waiting, Active: in.active, Pending: in.pending,
		ETA: in.eta, Healthy: in.healthy,
	}
	if !h.prevAt.IsZero() && at.After(h.prevAt) {
		secs := at.Sub(h.prevAt).Seconds()
		s.Joins = perSecond(in.joins, h.prevJoins, secs)
		s.Polls = perSecond(in.polls, h.prev, secs)
	}
	s.Admitted = h.admittedPerMinute(at, in.admitted)
	h.prevAt, h.prevJoins, h.prev = at, in.joins, in.polls
	h.fine.push(s)
	h.pending = append(h.pending, s)
	if len(h.pending) == coarseEvery {
		h.coarse.push(fold(h.pending))
		h.pending = h.pending[:0]
	}
	h.pendingSale = append(h.pendingSale, s)
	if len(h.pendingSale) == saleEvery {
		h.sale.push(fold(h.pendingSale))
		h.pendingSale = h.pendingSale[:0]
	}
	return s
}

func newRoomHistory() *roomHistory {
	return &roomHistory{fine: newRing(fineSamples), coarse: newRing(coarseSteps), sale: newRing(saleSteps)}
}

// admittedPerMinute notes the admitted counter n at a sample and returns the
// places admitted in the minute before it, per minute: the count since the
// last sample at or before a minute ago, over the time since then (a minute,
// or a little more when the sampler was late). Nil until a minute has been
// watched. A counter that went down (the store lost the room and it was
// re-seeded), or a clock that did, starts the minute again rather than show
// a negative rate.
func (h *roomHistory) admittedPerMinute(at time.Time, n uint64) *float64 {
	if k := len(h.admitted); k > 0 {
		switch last := h.admitted[k-1]; {
		case n < last.n || at.Before(last.at):
			h.admitted = h.admitted[:0]
		case at.Equal(last.at): // sampled twice at once: the later stands
			h.admitted = h.admitted[:k-1]
		}
	}
	h.admitted = append(h.admitted, counterAt{at, n})
	start := at.Add(-rateWindow)
	i := 0
	for i+1 < len(h.admitted) && !h.admitted[i+1].at.After(start) {
		i++
	}
	h.admitted = append(h.admitted[:0], h.admitted[i:]...)
	base := h.admitted[0]
	if base.at.After(start) {
		return nil
	}
	perMin := float64(n-base.n) * float64(rateWindow) / float64(at.Sub(base.at))
	return &perMin
}

// perSecond is a counter's rate; a counter that went down was restarted (a
// reload replaced the room's handle), and its rate is unknown, so 0.
func perSecond(now, before uint64, secs float64) float64 {
	if now < before {
		return 0
	}
	return float64(now-before) / secs
}

// fold makes one coarse sample of consecutive fine ones: the gauges as they
// stood at the end, the rates averaged (the admission rate over the samples
// that have one), the store healthy only if it was throughout.
func fold(ss []dashSample) dashSample {
	out := ss[len(ss)-1]
	var adm, joins, polls float64
	measured := 0
	for _, s := range ss {
		if s.Admitted != nil {
			adm += *s.Admitted
			measured++
		}
		joins += s.Joins
		polls += s.Polls
		out.Healthy = out.Healthy && s.Healthy
	}
	n := float64(len(ss))
	out.Joins, out.Polls = joins/n, polls/n
	out.Admitted = nil
	if measured > 0 {
		avg := adm / float64(measured)
		out.Admitted = &avg
	}
	return out
}

// history is the page's hour: the coarse samples older than the last five
// minutes, then those minutes second by second; only those newer than after.
func (h *roomHistory) history(after int64) []dashSample {
	skip := max(0, h.fine.len()-pageFine)
	var first *dashSample
	var recent []dashSample
	h.fine.each(skip, func(s dashSample) {
		if first == nil {
			first = &s
		}
		if s.T > after {
			recent = append(recent, s)
		}
	})
	if first == nil {
		return nil
	}
	var out []dashSample
	for _, s := range h.coarse.appendTo(nil, after) {
		if s.T < first.T {
			out = append(out, s)
		}
	}
	return append(out, recent...)
}

// wholeSale is the whole history: the minute samples older than the hour,
// then the hour second by second. Each sample stands for the span ending at
// its time.
func (h *roomHistory) wholeSale() (minutes, seconds []dashSample) {
	first, ok := h.fine.oldest()
	if !ok {
		return nil, nil
	}
	h.sale.each(0, func(s dashSample) {
		if s.T < first.T {
			minutes = append(minutes, s)
		}
	})
	return minutes, h.fine.appendTo(nil, 0)
}

// roomFigures is what a sample is made of, read from a live room.
type roomFigures struct {
	waiting                uint64
	active, pending        int
	admitted, joins, polls uint64
	eta                    int64
	healthy                bool
}

func figuresOf(lr liveRoom) roomFigures {
	_, in := lr.lead()
	n := lr.stats()
	f := roomFigures{
		waiting: in.Waiting, active: in.Snapshot.Active, pending: in.Snapshot.Pending,
		admitted: in.Snapshot.Admitted, joins: n.Joins, polls: n.Polls,
		eta: -1, healthy: in.Healthy,
	}
	if in.LastETA != nil {
		f.eta = int64(in.LastETA.Seconds())
	}
	return f
}

// sampler keeps the history of every live room of the process. One runs
// per process while any dashboard is configured, in a usage pool so that a
// config reload keeps the history.
type sampler struct {
	rooms roomSource
	clock func() time.Time

	mu     sync.Mutex
	byRoom map[string]*roomHistory

	cancel context.CancelFunc
	done   chan struct{}
}

func newSampler(rooms roomSource, clock func() time.Time) *sampler {
	return &sampler{rooms: rooms, clock: clock, byRoom: map[string]*roomHistory{}}
}

// start samples every second until Destruct.
func (s *sampler) start() {
	ctx, cancel := context.WithCancel(context.Background())
	s.cancel, s.done = cancel, make(chan struct{})
	go func() {
		defer close(s.done)
		loop.Every(ctx, fineStep, func(context.Context) { s.sample() })
	}()
}

// Destruct stops the sampling.
func (s *sampler) Destruct() error {
	if s.cancel != nil {
		s.cancel()
		<-s.done
	}
	return nil
}

// sample takes one sample of every live room. A room no longer live is
// forgotten: its history would describe a room nobody can see any more.
func (s *sampler) sample() {
	live := s.rooms()
	at := s.clock()
	figs := make([]roomFigures, len(live))
	for i, lr := range live {
		figs[i] = figuresOf(lr)
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	seen := make(map[string]bool, len(live))
	for i, lr := range live {
		seen[lr.id] = true
		h := s.byRoom[lr.id]
		if h == nil {
			h = newRoomHistory()
			s.byRoom[lr.id] = h
		}
		h.observe(at, figs[i])
	}
	for id := range s.byRoom {
		if !seen[id] {
			delete(s.byRoom, id)
		}
	}
}

// historyOf copies a room's samples newer than after.
func (s *sampler) historyOf(room string, after int64) []dashSample {
	s.mu.Lock()
	defer s.mu.Unlock()
	if h := s.byRoom[room]; h != nil {
		return h.history(after)
	}
	return nil
}

// saleOf copies a room's whole history; false if the room has none.
func (s *sampler) saleOf(room string) (minutes, seconds []dashSample, ok bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	h := s.byRoom[room]
	if h == nil {
		return nil, nil, false
	}
	minutes, seconds = h.wholeSale()
	return minutes, seconds, true
}

// samplers holds the process's sampler while any dashboard handler uses it.
var samplers = caddy.NewUsagePool()

const samplerKey = "dashboard"

func acquireSampler() (*sampler, error) {
	v, _, err := samplers.LoadOrNew(samplerKey, func() (caddy.Destructor, error) {
		s := newSampler(liveRooms, now)
		s.sample()
		s.start()
		return s, nil
	})
	if err != nil {
		return nil, err
	}
	return v.(*sampler), nil
}

func releaseSampler() error {
	_, err := samplers.Delete(samplerKey)
	return err
}
