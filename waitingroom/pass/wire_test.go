package pass

import (
	"context"
	"crypto/ed25519"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"testing"
	"time"
)

// TestWireFormat pins the bytes origins see: the kid is the RFC 7638
// thumbprint computed from its canonical JSON, and a key of the published
// set lists its members in the order it always had.
func TestWireFormat(t *testing.T) {
	seed := make([]byte, ed25519.SeedSize)
	for i := range seed {
		seed[i] = byte(i)
	}
	s := NewSigner(ed25519.NewKeyFromSeed(seed))
	x := base64.RawURLEncoding.EncodeToString(s.Public())
	sum := sha256.Sum256([]byte(`{"crv":"Ed25519","kty":"OKP","x":"` + x + `"}`))
	kid := base64.RawURLEncoding.EncodeToString(sum[:])
	if s.KeyID() != kid {
		t.Fatalf("kid %s, want the RFC 7638 thumbprint %s", s.KeyID(), kid)
	}
	got, err := json.Marshal(JWKS{Keys: []JWK{s.JWK()}})
	if err != nil {
		t.Fatal(err)
	}
	want := `{"keys":[{"kty":"OKP","crv":"Ed25519","x":"` + x + `","kid":"` + kid + `","alg":"EdDSA","use":"sig"}]}`
	if string(got) != want {
		t.Fatalf("key set\n got %s\nwant %s", got, want)
	}
	// A key published without a kid goes by its thumbprint.
	keys, err := ParseJWKS([]byte(`{"keys":[{"kty":"OKP","crv":"Ed25519","x":"` + x + `"}]}`))
	if err != nil || !keys[kid].Equal(s.Public()) {
		t.Fatalf("kid-less key: %v, %v", keys, err)
	}
}

// TestKidReadBeforeVerifying: the key id is read from a pass's header without
// trusting it, only to pick the key; anything that is not a JWT asks for no
// key at all (so garbage never makes a cached verifier fetch).
func TestKidReadBeforeVerifying(t *testing.T) {
	k := testSigner(t)
	var asked []string
	v := newVerifier(func(_ context.Context, kid string) (ed25519.PublicKey, error) {
		asked = append(asked, kid)
		return k.Public(), nil
	}, nil)
	tok, err := k.Sign(Claims{Room: "r", Subject: "s", IssuedAt: time.Now(), ExpiresAt: time.Now().Add(time.Minute)}, DefaultIssuer)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := v.Verify(tok, "r"); err != nil || len(asked) != 1 || asked[0] != k.KeyID() {
		t.Fatalf("verify: %v; keys asked for %q, want [%s]", err, asked, k.KeyID())
	}
	asked = nil
	for _, bad := range []string{"", "x", "a.b.c", "!!!.e30.", tok[:len(tok)/3]} {
		if _, err := v.Verify(bad, "r"); !errors.Is(err, ErrInvalid) {
			t.Errorf("Verify(%q) = %v, want ErrInvalid", bad, err)
		}
	}
	if len(asked) != 0 {
		t.Fatalf("non-JWTs asked for keys %q", asked)
	}
}

// TestKeyCache: a cached verifier with no reachable key set says so
// (ErrNoKeys, not only ErrInvalid), and verifies once the set is there.
func TestKeyCache(t *testing.T) {
	k := testSigner(t)
	now := time.Unix(1_780_000_000, 0)
	clock := func() time.Time { return now }
	path := filepath.Join(t.TempDir(), "jwks.json")
	cache := NewKeyCache(path, CacheConfig{Now: clock})
	v := NewCachedVerifier(cache, WithClock(clock))
	tok, err := k.Sign(Claims{Room: "r", Subject: "s", IssuedAt: now, ExpiresAt: now.Add(time.Minute)}, DefaultIssuer)
	if err != nil {
		t.Fatal(err)
	}
	if err := cache.Load(t.Context()); err == nil {
		t.Fatal("loading a missing file succeeded")
	}
	if _, err := v.Verify(tok, "r"); !errors.Is(err, ErrNoKeys) || !errors.Is(err, ErrInvalid) {
		t.Fatalf("no keys: %v, want ErrNoKeys and ErrInvalid", err)
	}
	if err := cache.EnsureLoaded(t.Context()); err == nil {
		t.Fatal("EnsureLoaded without a key set succeeded")
	}
	data, _ := json.Marshal(JWKS{Keys: []JWK{k.JWK()}})
	if err := os.WriteFile(path, data, 0o600); err != nil {
		t.Fatal(err)
	}
	now = now.Add(11 * time.Second) // past MinRefetch
	if c, err := v.Verify(tok, "r"); err != nil || c.Subject != "s" {
		t.Fatalf("with the key set: %+v, %v", c, err)
	}
	if err := cache.EnsureLoaded(t.Context()); err != nil || !cache.Loaded() {
		t.Fatalf("EnsureLoaded: %v", err)
	}
}
