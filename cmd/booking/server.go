package main

import (
	"context"
	"crypto/ed25519"
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"net"
	"net/http"
	"os"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/foyer-dev/foyer/booking"
	"github.com/foyer-dev/foyer/booking/memstore"
	"github.com/foyer-dev/foyer/booking/payments"
	"github.com/foyer-dev/foyer/booking/payments/pgledger"
	"github.com/foyer-dev/foyer/booking/pgstore"
	"github.com/foyer-dev/foyer/booking/storefront"
	"github.com/foyer-dev/foyer/booking/stream"
	"github.com/foyer-dev/foyer/internal/servertiming"
	"github.com/foyer-dev/foyer/static"
	"github.com/foyer-dev/foyer/waitingroom/pass"
)

// app is the assembled service: its handler and what runs beside it.
type app struct {
	handler http.Handler
	svc     *booking.Service
	stream  stream.Stream
	fake    *payments.Fake
	passes  *booking.Passes
	// deps are pinged by /readyz; stats and pool feed /metrics.
	deps    []dependency
	ops     http.Handler // /metrics, /readyz, /healthz
	stats   booking.StatsReader
	pools   []namedPool // none without PostgreSQL
	closers []func()
}

func (a *app) close() {
	for i := len(a.closers) - 1; i >= 0; i-- {
		a.closers[i]()
	}
}

// assemble builds stores, provider, passes and routes from cfg.
func assemble(ctx context.Context, cfg config, log *slog.Logger) (*app, error) {
	a := &app{}
	clock := booking.SystemClock{}

	var store booking.Store
	var ledger payments.Ledger // the fake provider's state: in memory unless there is a database
	if cfg.databaseURL == "" {
		log.Warn("no -database-url: bookings are kept in memory and lost on exit")
		store = memstore.New()
	} else {
		pg, err := pgstore.Open(ctx, cfg.databaseURL, pgstore.Options{MaxConns: int32(cfg.dbMaxConns), BackgroundConns: int32(cfg.dbBgConns)})
		if err != nil {
			return nil, err
		}
		store = pg
		l, err := pgledger.Open(ctx, pg.Pool())
		if err != nil {
			pg.Close()
			return nil, err
		}
		// The provider's webhook deliveries and what the workers ask of it
		// share the store's background pool; a fan's checkout creating a
		// payment keeps the fans' pool (docs/booking.md, "The booking service").
		ledger = l.WithBackground(pg.BackgroundPool(), booking.IsBackground)
		a.pools = []namedPool{{"requests", pg.Pool()}, {"background", pg.BackgroundPool()}}
		a.deps = append(a.deps, dependency{"postgres", pg.Ping})
	}
	a.stats, _ = store.(booking.StatsReader)
	a.closers = append(a.closers, store.Close)

	if cfg.redisURL == "" {
		a.stream = stream.NewMemory()
	} else {
		opt, err := redis.ParseURL(cfg.redisURL)
		if err != nil {
			a.close()
			return nil, fmt.Errorf("-redis-url: %w", err)
		}
		client := redis.NewClient(opt)
		a.closers = append(a.closers, func() { client.Close() })
		if err := client.Ping(ctx).Err(); err != nil {
			// The outbox keeps every message until it is published, so the
			// service can take orders while Redis comes up.
			log.Warn("Redis is not answering yet; the outbox will wait for it", "error", err)
		}
		a.stream = stream.NewRedis(client, "")
		a.deps = append(a.deps, dependency{"redis", func(ctx context.Context) error { return client.Ping(ctx).Err() }})
	}

	webhookSecret, random := secretOr(cfg.webhookSecret)
	if random {
		log.Info("webhook secret generated for this process")
	}
	ticketSecret, random := secretOr(cfg.ticketSecret)
	if random {
		log.Warn("no -ticket-secret: ticket codes are signed with a key that dies with this process")
	}
	a.fake = payments.NewFake(payments.FakeConfig{
		Secret: webhookSecret, WebhookURL: cfg.webhookURL, PublicURL: cfg.publicURL, Logger: log, Ledger: ledger,
		Delivery: payments.DeliveryOptions{Delay: cfg.payDelay, Copies: cfg.payCopies, OutOfOrder: cfg.payOutOfOrder},
		Faults:   payments.Faults{FailShare: cfg.faultFailPayments, FailAttempts: cfg.faultFailAttempts},
	})
	if cfg.faultFailPayments > 0 || cfg.faultNoRetry {
		log.Warn("rehearsal faults on: never in production", "fail_payments", cfg.faultFailPayments, "fail_attempts", cfg.faultFailAttempts, "no_retry", cfg.faultNoRetry)
	}
	a.svc = booking.NewService(booking.Config{
		Store: store, Provider: a.fake, Clock: clock, HoldTTL: cfg.holdTTL, MaxPerCustomer: cfg.maxPerCustomer,
		WebhookSecret: webhookSecret, PublicURL: cfg.publicURL, TicketSecret: ticketSecret, Logger: log,
		ReconcileAfter: cfg.reconcileAfter,
	})

	mux := http.NewServeMux()
	if cfg.devPasses {
		key, err := pass.GenerateSigner()
		if err != nil {
			a.close()
			return nil, err
		}
		a.passes = booking.NewStaticPasses(map[string]ed25519.PublicKey{key.KeyID(): key.Public()}, cfg.room, clock).WithIssuer(cfg.issuer)
		a.passes.Cookie = devPassCookie
		mux.Handle("/dev/pass", devPassHandler(key, cfg.room, cfg.issuer))
		log.Warn("-dev-passes: this process signs its own admission passes; put it behind Foyer for a real on-sale")
	} else {
		a.passes = booking.NewJWKSPasses(cfg.jwks, cfg.room, clock, nil).WithIssuer(cfg.issuer)
		if err := a.passes.Load(ctx); err != nil {
			// The gateway may start after us; requests get 503 until the keys
			// arrive, and every request with a pass tries again.
			log.Warn("pass keys not loaded yet", "jwks", cfg.jwks, "error", err)
		}
	}
	api := booking.NewAPI(booking.APIConfig{Service: a.svc, Auth: a.passes, AdminToken: cfg.adminToken, Logger: log, FaultNoRetry: cfg.faultNoRetry, Waitlist: cfg.waitlist})
	a.deps = append(a.deps, dependency{"pass_keys", a.passes.EnsureLoaded})
	webhooks := newWebhookCounter()
	// Every API answer says in its Server-Timing header how long it waited
	// for a database connection and spent in the database (docs/booking.md,
	// "The booking service").
	timed := servertiming.Middleware(api)
	mux.Handle("/api/", timed)
	mux.Handle("POST /api/payments/webhook", webhooks.wrap(timed))
	a.ops = opsMux(metricsHandler(newStoreCollector(a.stats, a.pools, clock, log), webhooks), readyHandler(a.deps))
	if cfg.opsAddr == "" {
		mux.Handle("GET /metrics", a.ops)
		mux.Handle("GET /readyz", a.ops)
	}
	mux.Handle("/pay/", a.fake.Handler())
	mux.HandleFunc("GET /healthz", healthz)
	if err := mountStorefront(mux, api, cfg.maxPerCustomer, log); err != nil {
		a.close()
		return nil, err
	}
	// Bodies a handler refused unread are drained, so a proxy in front
	// reads the 413 (or 401) instead of a reset connection.
	a.handler = booking.DrainBody(mux, booking.DefaultDrainLimit)

	if cfg.seedDemo {
		if err := seedDemo(ctx, a.svc, log); err != nil {
			a.close()
			return nil, err
		}
	}
	return a, nil
}

// mountStorefront serves the storefront's pages, rendered in the fan's
// language and working without JavaScript (booking/storefront), which read
// and write through api; its assets under /storefront/, and the site's icon.
func mountStorefront(mux *http.ServeMux, api http.Handler, maxPerCustomer int, log *slog.Logger) error {
	files, err := fs.Sub(static.Storefront, "storefront")
	if err != nil {
		return err
	}
	shop, err := storefront.New(storefront.Config{API: api, Files: files, MaxPerCustomer: maxPerCustomer, Logger: log})
	if err != nil {
		return err
	}
	for _, pattern := range storefront.Routes {
		mux.Handle(pattern, shop)
	}
	mux.Handle("GET /storefront/", http.StripPrefix("/storefront/", http.FileServerFS(files)))
	icon, err := fs.ReadFile(files, "favicon.ico")
	if err != nil {
		return err
	}
	mux.HandleFunc("GET /favicon.ico", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "image/x-icon")
		w.Header().Set("Cache-Control", "public, max-age=86400")
		_, _ = w.Write(icon)
	})
	return nil
}

// seedDemo creates the demo concert unless there is an event already, so a
// restart on a database does not create it twice, nor do two processes
// starting together on one database (they take turns under a lock).
func seedDemo(ctx context.Context, svc *booking.Service, log *slog.Logger) error {
	if ex, ok := svc.Store().(interface {
		Exclusive(context.Context, func(context.Context) error) error
	}); ok {
		return ex.Exclusive(ctx, func(ctx context.Context) error { return seedDemoOnce(ctx, svc, log) })
	}
	return seedDemoOnce(ctx, svc, log)
}

func seedDemoOnce(ctx context.Context, svc *booking.Service, log *slog.Logger) error {
	events, err := svc.Store().Events(ctx)
	if err != nil {
		return err
	}
	if len(events) > 0 {
		return nil
	}
	e, err := svc.CreateEvent(ctx, booking.DemoEventSpec(svc.Clock().Now()))
	if err != nil {
		return err
	}
	log.Info("demo concert created", "event", e.ID, "places", e.Capacity())
	return nil
}

// serve runs the service until ctx ends. ln may be nil to listen on cfg.addr.
func serve(ctx context.Context, cfg config, log *slog.Logger, ln net.Listener) error {
	a, err := assemble(ctx, cfg, log)
	if err != nil {
		return err
	}
	defer a.close()
	if ln == nil {
		if ln, err = net.Listen("tcp", cfg.addr); err != nil {
			return err
		}
	}
	srv := &http.Server{
		Handler:           a.handler,
		ReadHeaderTimeout: 10 * time.Second,
		ReadTimeout:       30 * time.Second,
		WriteTimeout:      30 * time.Second,
		IdleTimeout:       2 * time.Minute,
	}
	host, _ := os.Hostname()
	a.svc.RunWorkers(ctx, a.stream, fmt.Sprintf("%s-%d", host, os.Getpid()))
	// The fake provider's deliveries stand for another company's work: no
	// fan waits on them.
	go a.fake.Run(booking.Background(ctx), 250*time.Millisecond)
	go a.svc.RunIdempotencyPruner(ctx, time.Minute)
	go a.passes.Run(ctx, 5*time.Minute, func(err error) { log.Warn("refreshing pass keys", "error", err) })
	servers := []*http.Server{srv}
	errc := make(chan error, 2)
	go func() { errc <- srv.Serve(ln) }()
	log.Info("booking service listening", "addr", ln.Addr().String(), "storefront", cfg.publicURL)
	if cfg.opsAddr != "" {
		opsLn, err := net.Listen("tcp", cfg.opsAddr)
		if err != nil {
			_ = srv.Close()
			return fmt.Errorf("-ops-addr: %w", err)
		}
		ops := &http.Server{Handler: a.ops, ReadHeaderTimeout: 10 * time.Second, WriteTimeout: 30 * time.Second}
		servers = append(servers, ops)
		go func() { errc <- ops.Serve(opsLn) }()
		log.Info("metrics and readiness listening", "addr", opsLn.Addr().String())
	}
	var serveErr error
	select {
	case serveErr = <-errc:
	case <-ctx.Done():
	}
	shutdown, cancel := context.WithTimeout(context.WithoutCancel(ctx), 10*time.Second)
	defer cancel()
	for _, s := range servers {
		if err := s.Shutdown(shutdown); err != nil && !errors.Is(err, http.ErrServerClosed) && serveErr == nil {
			serveErr = err
		}
	}
	if errors.Is(serveErr, http.ErrServerClosed) {
		return nil
	}
	return serveErr
}
