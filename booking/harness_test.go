package booking_test

import (
	"bytes"
	"context"
	"crypto/ed25519"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/foyer-dev/foyer/booking"
	"github.com/foyer-dev/foyer/booking/memstore"
	"github.com/foyer-dev/foyer/booking/payments"
	"github.com/foyer-dev/foyer/booking/pgstore"
	"github.com/foyer-dev/foyer/booking/pgstore/pgtest"
	"github.com/foyer-dev/foyer/booking/stream"
	"github.com/foyer-dev/foyer/waitingroom/pass"
)

const adminToken = "admin-secret"

var epoch = time.Date(2026, 3, 1, 10, 0, 0, 0, time.UTC)

// harness is a booking service on a real HTTP server, with the fake provider,
// an in-process stream, a manual clock and a key that signs admission passes.
type harness struct {
	t      *testing.T
	clock  *booking.ManualClock
	store  booking.Store
	svc    *booking.Service
	fake   *payments.Fake
	stream *stream.Memory
	key    *pass.Signer
	srv    *httptest.Server
}

// backends runs fn against the memory store and the PostgreSQL store.
func backends(t *testing.T, fn func(t *testing.T, newStore func(t *testing.T) booking.Store)) {
	t.Run("memory", func(t *testing.T) {
		t.Parallel()
		fn(t, func(*testing.T) booking.Store { return memstore.New() })
	})
	t.Run("postgres", func(t *testing.T) {
		t.Parallel()
		fn(t, func(t *testing.T) booking.Store { return openPG(t, pgtest.NewDatabase(t)) })
	})
}

func openPG(t *testing.T, url string) booking.Store {
	t.Helper()
	s, err := pgstore.Open(context.Background(), url, pgstore.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(s.Close)
	return s
}

func newHarness(t *testing.T, store booking.Store) *harness {
	t.Helper()
	h := &harness{t: t, clock: booking.NewManualClock(epoch), store: store, stream: stream.NewMemory()}
	key, err := pass.GenerateSigner()
	if err != nil {
		t.Fatal(err)
	}
	h.key = key
	mux := http.NewServeMux()
	h.srv = httptest.NewServer(mux)
	t.Cleanup(h.srv.Close)
	secret := []byte("whsec_test")
	h.fake = payments.NewFake(payments.FakeConfig{
		Secret: secret, WebhookURL: h.srv.URL + "/api/payments/webhook", PublicURL: h.srv.URL, Now: h.clock.Now,
	})
	h.svc = booking.NewService(booking.Config{
		Store: store, Provider: h.fake, Clock: h.clock, WebhookSecret: secret,
		PublicURL: h.srv.URL, TicketSecret: []byte("tickets"),
	})
	api := booking.NewAPI(booking.APIConfig{
		Service: h.svc, AdminToken: adminToken,
		Auth: booking.NewStaticPasses(keysOf(key), "onsale", h.clock),
	})
	mux.Handle("/api/", api)
	mux.Handle("/pay/", h.fake.Handler())
	return h
}

func keysOf(keys ...*pass.Signer) map[string]ed25519.PublicKey {
	m := map[string]ed25519.PublicKey{}
	for _, k := range keys {
		m[k.KeyID()] = k.Public()
	}
	return m
}

// pass issues an admission pass for customer, valid for an hour of the
// harness clock.
func (h *harness) pass(customer string) string {
	h.t.Helper()
	now := h.clock.Now()
	tok, err := h.key.Sign(pass.Claims{Room: "onsale", Subject: customer, IssuedAt: now, ExpiresAt: now.Add(time.Hour)}, pass.DefaultIssuer)
	if err != nil {
		h.t.Fatal(err)
	}
	return tok
}

type response struct {
	status int
	header http.Header
	body   []byte
}

func (r response) json(t *testing.T) map[string]any {
	t.Helper()
	var m map[string]any
	if err := json.Unmarshal(r.body, &m); err != nil {
		t.Fatalf("response is not a JSON object: %v: %s", err, r.body)
	}
	return m
}

func (r response) decode(t *testing.T, v any) {
	t.Helper()
	if err := json.Unmarshal(r.body, v); err != nil {
		t.Fatalf("decoding %s: %v", r.body, err)
	}
}

// req sends a request as customer (no pass when customer is ""). body may be
// a string (sent as is) or a value (sent as JSON). headers are name, value
// pairs.
func (h *harness) req(method, path, customer string, body any, headers ...string) response {
	h.t.Helper()
	var rd io.Reader
	switch b := body.(type) {
	case nil:
	case string:
		rd = strings.NewReader(b)
	case []byte:
		rd = bytes.NewReader(b)
	default:
		js, _ := json.Marshal(b)
		rd = bytes.NewReader(js)
	}
	req, err := http.NewRequest(method, h.srv.URL+path, rd)
	if err != nil {
		h.t.Fatal(err)
	}
	if customer != "" {
		req.Header.Set(booking.PassHeader, h.pass(customer))
	}
	for i := 0; i+1 < len(headers); i += 2 {
		req.Header.Set(headers[i], headers[i+1])
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		h.t.Fatal(err)
	}
	defer resp.Body.Close()
	data, _ := io.ReadAll(resp.Body)
	return response{status: resp.StatusCode, header: resp.Header, body: data}
}

// want fails unless the response has the status.
func (r response) want(t *testing.T, status int) response {
	t.Helper()
	if r.status != status {
		t.Fatalf("status %d, want %d: %s", r.status, status, r.body)
	}
	return r
}

// createEvent posts a venue with the admin token and returns the event id.
func (h *harness) createEvent(spec any) int64 {
	h.t.Helper()
	r := h.req("POST", "/api/admin/events", "", spec, "Authorization", "Bearer "+adminToken).want(h.t, http.StatusCreated)
	var out struct {
		ID int64 `json:"id"`
	}
	r.decode(h.t, &out)
	return out.ID
}

// smallVenue is the JSON venue the HTTP tests use.
func smallVenue() map[string]any {
	return map[string]any{
		"name": "Test night", "starts_at": "2026-04-01T20:00:00Z",
		"sections": []map[string]any{{"id": "A", "rows": 2, "seats_per_row": 5, "price": "120.00"}},
		"zones":    []map[string]any{{"id": "FLOOR", "capacity": 6, "price": "80.00"}},
	}
}

// pay completes a payment on the fake's pay page, as a browser would.
func (h *harness) payOnPage(payURL string) {
	h.t.Helper()
	client := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	resp, err := client.PostForm(payURL, map[string][]string{"action": {"pay"}})
	if err != nil {
		h.t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusSeeOther {
		h.t.Fatalf("pay page answered %d", resp.StatusCode)
	}
}

// checkInvariants fails the test if the store's invariants do not hold.
func (h *harness) checkInvariants() {
	h.t.Helper()
	rep, err := h.store.CheckInvariants(context.Background())
	if err != nil {
		h.t.Fatal(err)
	}
	if !rep.OK() {
		h.t.Fatalf("invariants violated: %v", rep.Violations)
	}
}

type streamMessage = stream.Message

func newMemStore() booking.Store { return memstore.New() }

func itoa(n int64) string { return strconv.FormatInt(n, 10) }

// fingerprint is how the API fingerprints a request for idempotency.
func fingerprint(method, path, body string) string {
	sum := sha256.Sum256([]byte(method + " " + path + "\n" + body))
	return hex.EncodeToString(sum[:])
}

// waitDelivered waits, in real time and at most within, until each of the
// one-ticket orders has its ticket delivered by a worker running beside the
// test.
func (h *harness) waitDelivered(ctx context.Context, orders []string, within time.Duration) {
	h.t.Helper()
	deadline := time.Now().Add(within)
	for _, oid := range orders {
		for {
			o, err := h.store.Order(ctx, oid, "")
			if err == nil && len(o.Tickets) == 1 && o.Tickets[0].Delivery != nil {
				break
			}
			if time.Now().After(deadline) {
				h.t.Fatalf("order %s never delivered: %+v, %v", oid, o, err)
			}
			time.Sleep(20 * time.Millisecond)
		}
	}
}
