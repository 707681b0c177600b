package gateway

import (
	"errors"

	"github.com/prometheus/client_golang/prometheus"
	"go.uber.org/zap"
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

// Room-wide values come from the shared store: every node reports the same
// numbers, so aggregate them across nodes with max, not sum. Node values count
// what happened on this node: sum them.
var (
	descWaiting   = roomDesc("waiting", "Estimated people waiting in line: live places only, ghosts left out (room-wide).")
	descPlaces    = roomDesc("places", "Places in line not yet reached, ghosts included: the raw line length (room-wide).")
	descSkipped   = roomDesc("skipped_total", "Ghost places the controller skipped without spending a slot (room-wide).")
	descIdledOut  = roomDesc("idled_out_total", "Sessions ended by session_idle_timeout (room-wide).")
	descActive    = roomDesc("active", "Sessions live now (room-wide).")
	descPending   = roomDesc("pending", "Places admitted but not yet claimed (room-wide).")
	descReturning = roomDesc("returning", "Late returners waiting for a free slot (room-wide).")
	descAdmitted  = roomDesc("admitted_total", "Places admitted since the room was created (room-wide).")
	descClaimed   = roomDesc("claimed_total", "Sessions opened since the room was created (room-wide).")
	descAbandoned = roomDesc("abandoned_total", "Admitted places never claimed in time (room-wide).")
	descETA       = roomDesc("last_in_line_eta_seconds", "Expected wait of whoever joined last; absent while the line does not move.")
	descHealthy   = roomDesc("store_healthy", "1 while this node reaches the room's store, 0 otherwise.")

	descJoins          = roomDesc("joins_total", "Visitors given a ticket by this node.")
	descJoinsLimited   = roomDesc("joins_limited_total", "Newcomers this node refused by join_limit (no place made).")
	descDirectAdmits   = roomDesc("direct_admits_total", "Visitors this node let straight in on joining.")
	descPolls          = roomDesc("polls_total", "Status answers given by this node.")
	descClaims         = roomDesc("claims_total", "Sessions opened by a claim on this node.")
	descPassesRejected = roomDesc("passes_rejected_total", "Passes this node refused (invalid, expired or revoked).")
	descRevokes        = roomDesc("revokes_total", "Sessions the origin ended through this node.")
	descStoreErrors    = roomDesc("store_errors_total", "Store calls from this node that failed.")
	descReseeds        = roomDesc("reseeds_total", "Times this node found the store had lost the room and re-seeded it.")
	descReclaims       = roomDesc("reclaims_total", "Sessions from before a loss of the store that this node had the store take over.")
	descChallenges     = roomDesc("challenges_total", "Proof-of-work seeds this node handed to newcomers.")
	descAnswersRefused = roomDesc("answers_refused_total", "Answers to seeds this node refused (wrong, stale, replayed, malformed).")
	descUnsent         = roomDesc("revocations_unsent", "Revocations this node took (and enforces) that the store has yet to record.")
	descHeartbeats     = roomDesc("heartbeats_total", "Heartbeat flushes this node sent to the store (at most one a second).")
	descRequeued       = roomDesc("requeued_total", "Sessions the origin failed whose fans were put back at the front (room-wide; docs/PROTOCOL.md, Requeue).")
	descRequeues       = roomDesc("requeues_total", "Fans this node put back at the front for the origin's retry, 5xx or timeout.")
	descRequeuesSpent  = roomDesc("requeues_refused_total", "Origin failures this node let through as they were: the ticket's requeues were spent.")
	descCodeAttempts   = prometheus.NewDesc(metricPrefix+"code_attempts_total",
		"Access code attempts this node answered, by result: accepted, wrong, used_up, limited (over join_limit, the code not looked at).",
		[]string{"room", "result"}, nil)
)

// Per priority lane (docs/line.md, "Priority lanes"), labelled lane; sent
// only by a room with lanes.
var (
	descLaneWaiting  = prometheus.NewDesc(metricPrefix+"lane_waiting", "People waiting in each priority lane (room-wide).", []string{"room", "lane"}, nil)
	descLaneAdmitted = prometheus.NewDesc(metricPrefix+"lane_admitted_total", "Places each priority lane let in (room-wide).", []string{"room", "lane"}, nil)
)

var allDescs = []*prometheus.Desc{
	descWaiting, descPlaces, descActive, descPending, descReturning, descAdmitted, descClaimed,
	descAbandoned, descSkipped, descIdledOut, descETA, descHealthy, descJoins, descJoinsLimited, descDirectAdmits, descPolls,
	descClaims, descPassesRejected, descRevokes, descStoreErrors, descReseeds, descReclaims,
	descUnsent, descChallenges, descAnswersRefused, descHeartbeats, descRequeued, descRequeues, descRequeuesSpent,
	descWaitDuration, descSessionDuration, descCodeAttempts, descLaneWaiting, descLaneAdmitted,
}

// Describe implements prometheus.Collector.
func (c *roomCollector) Describe(ch chan<- *prometheus.Desc) {
	for _, d := range allDescs {
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
		gauge := func(d *prometheus.Desc, v float64) {
			ch <- prometheus.MustNewConstMetric(d, prometheus.GaugeValue, v, lr.id)
		}
		counter := func(d *prometheus.Desc, v uint64) {
			ch <- prometheus.MustNewConstMetric(d, prometheus.CounterValue, float64(v), lr.id)
		}
		gauge(descWaiting, float64(in.Waiting))
		gauge(descPlaces, float64(in.Places))
		counter(descSkipped, in.Snapshot.Skipped)
		counter(descIdledOut, in.Snapshot.IdledOut)
		gauge(descActive, float64(in.Snapshot.Active))
		gauge(descPending, float64(in.Snapshot.Pending))
		gauge(descReturning, float64(in.Snapshot.Returning))
		counter(descAdmitted, in.Snapshot.Admitted)
		counter(descClaimed, in.Snapshot.Claimed)
		counter(descAbandoned, in.Snapshot.Abandoned)
		if in.LastETA != nil {
			gauge(descETA, in.LastETA.Seconds())
		}
		healthy := 0.0
		if in.Healthy {
			healthy = 1
		}
		gauge(descHealthy, healthy)
		counter(descJoins, n.Joins)
		counter(descJoinsLimited, n.JoinsLimited)
		counter(descDirectAdmits, n.DirectAdmits)
		counter(descPolls, n.Polls)
		counter(descClaims, n.Claims)
		counter(descPassesRejected, n.PassesRejected)
		counter(descRevokes, n.Revokes)
		counter(descStoreErrors, n.StoreErrors)
		counter(descReseeds, n.Reseeds)
		counter(descReclaims, n.Reclaims)
		counter(descHeartbeats, n.Heartbeats)
		counter(descChallenges, n.Challenges)
		counter(descAnswersRefused, n.AnswersRefused)
		counter(descRequeued, in.Snapshot.Requeued)
		counter(descRequeues, n.Requeues)
		counter(descRequeuesSpent, n.RequeuesRefused)
		unsent := 0
		for _, r := range lr.rooms {
			unsent += r.Unsent()
		}
		gauge(descUnsent, float64(unsent))
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
