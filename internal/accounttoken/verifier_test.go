package accounttoken

import (
	"context"
	"crypto"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/rsa"
	"crypto/x509"
	"encoding/base64"
	"encoding/json"
	"encoding/pem"
	"errors"
	"net/http"
	"net/http/httptest"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/golang-jwt/jwt/v5"
)

var t0 = time.Date(2026, 12, 1, 10, 0, 0, 0, time.UTC)

func sign(t *testing.T, m jwt.SigningMethod, key crypto.PrivateKey, kid string, claims jwt.MapClaims) string {
	t.Helper()
	tok := jwt.NewWithClaims(m, claims)
	if kid != "" {
		tok.Header["kid"] = kid
	}
	s, err := tok.SignedString(key)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func goodClaims() jwt.MapClaims {
	return jwt.MapClaims{"sub": "alice", "iss": "https://login.example", "aud": "shop", "exp": t0.Add(time.Hour).Unix(), "iat": t0.Unix()}
}

func pemOf(t *testing.T, pub crypto.PublicKey) []byte {
	t.Helper()
	der, err := x509.MarshalPKIXPublicKey(pub)
	if err != nil {
		t.Fatal(err)
	}
	return pem.EncodeToMemory(&pem.Block{Type: "PUBLIC KEY", Bytes: der})
}

// TestRefusals: each way a token can be bad, against a PEM key, and what it
// gets (ErrInvalid, never a panic or an account).
func TestRefusals(t *testing.T) {
	key, _ := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	other, _ := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	pubPEM := pemOf(t, &key.PublicKey)
	v, err := New(Config{PublicKeyPEM: pubPEM, Issuer: "https://login.example", Audience: "shop", Now: func() time.Time { return t0 }})
	if err != nil {
		t.Fatal(err)
	}
	if acct, err := v.Verify(t.Context(), sign(t, jwt.SigningMethodES256, key, "", goodClaims())); err != nil || acct != "alice" {
		t.Fatalf("good token: %q %v", acct, err)
	}
	with := func(k string, val any) jwt.MapClaims {
		c := goodClaims()
		if val == nil {
			delete(c, k)
		} else {
			c[k] = val
		}
		return c
	}
	unsigned, _ := jwt.NewWithClaims(jwt.SigningMethodNone, goodClaims()).SignedString(jwt.UnsafeAllowNoneSignatureType)
	// HS256 keyed with the public key's PEM: the classic algorithm confusion.
	confused := sign(t, jwt.SigningMethodHS256, pubPEM, "", goodClaims())
	cases := []struct{ name, token string }{
		{"expired", sign(t, jwt.SigningMethodES256, key, "", with("exp", t0.Add(-time.Minute).Unix()))},
		{"no expiry", sign(t, jwt.SigningMethodES256, key, "", with("exp", nil))},
		{"not yet valid", sign(t, jwt.SigningMethodES256, key, "", with("nbf", t0.Add(time.Hour).Unix()))},
		{"another issuer", sign(t, jwt.SigningMethodES256, key, "", with("iss", "https://evil.example"))},
		{"another audience", sign(t, jwt.SigningMethodES256, key, "", with("aud", "other"))},
		{"unsigned (alg none)", unsigned},
		{"HS256 keyed with the public key", confused},
		{"signed with a wrong key", sign(t, jwt.SigningMethodES256, other, "", goodClaims())},
		{"no sub", sign(t, jwt.SigningMethodES256, key, "", with("sub", nil))},
		{"empty sub", sign(t, jwt.SigningMethodES256, key, "", with("sub", ""))},
		{"garbage", "not.a.jwt"},
		{"empty", ""},
		{"oversized", string(make([]byte, MaxTokenSize+1))},
	}
	for _, tc := range cases {
		if acct, err := v.Verify(t.Context(), tc.token); !errors.Is(err, ErrInvalid) {
			t.Errorf("%s: account %q, err %v; want ErrInvalid", tc.name, acct, err)
		}
	}
}

func TestClaimChoice(t *testing.T) {
	key, _ := rsa.GenerateKey(rand.Reader, 2048)
	v, err := New(Config{PublicKeyPEM: pemOf(t, &key.PublicKey), Claim: "uid", Now: func() time.Time { return t0 }})
	if err != nil {
		t.Fatal(err)
	}
	c := goodClaims()
	c["uid"] = 12345678901
	if acct, err := v.Verify(t.Context(), sign(t, jwt.SigningMethodRS256, key, "", c)); err != nil || acct != "12345678901" {
		t.Fatalf("integer claim: %q %v", acct, err)
	}
	c["uid"] = 1.5
	if _, err := v.Verify(t.Context(), sign(t, jwt.SigningMethodRS256, key, "", c)); !errors.Is(err, ErrInvalid) {
		t.Fatalf("fractional claim: %v, want ErrInvalid", err)
	}
}

func TestConfigRefused(t *testing.T) {
	key, _ := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	for name, cfg := range map[string]Config{
		"neither key":   {},
		"both keys":     {JWKSURL: "http://x", PublicKeyPEM: pemOf(t, &key.PublicKey)},
		"HS256 allowed": {JWKSURL: "http://x", Algorithms: []string{"HS256"}},
		"none allowed":  {JWKSURL: "http://x", Algorithms: []string{"none"}},
		"not PEM":       {PublicKeyPEM: []byte("hello")},
	} {
		if _, err := New(cfg); err == nil {
			t.Errorf("%s: accepted", name)
		}
	}
}

// jwksServer serves a key set it can rotate, counting fetches.
type jwksServer struct {
	mu      sync.Mutex
	keys    map[string]*ecdsa.PrivateKey
	fetches atomic.Int32
	delay   time.Duration
	srv     *httptest.Server
}

func newJWKSServer(t *testing.T) *jwksServer {
	j := &jwksServer{keys: map[string]*ecdsa.PrivateKey{}}
	j.srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		j.fetches.Add(1)
		time.Sleep(j.delay)
		j.mu.Lock()
		defer j.mu.Unlock()
		var doc struct {
			Keys []map[string]string `json:"keys"`
		}
		for kid, k := range j.keys {
			pt, _ := k.PublicKey.Bytes() // 0x04 || x || y
			doc.Keys = append(doc.Keys, map[string]string{
				"kty": "EC", "crv": "P-256", "kid": kid, "use": "sig", "alg": "ES256",
				"x": base64.RawURLEncoding.EncodeToString(pt[1:33]), "y": base64.RawURLEncoding.EncodeToString(pt[33:]),
			})
		}
		json.NewEncoder(w).Encode(doc)
	}))
	t.Cleanup(j.srv.Close)
	return j
}

func (j *jwksServer) add(kid string) *ecdsa.PrivateKey {
	k, _ := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	j.mu.Lock()
	j.keys[kid] = k
	j.mu.Unlock()
	return k
}

// TestJWKS: keys are fetched once and cached, a new kid is fetched at once
// (at most every MinRefetch), and an unknown kid never verifies.
func TestJWKS(t *testing.T) {
	j := newJWKSServer(t)
	k1 := j.add("k1")
	now := t0
	var mu sync.Mutex
	clock := func() time.Time { mu.Lock(); defer mu.Unlock(); return now }
	advance := func(d time.Duration) { mu.Lock(); now = now.Add(d); mu.Unlock() }
	v, err := New(Config{JWKSURL: j.srv.URL, Now: clock, MinRefetch: 10 * time.Second, Refresh: time.Hour})
	if err != nil {
		t.Fatal(err)
	}
	ctx := t.Context()
	c := goodClaims()
	c["exp"] = t0.Add(24 * time.Hour).Unix()
	for i := range 5 {
		c["sub"] = "fan" + string(rune('a'+i))
		if _, err := v.Verify(ctx, sign(t, jwt.SigningMethodES256, k1, "k1", c)); err != nil {
			t.Fatal(err)
		}
	}
	if n := j.fetches.Load(); n != 1 {
		t.Fatalf("%d fetches for five tokens of one key, want 1", n)
	}
	// The login rotates: a token naming the new kid fetches the set again.
	k2 := j.add("k2")
	advance(11 * time.Second)
	if _, err := v.Verify(ctx, sign(t, jwt.SigningMethodES256, k2, "k2", c)); err != nil {
		t.Fatalf("token of the rotated key: %v", err)
	}
	// Made-up kids: refused, and they cannot make the gateway fetch more
	// than once per MinRefetch.
	before := j.fetches.Load()
	for i := range 20 {
		c["sub"] = "x" + string(rune('a'+i))
		if _, err := v.Verify(ctx, sign(t, jwt.SigningMethodES256, k2, "nope", c)); !errors.Is(err, ErrInvalid) {
			t.Fatalf("unknown kid: %v, want ErrInvalid", err)
		}
	}
	if n := j.fetches.Load() - before; n != 0 {
		t.Fatalf("made-up kids right after a fetch caused %d fetches, want 0", n)
	}
	// A token signed by k1 but naming k2 is a wrong key.
	if _, err := v.Verify(ctx, sign(t, jwt.SigningMethodES256, k1, "k2", c)); !errors.Is(err, ErrInvalid) {
		t.Fatalf("k1's signature under k2's kid: %v, want ErrInvalid", err)
	}
	// Once the set is older than Refresh, a token of a known key is
	// verified at once and the set is fetched again behind it.
	before = j.fetches.Load()
	advance(2 * time.Hour)
	c["sub"] = "later"
	if _, err := v.Verify(ctx, sign(t, jwt.SigningMethodES256, k1, "k1", c)); err != nil {
		t.Fatalf("token of a known key with the set stale: %v", err)
	}
	deadline := time.Now().Add(5 * time.Second)
	for j.fetches.Load() == before {
		if time.Now().After(deadline) {
			t.Fatal("a stale key set was never fetched again")
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// TestJWKSTimeout: a login whose JWKS hangs costs a request at most the
// fetch timeout, and the token is refused.
func TestJWKSTimeout(t *testing.T) {
	j := newJWKSServer(t)
	k := j.add("k1")
	j.delay = 2 * time.Second
	v, err := New(Config{JWKSURL: j.srv.URL, FetchTimeout: 200 * time.Millisecond, Now: func() time.Time { return t0 }})
	if err != nil {
		t.Fatal(err)
	}
	start := time.Now()
	_, err = v.Verify(context.Background(), sign(t, jwt.SigningMethodES256, k, "k1", goodClaims()))
	if !errors.Is(err, ErrInvalid) {
		t.Fatalf("with the JWKS hanging: %v, want ErrInvalid", err)
	}
	if d := time.Since(start); d > time.Second {
		t.Fatalf("verification took %v with a 200ms fetch timeout", d)
	}
}
