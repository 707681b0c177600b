package gateway

import (
	"sync"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/foyer-dev/foyer/waitingroom"
)

// The room's figures of time: how long fans waited, and how long sessions
// lasted, as Prometheus histograms per room. Each is observed on the node
// where it becomes known, and only there, so that summed over nodes every
// fan counts once:
//
//   - time waited, on the node that signs a new session's first pass: from
//     the moment the fan took their place (the ticket's join time; for the
//     pre-queue, when they registered) to that pass. A fan let straight in
//     waited 0. A pass signed again for a session that exists (another tab,
//     a resumed idle-out, a reclaim after a store loss) is not a new wait.
//   - session length, on the node that carries out the origin's revoke: from
//     the session's start to the revoke. The start is the pass's end less
//     the session_duration in force at the revoke (passes carry their end,
//     not their start), so a session_duration changed during a session
//     skews its figure. Sessions that run out, or idle out, end in no
//     request any node sees, and are not counted: the figure is the length
//     of the sessions the origin ended.
//
// A histogram is a few dozen counters behind a mutex taken once per new
// session or revoke, never on a poll or an admitted request.

// Bucket bounds, in seconds. A wait runs from nothing (let straight in) to
// the hours of a big on-sale; a session from a quick checkout to the longest
// session_duration a room allows.
var (
	waitBuckets    = []float64{1, 5, 15, 30, 60, 120, 300, 600, 1200, 1800, 3600, 7200, 14400}
	sessionBuckets = []float64{30, 60, 120, 180, 300, 450, 600, 900, 1200, 1800, 3600}
)

var (
	descWaitDuration = prometheus.NewDesc(metricPrefix+"wait_duration_seconds",
		"Time from taking a place to the first pass of the session, observed on the node that signed it (fans let straight in waited 0).",
		[]string{"room"}, nil)
	descSessionDuration = prometheus.NewDesc(metricPrefix+"session_duration_seconds",
		"Length of sessions the origin ended with a revoke, from the session's start to the revoke, observed on the node that carried it out.",
		[]string{"room"}, nil)
)

// histogram counts observations into fixed buckets. The zero value is
// empty; it is safe for concurrent use.
type histogram struct {
	mu     sync.Mutex
	bounds []float64
	counts []uint64 // per bucket, not cumulative; the last is +Inf
	sum    float64
	n      uint64
}

func newHistogram(bounds []float64) *histogram {
	return &histogram{bounds: bounds, counts: make([]uint64, len(bounds)+1)}
}

func (h *histogram) observe(v float64) {
	i := 0
	for i < len(h.bounds) && v > h.bounds[i] {
		i++
	}
	h.mu.Lock()
	h.counts[i]++
	h.sum += v
	h.n++
	h.mu.Unlock()
}

// metric is the histogram as a Prometheus constant metric.
func (h *histogram) metric(d *prometheus.Desc, room string) prometheus.Metric {
	h.mu.Lock()
	defer h.mu.Unlock()
	buckets := make(map[float64]uint64, len(h.bounds))
	var cum uint64
	for i, b := range h.bounds {
		cum += h.counts[i]
		buckets[b] = cum
	}
	return prometheus.MustNewConstHistogram(d, h.n, h.sum, buckets, room)
}

// roomTimes are one room's histograms.
type roomTimes struct {
	wait, session *histogram
}

// roomTimesByID holds every room's histograms by room id, for the life of the
// process: a reload that makes a new room value for the same id keeps its
// histograms, and a room's handles during a reload share them. The metrics
// export those of the live rooms only.
var roomTimesByID sync.Map // room id → *roomTimes

func timesOf(room string) *roomTimes {
	if f, ok := roomTimesByID.Load(room); ok {
		return f.(*roomTimes)
	}
	f, _ := roomTimesByID.LoadOrStore(room, &roomTimes{wait: newHistogram(waitBuckets), session: newHistogram(sessionBuckets)})
	return f.(*roomTimes)
}

// startsSession reports whether a decision signed the first pass of a new
// session: a claim that opened one, or a newcomer let straight in. A pass
// signed again for a session that exists, or a passthrough room's pass
// (no session, no wait), is not.
func startsSession(d waitingroom.Decision) bool {
	if !d.NewPass || d.Transition == nil || d.Ticket.Joined.IsZero() {
		return false
	}
	switch d.Transition.From {
	case waitingroom.TicketInSession, waitingroom.TicketReclaiming, waitingroom.TicketIdledOut:
		return false
	}
	return d.Transition.Event != waitingroom.EventPass
}

// observeAdmission counts a new session's wait.
func (h *Handler) observeAdmission(d waitingroom.Decision) {
	if startsSession(d) {
		timesOf(h.Room).wait.observe(max(0, h.clockNow().Sub(d.Ticket.Joined).Seconds()))
	}
}

// observeRevoke counts the length of a session the origin ended.
func (h *Handler) observeRevoke(p waitingroom.Pass) {
	if p.ExpiresAt.IsZero() {
		return
	}
	d := h.room.Settings().SessionDuration
	length := h.clockNow().Sub(p.ExpiresAt.Add(-d))
	timesOf(h.Room).session.observe(min(max(0, length), d).Seconds())
}
