package pass

import (
	"crypto/ed25519"
	"encoding/base64"
	"encoding/json"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/golang-jwt/jwt/v5"
)

func verifierFor(k *Signer, now time.Time) *Verifier {
	return NewVerifier(map[string]ed25519.PublicKey{k.KeyID(): k.Public()},
		WithIssuer(DefaultIssuer), WithClock(func() time.Time { return now }))
}

func TestPassRoundTrip(t *testing.T) {
	k := testSigner(t)
	now := time.Unix(1_780_000_000, 0)
	tok, err := k.Sign(Claims{Room: "concert", Subject: "fan-1", OrderKey: 9, IssuedAt: now, ExpiresAt: now.Add(10 * time.Minute)}, DefaultIssuer)
	if err != nil {
		t.Fatal(err)
	}
	p, err := verifierFor(k, now.Add(time.Minute)).Verify(tok, "concert")
	if err != nil {
		t.Fatal(err)
	}
	if p.Room != "concert" || p.Subject != "fan-1" || p.OrderKey != 9 || p.ID == "" || !p.ExpiresAt.Equal(now.Add(10*time.Minute)) {
		t.Fatalf("verified pass %+v", p)
	}
}

func TestPassRejected(t *testing.T) {
	k, other := testSigner(t), testSigner(t)
	now := time.Unix(1_780_000_000, 0)
	base := Claims{Room: "concert", Subject: "fan-1", IssuedAt: now, ExpiresAt: now.Add(10 * time.Minute)}
	issue := func(key *Signer, p Claims, iss string) string {
		tok, err := key.Sign(p, iss)
		if err != nil {
			t.Fatal(err)
		}
		return tok
	}
	good := issue(k, base, DefaultIssuer)
	parts := strings.Split(good, ".")
	b64 := base64.RawURLEncoding.EncodeToString

	// Claims edited after signing.
	tampered := parts[0] + "." + b64([]byte(`{"iss":"foyer","sub":"fan-2","aud":["concert"],"exp":9999999999,"iat":1780000000,"jti":"x"}`)) + "." + parts[2]
	// alg "none" with an empty signature.
	none := b64([]byte(`{"alg":"none","typ":"JWT","kid":"`+k.KeyID()+`"}`)) + "." + parts[1] + "."
	// HS256 keyed with the public key, the classic algorithm confusion.
	hs := jwt.NewWithClaims(jwt.SigningMethodHS256, jwt.MapClaims{"iss": "foyer", "sub": "fan-1", "aud": "concert", "exp": now.Add(time.Hour).Unix(), "iat": now.Unix(), "jti": "x"})
	hs.Header["kid"] = k.KeyID()
	hsTok, err := hs.SignedString([]byte(k.Public()))
	if err != nil {
		t.Fatal(err)
	}
	// A valid signature from a key we do not trust, claiming our kid.
	spoofed := jwt.NewWithClaims(jwt.SigningMethodEdDSA, jwt.MapClaims{"iss": "foyer", "sub": "fan-1", "aud": "concert", "exp": now.Add(time.Hour).Unix(), "iat": now.Unix(), "jti": "x"})
	spoofed.Header["kid"] = k.KeyID()
	spoofedTok, err := spoofed.SignedString(other.private)
	if err != nil {
		t.Fatal(err)
	}
	noKid := jwt.NewWithClaims(jwt.SigningMethodEdDSA, jwt.MapClaims{"iss": "foyer", "sub": "fan-1", "aud": "concert", "exp": now.Add(time.Hour).Unix(), "iat": now.Unix(), "jti": "x"})
	noKidTok, err := noKid.SignedString(k.private)
	if err != nil {
		t.Fatal(err)
	}
	noExp := jwt.NewWithClaims(jwt.SigningMethodEdDSA, jwt.MapClaims{"iss": "foyer", "sub": "fan-1", "aud": "concert", "iat": now.Unix(), "jti": "x"})
	noExp.Header["kid"] = k.KeyID()
	noExpTok, err := noExp.SignedString(k.private)
	if err != nil {
		t.Fatal(err)
	}
	notYet := base
	notYet.IssuedAt = now.Add(time.Hour)
	notYet.ExpiresAt = now.Add(2 * time.Hour)

	cases := []struct {
		name, token, room string
		at                time.Time
	}{
		{"garbage", "garbage", "concert", now},
		{"empty", "", "concert", now},
		{"two parts", parts[0] + "." + parts[1], "concert", now},
		{"tampered claims", tampered, "concert", now},
		{"signature of another token", parts[0] + "." + parts[1] + "." + strings.Split(issue(k, Claims{Room: "concert", Subject: "x", IssuedAt: now, ExpiresAt: now.Add(time.Minute)}, DefaultIssuer), ".")[2], "concert", now},
		{"expired", good, "concert", now.Add(11 * time.Minute)},
		{"not yet valid", issue(k, notYet, DefaultIssuer), "concert", now},
		{"other room", good, "festival", now},
		{"other key", issue(other, base, DefaultIssuer), "concert", now},
		{"other issuer", issue(k, base, "someone-else"), "concert", now},
		{"alg none", none, "concert", now},
		{"HS256 with the public key", hsTok, "concert", now},
		{"untrusted key claiming our kid", spoofedTok, "concert", now},
		{"no kid", noKidTok, "concert", now},
		{"no exp", noExpTok, "concert", now},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			if _, err := verifierFor(k, tc.at).Verify(tc.token, tc.room); !errors.Is(err, ErrInvalid) {
				t.Fatalf("got %v, want ErrInvalid", err)
			}
		})
	}
}

func TestJWKSRoundTrip(t *testing.T) {
	k := testSigner(t)
	set := JWKS{Keys: []JWK{k.JWK(), {KeyType: "RSA", KeyID: "rsa", X: "ignored"}}}
	data, err := json.Marshal(set)
	if err != nil {
		t.Fatal(err)
	}
	keys, err := ParseJWKS(data)
	if err != nil {
		t.Fatal(err)
	}
	if len(keys) != 1 || !keys[k.KeyID()].Equal(k.Public()) {
		t.Fatalf("parsed keys %v", keys)
	}
	for _, bad := range []string{`{`, `{"keys":[]}`, `{"keys":[{"kty":"OKP","crv":"Ed25519","x":"short","kid":"a"}]}`} {
		if _, err := ParseJWKS([]byte(bad)); err == nil {
			t.Errorf("ParseJWKS(%s) succeeded", bad)
		}
	}
}

func FuzzVerifyPass(f *testing.F) {
	k := testSigner(f)
	now := time.Unix(1_780_000_000, 0)
	tok, _ := k.Sign(Claims{Room: "r", Subject: "s", IssuedAt: now, ExpiresAt: now.Add(time.Hour)}, DefaultIssuer)
	f.Add(tok)
	f.Add("a.b.c")
	f.Add("")
	v := verifierFor(k, now)
	f.Fuzz(func(t *testing.T, token string) {
		p, err := v.Verify(token, "r")
		if err == nil && (p.Room != "r" || p.Subject == "") {
			t.Fatalf("accepted pass %+v", p)
		}
	})
}

func testSigner(t testing.TB) *Signer {
	t.Helper()
	s, err := GenerateSigner()
	if err != nil {
		t.Fatal(err)
	}
	return s
}
