package jwks

import (
	"crypto/ed25519"
	"crypto/rand"
	"crypto/rsa"
	"encoding/base64"
	"encoding/json"
	"math/big"
	"testing"
)

// TestParseKeepsOnlySigningPublicKeys: one set mixing what a login might
// publish; only public asymmetric signing keys survive, and an odd key never
// takes the others down.
func TestParseKeepsOnlySigningPublicKeys(t *testing.T) {
	pub, priv, _ := ed25519.GenerateKey(rand.Reader)
	weak, err := rsa.GenerateKey(rand.Reader, 1024)
	if err != nil {
		t.Fatal(err)
	}
	b64 := base64.RawURLEncoding.EncodeToString
	x := b64(pub)
	keys := []map[string]string{
		{"kty": "OKP", "crv": "Ed25519", "x": x, "kid": "good", "use": "sig"},
		{"kty": "OKP", "crv": "Ed25519", "x": x, "kid": "enc", "use": "enc"},
		{"kty": "OKP", "crv": "Ed25519", "x": x, "d": b64(priv.Seed()), "kid": "private"},
		{"kty": "oct", "k": b64([]byte("a shared secret")), "kid": "oct"},
		{"kty": "RSA", "n": b64(weak.N.Bytes()), "e": b64(big.NewInt(int64(weak.E)).Bytes()), "kid": "weak"},
		{"kty": "OKP", "crv": "X25519", "x": x, "kid": "x25519"},
		{"kty": "OKP", "crv": "Ed25519", "x": "short", "kid": "short"},
		{"kty": "what", "kid": "unknown"},
	}
	data, _ := json.Marshal(map[string]any{"keys": keys})
	set, err := Parse(data)
	if err != nil {
		t.Fatal(err)
	}
	if len(set.Keys) != 1 || !set.Has("good") {
		kids := []string{}
		for _, k := range set.Keys {
			kids = append(kids, k.KeyID)
		}
		t.Fatalf("kept %v, want only [good]", kids)
	}
	for _, bad := range []string{`{`, `{"keys":[]}`, `{"keys":[{"kty":"oct","k":"c2VjcmV0"}]}`} {
		if _, err := Parse([]byte(bad)); err == nil {
			t.Errorf("Parse(%s) succeeded", bad)
		}
	}
}
