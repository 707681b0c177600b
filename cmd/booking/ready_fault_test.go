package main

import (
	"encoding/json"
	"net/http"
	"slices"
	"testing"
	"time"

	"github.com/foyer-dev/foyer/booking"
	"github.com/foyer-dev/foyer/booking/pgstore/pgtest"
	"github.com/foyer-dev/foyer/internal/redistest"
)

// readyState is one answer of /readyz.
type readyState struct {
	status int
	down   []string
}

func readiness(t *testing.T, base string) readyState {
	t.Helper()
	resp, err := (&http.Client{Timeout: 5 * time.Second}).Get(base + "/readyz")
	if err != nil {
		t.Fatalf("readyz: %v", err)
	}
	defer resp.Body.Close()
	var body struct {
		Error string   `json:"error"`
		Down  []string `json:"down"`
	}
	if err := json.NewDecoder(resp.Body).Decode(&body); err != nil {
		t.Fatalf("readyz answered %d without JSON: %v", resp.StatusCode, err)
	}
	if resp.StatusCode != http.StatusOK && body.Error != "not_ready" {
		t.Fatalf("readyz %d with error %q", resp.StatusCode, body.Error)
	}
	return readyState{resp.StatusCode, body.Down}
}

// awaitReadiness polls /readyz until it answers status naming down, for at
// most limit, and reports how long that took. /healthz must stay 200
// throughout: an outage of a dependency is not a reason to restart.
func awaitReadiness(t *testing.T, base string, status int, down []string, limit time.Duration) time.Duration {
	t.Helper()
	start := time.Now()
	for {
		s := readiness(t, base)
		if s.status == status && slices.Equal(s.down, down) {
			return time.Since(start)
		}
		resp, err := http.Get(base + "/healthz")
		if err != nil || resp.StatusCode != http.StatusOK {
			t.Fatalf("healthz during the outage: %v %v", resp, err)
		}
		resp.Body.Close()
		if time.Since(start) > limit {
			t.Fatalf("readyz = %d %v after %s; want %d %v", s.status, s.down, limit, status, down)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// TestFaultReadinessNamesWhatIsDown kills the booking process's Redis
// (kill -9, restarted empty) and cuts its PostgreSQL: /readyz answers 503
// naming the one that is down and 200 again once it is back, /healthz stays
// 200, requests during the database outage get 503 with Retry-After (never
// a 500), and the invariants hold after.
func TestFaultReadinessNamesWhatIsDown(t *testing.T) {
	const adminToken = "ready-admin"
	dbURL, proxy := pgtest.NewCuttableDatabase(t)
	rs := redistest.StartServer(t, nil)
	signer := newPassSigner(t)
	b := runBooking(t, "booking", 0, "-database-url", dbURL, "-redis-url", "redis://"+rs.Addr,
		"-jwks", signer.jwks, "-room", "onsale", "-admin-token", adminToken, "-seed-demo")
	awaitReadiness(t, b.url, http.StatusOK, nil, 10*time.Second)

	rs.Stop(t)
	detect := awaitReadiness(t, b.url, http.StatusServiceUnavailable, []string{"redis"}, 10*time.Second)
	rs.Restart(t)
	recoverRedis := awaitReadiness(t, b.url, http.StatusOK, nil, 10*time.Second)

	proxy.Cut()
	detectPG := awaitReadiness(t, b.url, http.StatusServiceUnavailable, []string{"postgres"}, 10*time.Second)
	pass := http.Header{booking.PassHeader: {signer.pass(t, "fan")}}
	var e struct{ Error string }
	if code := call(t, "POST", b.url+"/api/events/1/holds", pass, map[string]any{"zone": "FLOOR", "quantity": 1}, &e); code != http.StatusServiceUnavailable || e.Error != booking.CodeUnavailable {
		t.Fatalf("a hold with the database down = %d %q; want 503 %s", code, e.Error, booking.CodeUnavailable)
	}
	proxy.Restore()
	recoverPG := awaitReadiness(t, b.url, http.StatusOK, nil, 15*time.Second)
	if code := call(t, "POST", b.url+"/api/events/1/holds", pass, map[string]any{"zone": "FLOOR", "quantity": 1}, nil); code != http.StatusCreated {
		t.Fatalf("a hold after the database came back = %d", code)
	}
	t.Logf("redis down seen in %s, ready %s after its restart; postgres down seen in %s, ready %s after it returned",
		detect.Round(time.Millisecond), recoverRedis.Round(time.Millisecond), detectPG.Round(time.Millisecond), recoverPG.Round(time.Millisecond))
	checkInvariants(t, b.url, adminToken)
}
