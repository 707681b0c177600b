package main

import (
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/foyer-dev/foyer/booking"
)

// The booking service and Foyer as child processes: how each is started and
// known to be up, and what a test asks a booking process.

// bookingChild is a booking service process.
type bookingChild struct {
	*child
	url string
	// signer signs the passes of request's customers; set by startBooking.
	signer *passSigner
}

// newBooking prepares the booking binary on port (0: a free one) with args;
// start runs it. It counts as ready once /healthz answers, within 30 s.
func newBooking(t *testing.T, name string, port int, args ...string) *bookingChild {
	t.Helper()
	if port == 0 {
		port = freePort(t)
	}
	addr := fmt.Sprintf("127.0.0.1:%d", port)
	url := "http://" + addr
	c := newChild(t, name, bookingBinary(t), readyCheck{url + "/healthz", http.StatusOK, 30 * time.Second},
		append([]string{"-addr", addr}, args...)...)
	return &bookingChild{child: c, url: url}
}

// runBooking starts the booking binary on port (0: a free one) with args,
// and waits until it is live.
func runBooking(t *testing.T, name string, port int, args ...string) *bookingChild {
	t.Helper()
	b := newBooking(t, name, port, args...)
	b.start()
	b.awaitReady()
	return b
}

const faultAdminToken = "fault-admin"

// startBooking starts the service on a free loopback port with every flag a
// shop needs, then extra, and passes signed by a key whose JWKS is a file, so
// the test's customers keep their identity across restarts of the service.
// A start or restart gets 15 s to be ready.
func startBooking(t *testing.T, databaseURL, redisURL string, extra ...string) *bookingChild {
	t.Helper()
	signer := newPassSigner(t)
	port := freePort(t)
	b := newBooking(t, "booking", port, append([]string{
		"-database-url", databaseURL, "-redis-url", redisURL,
		"-jwks", signer.jwks, "-room", shopRoom, "-admin-token", faultAdminToken,
		"-public-url", fmt.Sprintf("http://127.0.0.1:%d", port),
		"-webhook-secret", "whsec-fault", "-ticket-secret", "tickets-fault",
	}, extra...)...)
	b.signer = signer
	b.ready.limit = 15 * time.Second
	b.start()
	b.awaitReady()
	return b
}

// request sends a request as customer (no pass when customer is ""), to a
// path of the process or to an absolute URL, and follows no redirect. It
// never fails the test: an answer the process did not give (it was down, or
// died mid-request) is the reply's err.
func (b *bookingChild) request(method, path, customer string, body any, header ...string) reply {
	url := path
	if strings.HasPrefix(path, "/") {
		url = b.url + path
	}
	h := http.Header{}
	if customer != "" {
		tok, err := b.signer.issue(customer)
		if err != nil {
			return reply{err: err}
		}
		h.Set(booking.PassHeader, tok)
	}
	for i := 0; i+1 < len(header); i += 2 {
		h.Set(header[i], header[i+1])
	}
	return exchange(noRedirects, method, url, h, body)
}

// createEvent creates a one-section venue of seats and returns its id.
func (b *bookingChild) createEvent(rows, perRow int) int64 {
	b.t.Helper()
	r := b.request("POST", "/api/admin/events", "", map[string]any{
		"name": "Fault night", "starts_at": time.Now().Add(30 * 24 * time.Hour).UTC().Format(time.RFC3339),
		"sections": []map[string]any{{"id": "A", "rows": rows, "seats_per_row": perRow, "price": "50.00"}},
	}, "Authorization", "Bearer "+faultAdminToken)
	if r.err != nil || r.status != http.StatusCreated {
		b.t.Fatalf("creating the event: %d %v %s", r.status, r.err, r.body)
	}
	var ev struct {
		ID int64 `json:"id"`
	}
	_ = json.Unmarshal(r.body, &ev)
	return ev.ID
}

// checkInvariants asks a booking process's invariant checker: sold + held
// within capacity, one ticket per seat, no paid order without tickets.
func checkInvariants(t *testing.T, bookingURL, adminToken string) {
	t.Helper()
	r := exchange(&http.Client{Timeout: 10 * time.Second}, "GET", bookingURL+"/api/admin/invariants",
		http.Header{"Authorization": {"Bearer " + adminToken}}, nil)
	if r.err != nil {
		t.Fatalf("invariants: %v", r.err)
	}
	var rep struct {
		OK     bool `json:"ok"`
		Report struct {
			Violations []string `json:"violations"`
		} `json:"report"`
	}
	if err := json.Unmarshal(r.body, &rep); err != nil {
		t.Fatalf("invariants: %d %v: %s", r.status, err, r.body)
	}
	if !rep.OK || r.status != http.StatusOK {
		t.Fatalf("invariants violated (%d): %v", r.status, rep.Report.Violations)
	}
}

// startFoyer runs Foyer with a Caddyfile and waits until base answers the
// room's key set.
func startFoyer(t *testing.T, name, caddyfile, base string) *child {
	t.Helper()
	bin := foyerBinary(t)
	path := filepath.Join(t.TempDir(), "Caddyfile")
	if err := os.WriteFile(path, []byte(caddyfile), 0o600); err != nil {
		t.Fatal(err)
	}
	c := newChild(t, name, bin, readyCheck{base + "/_waiting-room/jwks.json", http.StatusOK, 30 * time.Second},
		"run", "--config", path, "--adapter", "caddyfile")
	c.start()
	c.awaitReady()
	return c
}
