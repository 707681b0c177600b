package main

import (
	"crypto/rand"
	"encoding/hex"
	"errors"
	"flag"
	"fmt"
	"io"
	"net"
	"strconv"
	"strings"
	"time"

	"github.com/foyer-dev/foyer/waitingroom/pass"
)

// config is everything the service reads from its flags and environment.
type config struct {
	addr           string
	opsAddr        string
	databaseURL    string
	redisURL       string
	jwks           string
	room           string
	issuer         string
	dbMaxConns     int
	dbBgConns      int
	adminToken     string
	holdTTL        time.Duration
	maxPerCustomer int
	seedDemo       bool
	devPasses      bool
	publicURL      string
	webhookURL     string
	webhookSecret  string
	ticketSecret   string
	payDelay       time.Duration
	payCopies      int
	payOutOfOrder  bool
	reconcileAfter time.Duration
	// Rehearsal faults, all off by default (docs/rehearsal.md).
	faultFailPayments float64
	faultFailAttempts int
	faultNoRetry      bool
	waitlist          bool
}

const usageHeader = `booking: the reference booking service behind a Foyer waiting room.

It serves the storefront (/), the JSON API (/api/...), the fake payment
provider's pay page (/pay/...) and, with -dev-passes, /dev/pass. Every flag
has an environment twin, shown in brackets; a flag on the command line wins.

Behind Foyer:
  booking -jwks http://localhost:8080/_waiting-room/jwks.json -room demo -public-url http://localhost:8080 -seed-demo
Standalone demo, no gateway, no servers:
  booking -dev-passes -seed-demo

Flags:
`

// parseConfig reads args, then fills every flag not given from getenv.
func parseConfig(args []string, getenv func(string) string, stderr io.Writer) (config, error) {
	var c config
	fs := flag.NewFlagSet("booking", flag.ContinueOnError)
	fs.SetOutput(stderr)
	envs := map[string]string{}
	str := func(p *string, name, env, def, usage string) {
		fs.StringVar(p, name, def, usage+" ["+env+"]")
		envs[name] = env
	}
	str(&c.addr, "addr", "BOOKING_ADDR", ":9000", "listen address")
	str(&c.opsAddr, "ops-addr", "BOOKING_OPS_ADDR", "", "listen address of /metrics and /readyz alone (e.g. 127.0.0.1:9001); empty serves them on -addr, where a gateway in front shows them to everyone")
	str(&c.databaseURL, "database-url", "DATABASE_URL", "", "PostgreSQL URL; empty keeps everything in memory (one process, lost on exit)")
	str(&c.redisURL, "redis-url", "REDIS_URL", "", "Redis URL for the outbox stream; empty uses an in-process stream")
	str(&c.jwks, "jwks", "BOOKING_JWKS", "", "where the gateway publishes its pass keys: a URL (e.g. http://localhost:8080/_waiting-room/jwks.json) or a file")
	str(&c.room, "room", "BOOKING_ROOM", "", "the gateway's waiting room (its room setting): only passes for it are accepted; required with -jwks")
	str(&c.issuer, "issuer", "BOOKING_ISSUER", pass.DefaultIssuer, "the gateway's issuer setting: only passes it issued are accepted")
	str(&c.adminToken, "admin-token", "BOOKING_ADMIN_TOKEN", "", "bearer token for /api/admin/; empty disables the admin API")
	str(&c.publicURL, "public-url", "BOOKING_PUBLIC_URL", "", "the URL fans reach the storefront at, for pay page links and returns (default http://localhost<addr>)")
	str(&c.webhookURL, "webhook-url", "BOOKING_WEBHOOK_URL", "", "where the fake provider posts its webhooks (default http://127.0.0.1<port>/api/payments/webhook)")
	str(&c.webhookSecret, "webhook-secret", "BOOKING_WEBHOOK_SECRET", "", "secret that signs webhooks; empty makes a random one per process")
	str(&c.ticketSecret, "ticket-secret", "BOOKING_TICKET_SECRET", "", "secret that signs ticket codes and order links; empty makes a random one per process")
	var holdTTL, payDelay, maxPer, payCopies, reconcileAfter, dbMaxConns, dbBgConns, failPayments, failAttempts string
	str(&dbMaxConns, "db-max-conns", "BOOKING_DB_MAX_CONNS", "0", "PostgreSQL connections per process for the fans' requests; 0 is 8 per CPU, at least 16 (processes sharing a database share its max_connections)")
	str(&dbBgConns, "db-background-conns", "BOOKING_DB_BACKGROUND_CONNS", "0", "PostgreSQL connections per process for work no fan waits on (workers, payment webhooks), beside -db-max-conns; 0 is a quarter of it, at least 2")
	str(&holdTTL, "hold-ttl", "BOOKING_HOLD_TTL", "5m", "how long a hold lasts, and how far checkout extends it")
	str(&maxPer, "max-per-customer", "BOOKING_MAX_PER_CUSTOMER", "4", "seats one customer may hold or buy per event")
	str(&payDelay, "fake-pay-delay", "BOOKING_FAKE_PAY_DELAY", "0s", "fake provider: hold every webhook back this long")
	str(&reconcileAfter, "reconcile-after", "BOOKING_RECONCILE_AFTER", "1m", "ask the provider about an order still waiting for its payment this long after checkout")
	str(&payCopies, "fake-pay-copies", "BOOKING_FAKE_PAY_COPIES", "1", "fake provider: deliver every webhook this many times")
	str(&failPayments, "fault-fail-payments", "BOOKING_FAULT_FAIL_PAYMENTS", "0", "rehearsal fault: the fake provider fails this share (0 to 1) of new payments as a partial outage would, and the checkout fails on the service's side; 0 never")
	str(&failAttempts, "fault-fail-attempts", "BOOKING_FAULT_FAIL_ATTEMPTS", "1", "rehearsal fault: how many attempts of each payment -fault-fail-payments fails before one goes through (1 to 100)")
	boolean := func(p *bool, name, env, usage string) {
		fs.BoolVar(p, name, false, usage+" ["+env+"]")
		envs[name] = env
	}
	boolean(&c.seedDemo, "seed-demo", "BOOKING_SEED_DEMO", "create the demo concert at start when there is no event yet")
	boolean(&c.devPasses, "dev-passes", "BOOKING_DEV_PASSES", "no gateway: sign passes here and hand one to each browser at /dev/pass (never in production)")
	boolean(&c.payOutOfOrder, "fake-pay-out-of-order", "BOOKING_FAKE_PAY_OUT_OF_ORDER", "fake provider: deliver each batch of webhooks newest first")
	boolean(&c.waitlist, "waitlist", "BOOKING_WAITLIST", "once an event has no place left, hold the places that come back for fans the room lets in from its waitlist (docs/waitlist.md)")
	boolean(&c.faultNoRetry, "fault-no-retry", "BOOKING_FAULT_NO_RETRY", "rehearsal fault: never answer X-Waiting-Room-Command: retry, so a fan the service failed is not requeued")
	fs.Usage = func() {
		fmt.Fprint(stderr, usageHeader)
		fs.PrintDefaults()
	}
	if err := fs.Parse(args); err != nil {
		return c, err
	}
	if fs.NArg() > 0 {
		return c, fmt.Errorf("unexpected arguments: %s", strings.Join(fs.Args(), " "))
	}
	given := map[string]bool{}
	fs.Visit(func(f *flag.Flag) { given[f.Name] = true })
	for name, env := range envs {
		if v := getenv(env); v != "" && !given[name] {
			if err := fs.Set(name, v); err != nil {
				return c, fmt.Errorf("%s: %w", env, err)
			}
		}
	}
	var err error
	if c.holdTTL, err = time.ParseDuration(holdTTL); err != nil || c.holdTTL < 10*time.Second || c.holdTTL > 24*time.Hour {
		return c, fmt.Errorf("-hold-ttl %q: want a duration from 10s to 24h", holdTTL)
	}
	if c.payDelay, err = time.ParseDuration(payDelay); err != nil || c.payDelay < 0 {
		return c, fmt.Errorf("-fake-pay-delay %q: want a duration", payDelay)
	}
	if c.reconcileAfter, err = time.ParseDuration(reconcileAfter); err != nil || c.reconcileAfter < time.Second || c.reconcileAfter > 24*time.Hour {
		return c, fmt.Errorf("-reconcile-after %q: want a duration from 1s to 24h", reconcileAfter)
	}
	if c.maxPerCustomer, err = strconv.Atoi(maxPer); err != nil || c.maxPerCustomer < 1 || c.maxPerCustomer > 50 {
		return c, fmt.Errorf("-max-per-customer %q: want 1 to 50", maxPer)
	}
	if c.payCopies, err = strconv.Atoi(payCopies); err != nil || c.payCopies < 1 || c.payCopies > 10 {
		return c, fmt.Errorf("-fake-pay-copies %q: want 1 to 10", payCopies)
	}
	if c.faultFailPayments, err = strconv.ParseFloat(failPayments, 64); err != nil || !(c.faultFailPayments >= 0 && c.faultFailPayments <= 1) {
		return c, fmt.Errorf("-fault-fail-payments %q: want a share from 0 to 1", failPayments)
	}
	if c.faultFailAttempts, err = strconv.Atoi(failAttempts); err != nil || c.faultFailAttempts < 1 || c.faultFailAttempts > 100 {
		return c, fmt.Errorf("-fault-fail-attempts %q: want 1 to 100", failAttempts)
	}
	if c.dbMaxConns, err = strconv.Atoi(dbMaxConns); err != nil || c.dbMaxConns < 0 || c.dbMaxConns > 1000 {
		return c, fmt.Errorf("-db-max-conns %q: want 0 (automatic) to 1000", dbMaxConns)
	}
	if c.dbBgConns, err = strconv.Atoi(dbBgConns); err != nil || c.dbBgConns < 0 || c.dbBgConns > 1000 {
		return c, fmt.Errorf("-db-background-conns %q: want 0 (automatic) to 1000", dbBgConns)
	}
	if c.issuer == "" {
		return c, errors.New("-issuer must name the gateway's issuer (default " + pass.DefaultIssuer + ")")
	}
	if c.jwks == "" && !c.devPasses {
		return c, errors.New("set -jwks to the gateway's key set (behind Foyer), or -dev-passes for a standalone demo")
	}
	if c.jwks != "" && c.devPasses {
		return c, errors.New("-jwks and -dev-passes exclude each other")
	}
	// Behind a gateway the room is required: a pass of any other room on the
	// same gateway (or any gateway sharing its keys) must not buy seats here.
	if c.jwks != "" && c.room == "" {
		return c, errors.New("set -room to the gateway's room id (its `room` setting): passes for any other room are refused")
	}
	if c.devPasses && c.room == "" {
		c.room = "dev"
	}
	if c.opsAddr != "" {
		if _, _, err := net.SplitHostPort(c.opsAddr); err != nil {
			return c, fmt.Errorf("-ops-addr %q: %w", c.opsAddr, err)
		}
	}
	_, port, err := net.SplitHostPort(c.addr)
	if err != nil {
		return c, fmt.Errorf("-addr %q: %w", c.addr, err)
	}
	if c.publicURL == "" {
		c.publicURL = "http://localhost:" + port
	}
	c.publicURL = strings.TrimRight(c.publicURL, "/")
	if c.webhookURL == "" {
		c.webhookURL = "http://127.0.0.1:" + port + "/api/payments/webhook"
	}
	return c, nil
}

// secretOr returns s, or a random secret when s is empty.
func secretOr(s string) (secret []byte, random bool) {
	if s != "" {
		return []byte(s), false
	}
	b := make([]byte, 32)
	_, _ = rand.Read(b)
	return []byte(hex.EncodeToString(b)), true
}
