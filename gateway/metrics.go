package gateway

import (
	"errors"

	"github.com/prometheus/client_golang/prometheus"
	"go.uber.org/zap"

	"github.com/foyer-dev/foyer/waitingroom"
)

// roomCollector exports every live room's state to Prometheus. It reads the
// rooms when scraped, from what each node already keeps, so the serving path
// pays nothing for metrics and a scrape makes no store call. Series are
// labelled by room only: never by visitor, whose numbers are unbounded.
type roomCollector struct {
	rooms roomSource
}

// roomMetrics is the one collector of the process. Every handler registers the
// same value, so a second handler's registration is a no-op, and a reload's
// new registry gets it again while the old registry, and nothing else, goes
// away with the old config.
var roomMetrics = &roomCollector{rooms: liveRooms}

// registerMetrics puts the room metrics on Caddy's registry for this config.
// Failing to is logged rather than fatal: fans must not be turned away because
// a metric could not be registered.
func registerMetrics(reg *prometheus.Registry, logger *zap.Logger) {
	if reg == nil {
		return
	}
	err := reg.Register(roomMetrics)
	if _, ok := errors.AsType[prometheus.AlreadyRegisteredError](err); err == nil || ok {
		return
	}
	logger.Error("registering waiting room metrics", zap.Error(err))
}

const metricPrefix = "foyer_waiting_room_"

func roomDesc(name, help string) *prometheus.Desc {
	return prometheus.NewDesc(metricPrefix+name, help, []string{"room"}, nil)
}

// roomSeries are the series read from the room's view. Room-wide values come
// from the shared store: every node reports the same numbers, so aggregate
// them across nodes with max, not sum.
var roomSeries = []struct {
	desc *prometheus.Desc
	kind prometheus.ValueType
	of   func(in *waitingroom.Info) float64
}{
	{roomDesc("waiting", "Estimated people waiting in line: live places only, ghosts left out (room-wide)."), prometheus.GaugeValue, func(in *waitingroom.Info) float64 { return float64(in.Waiting) }},
	{roomDesc("places", "Places in line not yet reached, ghosts included: the raw line length (room-wide)."), prometheus.GaugeValue, func(in *waitingroom.Info) float64 { return float64(in.Places) }},
	{roomDesc("skipped_total", "Ghost places the controller skipped without spending a slot (room-wide)."), prometheus.CounterValue, func(in *waitingroom.Info) float64 { return float64(in.Snapshot.Skipped) }},
	{roomDesc("idled_out_total", "Sessions ended by session_idle_timeout (room-wide)."), prometheus.CounterValue, func(in *waitingroom.Info) float64 { return float64(in.Snapshot.IdledOut) }},
	{roomDesc("active", "Sessions live now (room-wide)."), prometheus.GaugeValue, func(in *waitingroom.Info) float64 { return float64(in.Snapshot.Active) }},
	{roomDesc("pending", "Places admitted but not yet claimed (room-wide)."), prometheus.GaugeValue, func(in *waitingroom.Info) float64 { return float64(in.Snapshot.Pending) }},
	{roomDesc("returning", "Late returners waiting for a free slot (room-wide)."), prometheus.GaugeValue, func(in *waitingroom.Info) float64 { return float64(in.Snapshot.Returning) }},
	{roomDesc("admitted_total", "Places admitted since the room was created (room-wide)."), prometheus.CounterValue, func(in *waitingroom.Info) float64 { return float64(in.Snapshot.Admitted) }},
	{roomDesc("claimed_total", "Sessions opened since the room was created (room-wide)."), prometheus.CounterValue, func(in *waitingroom.Info) float64 { return float64(in.Snapshot.Claimed) }},
	{roomDesc("abandoned_total", "Admitted places never claimed in time (room-wide)."), prometheus.CounterValue, func(in *waitingroom.Info) float64 { return float64(in.Snapshot.Abandoned) }},
	{roomDesc("requeued_total", "Sessions the origin failed whose fans were put back at the front (room-wide; docs/PROTOCOL.md, Requeue)."), prometheus.CounterValue, func(in *waitingroom.Info) float64 { return float64(in.Snapshot.Requeued) }},
	{roomDesc("store_healthy", "1 while this node reaches the room's store, 0 otherwise."), prometheus.GaugeValue, func(in *waitingroom.Info) float64 { return boolGauge(in.Healthy) }},
}

// nodeCounters count what happened on this node, summed over the room's
// handles: sum them across nodes.
var nodeCounters = []struct {
	desc *prometheus.Desc
	of   func(n *nodeStats) uint64
}{
	{roomDesc("joins_total", "Visitors given a ticket by this node."), func(n *nodeStats) uint64 { return n.Joins }},
	{roomDesc("joins_limited_total", "Newcomers this node refused by join_limit (no place made)."), func(n *nodeStats) uint64 { return n.JoinsLimited }},
	{roomDesc("direct_admits_total", "Visitors this node let straight in on joining."), func(n *nodeStats) uint64 { return n.DirectAdmits }},
	{roomDesc("polls_total", "Status answers given by this node."), func(n *nodeStats) uint64 { return n.Polls }},
	{roomDesc("claims_total", "Sessions opened by a claim on this node."), func(n *nodeStats) uint64 { return n.Claims }},
	{roomDesc("passes_rejected_total", "Passes this node refused (invalid, expired or revoked)."), func(n *nodeStats) uint64 { return n.PassesRejected }},
	{roomDesc("revokes_total", "Sessions the origin ended through this node."), func(n *nodeStats) uint64 { return n.Revokes }},
	{roomDesc("store_errors_total", "Store calls from this node that failed."), func(n *nodeStats) uint64 { return n.StoreErrors }},
	{roomDesc("reseeds_total", "Times this node found the store had lost the room and re-seeded it."), func(n *nodeStats) uint64 { return n.Reseeds }},
	{roomDesc("reclaims_total", "Sessions from before a loss of the store that this node had the store take over."), func(n *nodeStats) uint64 { return n.Reclaims }},
	{roomDesc("heartbeats_total", "Heartbeat flushes this node sent to the store (at most one a second)."), func(n *nodeStats) uint64 { return n.Heartbeats }},
	{roomDesc("challenges_total", "Proof-of-work seeds this node handed to newcomers."), func(n *nodeStats) uint64 { return n.Challenges }},
	{roomDesc("answers_refused_total", "Answers to seeds this node refused (wrong, stale, replayed, malformed)."), func(n *nodeStats) uint64 { return n.AnswersRefused }},
	{roomDesc("requeues_total", "Fans this node put back at the front for the origin's retry, 5xx or timeout."), func(n *nodeStats) uint64 { return n.Requeues }},
	{roomDesc("requeues_refused_total", "Origin failures this node let through as they were: the ticket's requeues were spent."), func(n *nodeStats) uint64 { return n.RequeuesRefused }},
}

// The series that are not one number read from the view or the node's counts.
var (
	descETA          = roomDesc("last_in_line_eta_seconds", "Expected wait of whoever joined last; absent while the line does not move.")
	descUnsent       = roomDesc("revocations_unsent", "Revocations this node took (and enforces) that the store has yet to record.")
	descCodeAttempts = prometheus.NewDesc(metricPrefix+"code_attempts_total",
		"Access code attempts this node answered, by result: accepted, wrong, used_up, limited (over join_limit, the code not looked at).",
		[]string{"room", "result"}, nil)
)

// Per priority lane (docs/line.md, "Priority lanes"), labelled lane; sent
// only by a room with lanes.
var (
	descLaneWaiting  = prometheus.NewDesc(metricPrefix+"lane_waiting", "People waiting in each priority lane (room-wide).", []string{"room", "lane"}, nil)
	descLaneAdmitted = prometheus.NewDesc(metricPrefix+"lane_admitted_total", "Places each priority lane let in (room-wide).", []string{"room", "lane"}, nil)
)

func boolGauge(b bool) float64 {
	if b {
		return 1
	}
	return 0
}

// Describe implements prometheus.Collector.
func (c *roomCollector) Describe(ch chan<- *prometheus.Desc) {
	for _, m := range roomSeries {
		ch <- m.desc
	}
	for _, m := range nodeCounters {
		ch <- m.desc
	}
	for _, d := range []*prometheus.Desc{descETA, descUnsent, descCodeAttempts, descLaneWaiting, descLaneAdmitted, descWaitDuration, descSessionDuration} {
		ch <- d
	}
	for _, d := range supplyDescs {
		ch <- d
	}
}

// Collect implements prometheus.Collector. A room served by several handles
// (during a reload) is reported once, so the registry never sees a series
// twice.
func (c *roomCollector) Collect(ch chan<- prometheus.Metric) {
	for _, lr := range c.rooms() {
		_, in := lr.lead()
		n := lr.stats()
		for _, m := range roomSeries {
			ch <- prometheus.MustNewConstMetric(m.desc, m.kind, m.of(&in), lr.id)
		}
		for _, m := range nodeCounters {
			ch <- prometheus.MustNewConstMetric(m.desc, prometheus.CounterValue, float64(m.of(&n)), lr.id)
		}
		if in.LastETA != nil {
			ch <- prometheus.MustNewConstMetric(descETA, prometheus.GaugeValue, in.LastETA.Seconds(), lr.id)
		}
		ch <- prometheus.MustNewConstMetric(descUnsent, prometheus.GaugeValue, float64(lr.unsent()), lr.id)
		for result, n := range lr.codeAttempts() {
			ch <- prometheus.MustNewConstMetric(descCodeAttempts, prometheus.CounterValue, float64(n), lr.id, result)
		}
		for _, l := range in.Lanes {
			ch <- prometheus.MustNewConstMetric(descLaneWaiting, prometheus.GaugeValue, float64(l.Waiting), lr.id, l.Name)
			ch <- prometheus.MustNewConstMetric(descLaneAdmitted, prometheus.CounterValue, float64(l.Admitted), lr.id, l.Name)
		}
		f := timesOf(lr.id)
		ch <- f.wait.metric(descWaitDuration, lr.id)
		ch <- f.session.metric(descSessionDuration, lr.id)
		collectSupply(ch, lr)
	}
}

// Interface guard.
var _ prometheus.Collector = (*roomCollector)(nil)
