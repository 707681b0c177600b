package browser

import (
	"context"
	"net"
	"net/http"
	"testing"
	"time"

	"github.com/caddyserver/caddy/v2/modules/caddyhttp"

	"github.com/foyer-dev/foyer/gateway"
	"github.com/foyer-dev/foyer/internal/clock"
	"github.com/foyer-dev/foyer/waitingroom"
	"github.com/foyer-dev/foyer/waitingroom/memstore"
)

// The variants of the waiting page, as it says them in its data-variant
// attribute (docs/waiting-page.md): a change of variant reloads the live
// page, and the catalog's "<variant>.headline" is its heading.
const (
	variantQueued       = "queued"
	variantNext         = "next"
	variantAwaitingDraw = "awaiting_draw"
	variantRegistered   = "registered"
	variantPrequeue     = "prequeue"
	variantPaused       = "paused"
	variantQueueAll     = "queue_all"
	variantSoldOut      = "sold_out"
	variantClosed       = "closed"
	variantNotOpen      = "not_open"
	variantUnavailable  = "unavailable"
	// variantReconnecting is appended to a variant while the room cannot
	// reach its store.
	variantReconnecting = "+reconnecting"
)

// testClock is one test's clock. The test's rooms (gateway.StandaloneOptions)
// read it and nothing else does, so tests on clocks of their own run in
// parallel, each moving its time without sleeping.
type testClock struct{ *clock.Manual }

func newTestClock() *testClock { return newTestClockAt(time.Now().Truncate(time.Second)) }

// newTestClockAt is a clock that starts at start: subtests that each run a
// room of their own, on settings written for one moment.
func newTestClockAt(start time.Time) *testClock { return &testClock{clock.NewManual(start)} }

// newRoom provisions cfg without Caddy (gateway.NewStandalone) on store (nil:
// a fresh memstore), signing with a key of its own and reading now (nil: the
// wall clock). The room is started; its controller loop is not: a test that
// moves the line ticks it on its own clock.
func newRoom(t *testing.T, cfg gateway.Handler, store waitingroom.Store, now func() time.Time) *gateway.Handler {
	t.Helper()
	if cfg.Room == "" {
		cfg.Room = "browser"
	}
	if store == nil {
		store = memstore.New()
	}
	key, err := waitingroom.GenerateSigningKey()
	if err != nil {
		t.Fatal(err)
	}
	h, err := gateway.NewStandalone(context.Background(), cfg, gateway.StandaloneOptions{Store: store, Key: key, Now: now})
	if err != nil {
		t.Fatal(err)
	}
	return h
}

// englishT is the room's English wording of a catalog key.
func englishT(h *gateway.Handler, key string) string { return h.Message("en", key) }

// headline is the heading of a variant's page in a language.
func headline(h *gateway.Handler, lang, variant string) string {
	return h.Message(lang, variant+".headline")
}

// shopPage is the origin's page: it says which URL the fan landed on.
func shopPage(w http.ResponseWriter, r *http.Request) {
	w.Header().Set("Content-Type", "text/html")
	_, _ = w.Write([]byte(`<!doctype html><title>Shop</title><h1 id="shop">Seats for ` + r.URL.Path + `</h1>`))
}

// serveSite serves h on a loopback port in front of origin, each request
// passed through before (nil: none) first, and returns the site's URL.
func serveSite(t *testing.T, h *gateway.Handler, origin http.HandlerFunc, before func(*http.Request)) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	srv := &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if before != nil {
			before(r)
		}
		_ = h.ServeHTTP(w, r, caddyhttp.HandlerFunc(func(w http.ResponseWriter, r *http.Request) error {
			origin(w, r)
			return nil
		}))
	})}
	go func() { _ = srv.Serve(l) }()
	t.Cleanup(func() { _ = srv.Close() })
	return "http://" + l.Addr().String()
}
