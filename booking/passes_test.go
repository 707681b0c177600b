package booking_test

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/foyer-dev/foyer/booking"
	"github.com/foyer-dev/foyer/waitingroom/pass"
)

// jwksServer serves a key set that the test can change, counting fetches.
type jwksServer struct {
	mu      sync.Mutex
	keys    []*pass.Signer
	fetches atomic.Int32
	srv     *httptest.Server
}

func newJWKSServer(t *testing.T, keys ...*pass.Signer) *jwksServer {
	s := &jwksServer{keys: keys}
	s.srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		s.fetches.Add(1)
		s.mu.Lock()
		defer s.mu.Unlock()
		var set pass.JWKS
		for _, k := range s.keys {
			set.Keys = append(set.Keys, k.JWK())
		}
		_ = json.NewEncoder(w).Encode(set)
	}))
	t.Cleanup(s.srv.Close)
	return s
}

func (s *jwksServer) set(keys ...*pass.Signer) {
	s.mu.Lock()
	s.keys = keys
	s.mu.Unlock()
}

func mustKey(t *testing.T) *pass.Signer {
	k, err := pass.GenerateSigner()
	if err != nil {
		t.Fatal(err)
	}
	return k
}

func issue(t *testing.T, k *pass.Signer, room, sub string, at time.Time) string {
	tok, err := k.Sign(pass.Claims{Room: room, Subject: sub, IssuedAt: at, ExpiresAt: at.Add(10 * time.Minute)}, pass.DefaultIssuer)
	if err != nil {
		t.Fatal(err)
	}
	return tok
}

// issueBy issues a pass as another issuer than the gateway's default.
func issueBy(t *testing.T, k *pass.Signer, iss, room, sub string, at time.Time) string {
	tok, err := k.Sign(pass.Claims{Room: room, Subject: sub, IssuedAt: at, ExpiresAt: at.Add(10 * time.Minute)}, iss)
	if err != nil {
		t.Fatal(err)
	}
	return tok
}

func customerOf(p *booking.Passes, token string) (string, error) {
	r := httptest.NewRequest("GET", "/api/events", nil)
	if token != "" {
		r.Header.Set(booking.PassHeader, token)
	}
	return p.Customer(r)
}

func TestPassesFromJWKSURL(t *testing.T) {
	clock := booking.NewManualClock(time.Now())
	k1, k2, stranger := mustKey(t), mustKey(t), mustKey(t)
	js := newJWKSServer(t, k1)
	p := booking.NewJWKSPasses(js.srv.URL, "onsale", clock, nil)
	if err := p.Load(context.Background()); err != nil {
		t.Fatal(err)
	}
	now := clock.Now()
	good := issue(t, k1, "onsale", "cust-1", now)
	if id, err := customerOf(p, good); err != nil || id != "cust-1" {
		t.Fatalf("valid pass = %q, %v", id, err)
	}
	parts := strings.Split(good, ".")
	noneHeader := base64.RawURLEncoding.EncodeToString([]byte(`{"alg":"none","typ":"JWT","kid":"` + k1.KeyID() + `"}`))
	otherClaims := base64.RawURLEncoding.EncodeToString([]byte(`{"sub":"admin","aud":["onsale"],"exp":9999999999,"iat":1,"jti":"x"}`))
	bad := map[string]string{
		"missing":    "",
		"wrong room": issue(t, k1, "another-room", "cust-1", now),
		"wrong key":  issue(t, stranger, "onsale", "cust-1", now),
		"wrong iss":  issueBy(t, k1, "another-gateway", "onsale", "cust-1", now),
		"expired":    issue(t, k1, "onsale", "cust-1", now.Add(-time.Hour)),
		"alg none":   noneHeader + "." + parts[1] + ".",
		"tampered":   parts[0] + "." + otherClaims + "." + parts[2],
		"garbage":    "garbage",
		"oversized":  strings.Repeat("a", 5000),
	}
	for name, tok := range bad {
		if id, err := customerOf(p, tok); booking.KindOf(err) != booking.KindUnauthorized {
			t.Errorf("%s: customer %q, error %v; want unauthorized", name, id, err)
		}
	}

	// Rotation: a pass signed by a new key is accepted once the JWKS lists it,
	// fetched on demand because its kid is new.
	js.set(k1, k2)
	clock.Advance(11 * time.Second)
	if id, err := customerOf(p, issue(t, k2, "onsale", "cust-2", clock.Now())); err != nil || id != "cust-2" {
		t.Fatalf("pass from the rotated-in key = %q, %v", id, err)
	}
	// A flood of unknown kids fetches at most once per MinRefetch.
	before := js.fetches.Load()
	for range 20 {
		_, _ = customerOf(p, issue(t, stranger, "onsale", "x", clock.Now()))
	}
	if n := js.fetches.Load() - before; n > 1 {
		t.Fatalf("unknown kids caused %d fetches; want at most 1", n)
	}
}

func TestPassesAnyRoomAndFile(t *testing.T) {
	clock := booking.NewManualClock(time.Now())
	k := mustKey(t)
	set, _ := json.Marshal(pass.JWKS{Keys: []pass.JWK{k.JWK()}})
	path := filepath.Join(t.TempDir(), "jwks.json")
	if err := os.WriteFile(path, set, 0o600); err != nil {
		t.Fatal(err)
	}
	p := booking.NewJWKSPasses(path, "", clock, nil)
	if err := p.Load(context.Background()); err != nil {
		t.Fatal(err)
	}
	for _, room := range []string{"a", "b"} {
		if id, err := customerOf(p, issue(t, k, room, "c", clock.Now())); err != nil || id != "c" {
			t.Fatalf("room %s: %q, %v", room, id, err)
		}
	}
}

func TestPassesWithoutKeys(t *testing.T) {
	clock := booking.NewManualClock(time.Now())
	p := booking.NewJWKSPasses("http://127.0.0.1:1/jwks.json", "", clock, &http.Client{Timeout: time.Second})
	if err := p.Load(context.Background()); err == nil {
		t.Fatal("loading from a closed port succeeded")
	}
	_, err := customerOf(p, issue(t, mustKey(t), "r", "c", clock.Now()))
	if booking.KindOf(err) != booking.KindUnavailable {
		t.Fatalf("no keys: %v; want unavailable (503), not a 401 that blames the fan", err)
	}
}

// TestIdempotencyKeys: Stripe's rules over HTTP.
func TestIdempotencyKeys(t *testing.T) {
	backends(t, func(t *testing.T, newStore func(*testing.T) booking.Store) {
		h := newHarness(t, newStore(t))
		id := h.createEvent(smallVenue())
		path := "/api/events/" + itoa(id) + "/holds"
		key := []string{booking.IdempotencyHeader, "hold-1"}
		var first, again holdJSON
		h.req("POST", path, "fan", `{"section":"A","quantity":2}`, key...).want(t, 201).decode(t, &first)
		r := h.req("POST", path, "fan", `{"section":"A","quantity":2}`, key...).want(t, 201)
		r.decode(t, &again)
		if again.ID != first.ID || r.header.Get("Idempotent-Replayed") != "true" {
			t.Fatalf("replay = %+v (%v), want hold %s replayed", again, r.header, first.ID)
		}
		r = h.req("POST", path, "fan", `{"section":"A","quantity":3}`, key...).want(t, 422)
		if r.json(t)["error"] != booking.CodeIdempotencyReuse {
			t.Fatalf("reused key: %s", r.body)
		}
		// Keys are per customer: another fan's identical key is a new request.
		h.req("POST", path, "other", `{"section":"A","quantity":2}`, key...).want(t, 201)
		// A refused request is replayed too, as Stripe does.
		ck := []string{booking.IdempotencyHeader, "hold-2"}
		h.req("POST", path, "fan", `{"section":"A","quantity":3}`, ck...).want(t, 422)
		h.req("POST", path, "fan", `{"section":"A","quantity":3}`, ck...).want(t, 422)
		// Checkout under a key: the same order twice.
		var c1, c2 checkoutJSON
		h.req("POST", "/api/holds/"+first.ID+"/checkout", "fan", nil, booking.IdempotencyHeader, "co").want(t, 200).decode(t, &c1)
		h.req("POST", "/api/holds/"+first.ID+"/checkout", "fan", nil, booking.IdempotencyHeader, "co").want(t, 200).decode(t, &c2)
		if c1.Order.ID != c2.Order.ID || c1.Payment.ProviderPaymentID != c2.Payment.ProviderPaymentID {
			t.Fatalf("checkout replay gave another order: %s / %s", c1.Order.ID, c2.Order.ID)
		}
		// In flight: a claim nobody finished answers 409 until it times out.
		busy := booking.IdempotencyKey{Scope: "fan", Key: "busy", Fingerprint: fingerprint("POST", path, `{"section":"A","quantity":1}`)}
		if _, err := h.store.BeginIdempotent(context.Background(), busy, h.clock.Now()); err != nil {
			t.Fatal(err)
		}
		r = h.req("POST", path, "fan", `{"section":"A","quantity":1}`, booking.IdempotencyHeader, "busy").want(t, 409)
		if r.json(t)["error"] != booking.CodeIdempotencyBusy {
			t.Fatalf("in flight: %s", r.body)
		}
		h.clock.Advance(booking.IdempotencyClaimTimeout)
		h.req("POST", path, "fan", `{"section":"A","quantity":1}`, booking.IdempotencyHeader, "busy").want(t, 201)
	})
}
