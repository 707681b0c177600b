package main

import (
	"context"
	"log/slog"
	"net/http"
	"strconv"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/prometheus/client_golang/prometheus/promhttp"

	"github.com/foyer-dev/foyer/booking"
)

// metricPrefix names every metric of the booking service.
const metricPrefix = "foyer_booking_"

// statsTimeout bounds the store reads of one scrape: a slow database must
// not pile scrapes up.
const statsTimeout = 2 * time.Second

// namedPool is a connection pool and the value of its metrics' pool label:
// "requests" (the fans') or "background" (work no fan waits on).
type namedPool struct {
	name string
	pool *pgxpool.Pool
}

// storeCollector reports the store's snapshot (booking.Stats) and the
// connection pools, read at scrape time. The store figures are the whole
// database's, so every process sharing it reports the same; the pools are
// this process's own.
type storeCollector struct {
	stats booking.StatsReader // nil: the store reports none
	pools []namedPool         // none: no PostgreSQL
	clock booking.Clock
	log   *slog.Logger

	up, holds, held, orders, payments, tickets, delivered, paidNoTickets,
	outboxPending, outboxLag, idempotency *prometheus.Desc
	poolConns, poolMax, poolAcquires, poolEmptyAcquires, poolWait *prometheus.Desc
}

func desc(name, help string, labels ...string) *prometheus.Desc {
	return prometheus.NewDesc(metricPrefix+name, help, labels, nil)
}

func newStoreCollector(stats booking.StatsReader, pools []namedPool, clock booking.Clock, log *slog.Logger) *storeCollector {
	return &storeCollector{
		stats: stats, pools: pools, clock: clock, log: log,
		up:                desc("store_up", "1 if the last scrape could read the store's figures, else 0."),
		holds:             desc("holds_active", "Holds active and not yet expired."),
		held:              desc("held_places", "Places held by active holds."),
		orders:            desc("orders", "Orders by status.", "status"),
		payments:          desc("payments", "Payments by status.", "status"),
		tickets:           desc("tickets", "Tickets issued."),
		delivered:         desc("tickets_delivered", "Tickets whose delivery is recorded."),
		paidNoTickets:     desc("paid_orders_without_tickets", "Paid orders with no ticket; anything but 0 is a bug."),
		outboxPending:     desc("outbox_pending", "Outbox messages not yet published to the stream."),
		outboxLag:         desc("outbox_lag_seconds", "Age of the oldest unpublished outbox message; 0 when none waits."),
		idempotency:       desc("idempotency_keys", "Idempotency records kept (pruned after 24 h)."),
		poolConns:         desc("db_pool_connections", "PostgreSQL connections of this process by pool and state.", "pool", "state"),
		poolMax:           desc("db_pool_max_connections", "The pool's bound (-db-max-conns for requests, -db-background-conns for background).", "pool"),
		poolAcquires:      desc("db_pool_acquires_total", "Connections taken from the pool.", "pool"),
		poolEmptyAcquires: desc("db_pool_empty_acquires_total", "Acquires that had to wait for a connection: the pool was too small.", "pool"),
		poolWait:          desc("db_pool_acquire_wait_seconds_total", "Time spent waiting for a connection.", "pool"),
	}
}

func (c *storeCollector) Describe(ch chan<- *prometheus.Desc) { prometheus.DescribeByCollect(c, ch) }

func (c *storeCollector) Collect(ch chan<- prometheus.Metric) {
	gauge := func(d *prometheus.Desc, v float64, labels ...string) {
		ch <- prometheus.MustNewConstMetric(d, prometheus.GaugeValue, v, labels...)
	}
	counter := func(d *prometheus.Desc, v float64, labels ...string) {
		ch <- prometheus.MustNewConstMetric(d, prometheus.CounterValue, v, labels...)
	}
	for _, p := range c.pools {
		s := p.pool.Stat()
		gauge(c.poolConns, float64(s.AcquiredConns()), p.name, "acquired")
		gauge(c.poolConns, float64(s.IdleConns()), p.name, "idle")
		gauge(c.poolConns, float64(s.ConstructingConns()), p.name, "constructing")
		gauge(c.poolMax, float64(s.MaxConns()), p.name)
		counter(c.poolAcquires, float64(s.AcquireCount()), p.name)
		counter(c.poolEmptyAcquires, float64(s.EmptyAcquireCount()), p.name)
		counter(c.poolWait, s.AcquireDuration().Seconds(), p.name)
	}
	if c.stats == nil {
		return
	}
	// A scrape is no fan's request: its reads take a background connection.
	ctx, cancel := context.WithTimeout(booking.Background(context.Background()), statsTimeout)
	defer cancel()
	now := c.clock.Now()
	st, err := c.stats.Stats(ctx, now)
	if err != nil {
		c.log.Warn("metrics: reading the store's figures", "error", err)
		gauge(c.up, 0)
		return
	}
	gauge(c.up, 1)
	gauge(c.holds, float64(st.ActiveHolds))
	gauge(c.held, float64(st.HeldPlaces))
	for _, s := range []booking.OrderStatus{booking.OrderPendingPayment, booking.OrderPaid, booking.OrderRefundPending, booking.OrderRefunded, booking.OrderPaymentFailed} {
		gauge(c.orders, float64(st.Orders[s]), string(s))
	}
	for _, s := range []booking.PaymentStatus{booking.PaymentPending, booking.PaymentSucceeded, booking.PaymentRefunded, booking.PaymentFailed} {
		gauge(c.payments, float64(st.Payments[s]), string(s))
	}
	gauge(c.tickets, float64(st.Tickets))
	gauge(c.delivered, float64(st.Deliveries))
	gauge(c.paidNoTickets, float64(st.PaidWithoutTickets))
	gauge(c.outboxPending, float64(st.OutboxPending))
	lag := 0.0
	if !st.OutboxOldest.IsZero() {
		lag = max(0, now.Sub(st.OutboxOldest).Seconds())
	}
	gauge(c.outboxLag, lag)
	gauge(c.idempotency, float64(st.IdempotencyRecords))
}

// webhookCounter counts webhook answers by status code: a rise of 400s is
// forged or misconfigured traffic, of 503s a database in trouble.
type webhookCounter struct{ *prometheus.CounterVec }

func newWebhookCounter() webhookCounter {
	return webhookCounter{prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: metricPrefix + "webhooks_total", Help: "Payment webhooks answered, by status code.",
	}, []string{"code"})}
}

// wrap counts the answers of next.
func (c webhookCounter) wrap(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		sw := &statusWriter{ResponseWriter: w, status: http.StatusOK}
		next.ServeHTTP(sw, r)
		c.WithLabelValues(strconv.Itoa(sw.status)).Inc()
	})
}

type statusWriter struct {
	http.ResponseWriter
	status int
	wrote  bool
}

func (w *statusWriter) WriteHeader(code int) {
	if !w.wrote {
		w.status, w.wrote = code, true
	}
	w.ResponseWriter.WriteHeader(code)
}

// metricsHandler serves the registry with Go runtime and process metrics.
func metricsHandler(cs ...prometheus.Collector) http.Handler {
	reg := prometheus.NewRegistry()
	reg.MustRegister(collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))
	reg.MustRegister(cs...)
	return promhttp.HandlerFor(reg, promhttp.HandlerOpts{Registry: reg})
}
