package waitingroom

import (
	"crypto/ed25519"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/binary"
	"errors"
	"fmt"
	"time"

	"github.com/golang-jwt/jwt/v5"
)

// DefaultIssuer is the "iss" of passes when the operator names no other.
const DefaultIssuer = "foyer"

// ErrInvalidPass is wrapped by every pass verification failure, whatever the cause:
// a bad signature, an unknown key, a wrong room, an expired pass, garbage.
var ErrInvalidPass = errors.New("invalid admission pass")

// Pass is an admission pass: proof that a visitor was let through the room. It
// travels as an EdDSA-signed JWT that the origin can verify with the room's JWKS
// without any shared secret.
type Pass struct {
	ID        string    // "jti": unique per pass, used to revoke it
	Room      string    // "aud": a pass opens one room only
	Subject   string    // "sub": the visitor (or account) it was issued to
	OrderKey  uint64    // the visitor's place in the room's order
	IssuedAt  time.Time // "iat" and "nbf"
	ExpiresAt time.Time // "exp": the end of the session
}

type passClaims struct {
	jwt.RegisteredClaims
	OrderKey uint64 `json:"order_key"`
}

// NewPassID returns a random pass ID.
func NewPassID() string {
	var b [16]byte
	if _, err := rand.Read(b[:]); err != nil {
		panic(err) // crypto/rand never fails on supported platforms
	}
	return base64.RawURLEncoding.EncodeToString(b[:])
}

// SessionPassID is the pass id of the session a visitor holds in room until
// expires. A room hands out one session per visitor, and every pass issued for
// it (to the fan, and to anyone who claims with a copy of their ticket) carries
// this id, so that revoking one pass refuses them all. It is derived rather
// than kept: the store knows each session's end, so a claim on any node, or
// after a store restarted empty was re-seeded from passes (whose "exp" keeps
// the end to the second), names the same id without a field per session.
// Anyone holding a pass can recompute it from "aud", "sub" and "exp"; that
// gives nothing, since a pass is only honoured with the room's signature.
func SessionPassID(room, visitor string, expires time.Time) string {
	h := sha256.New()
	h.Write([]byte("foyer-session-pass-v1\x00"))
	h.Write([]byte(room))
	h.Write([]byte{0})
	h.Write([]byte(visitor))
	h.Write(binary.BigEndian.AppendUint64([]byte{0}, uint64(expires.Unix())))
	var sum [sha256.Size]byte
	return base64.RawURLEncoding.EncodeToString(h.Sum(sum[:0])[:16])
}

// IssuePass signs p with the key. issuer becomes the "iss" claim.
func (k *SigningKey) IssuePass(p Pass, issuer string) (string, error) {
	if p.ID == "" {
		p.ID = NewPassID()
	}
	claims := passClaims{
		RegisteredClaims: jwt.RegisteredClaims{
			Issuer:    issuer,
			Subject:   p.Subject,
			Audience:  jwt.ClaimStrings{p.Room},
			ExpiresAt: jwt.NewNumericDate(p.ExpiresAt),
			NotBefore: jwt.NewNumericDate(p.IssuedAt),
			IssuedAt:  jwt.NewNumericDate(p.IssuedAt),
			ID:        p.ID,
		},
		OrderKey: p.OrderKey,
	}
	tok := jwt.NewWithClaims(jwt.SigningMethodEdDSA, claims)
	tok.Header["kid"] = k.kid
	return tok.SignedString(k.private)
}

// PassVerifier checks passes against a set of trusted public keys. It is what an
// origin needs, and all it needs, to trust the gateway.
type PassVerifier struct {
	keys   map[string]ed25519.PublicKey
	issuer string
	now    func() time.Time
	leeway time.Duration
}

// VerifierOption adjusts a PassVerifier.
type VerifierOption func(*PassVerifier)

// WithIssuer requires the "iss" claim to equal iss.
func WithIssuer(iss string) VerifierOption { return func(v *PassVerifier) { v.issuer = iss } }

// WithClock sets the time source used for "exp" and "nbf"; tests inject one.
func WithClock(now func() time.Time) VerifierOption { return func(v *PassVerifier) { v.now = now } }

// WithLeeway tolerates clock skew between the issuing gateway and the verifier.
func WithLeeway(d time.Duration) VerifierOption { return func(v *PassVerifier) { v.leeway = d } }

// NewPassVerifier trusts the given keys, indexed by key ID.
func NewPassVerifier(keys map[string]ed25519.PublicKey, opts ...VerifierOption) *PassVerifier {
	v := &PassVerifier{keys: keys, now: time.Now}
	for _, o := range opts {
		o(v)
	}
	return v
}

// Verify parses and checks a pass for room. Only EdDSA is accepted, whatever the
// token's header claims: "none", HMAC with the public key as secret and every other
// algorithm substitution fail here. An empty room accepts any audience (an origin
// that fronts several rooms may check Pass.Room itself).
func (v *PassVerifier) Verify(token, room string) (Pass, error) {
	opts := []jwt.ParserOption{
		jwt.WithValidMethods([]string{jwt.SigningMethodEdDSA.Alg()}),
		jwt.WithTimeFunc(v.now),
		jwt.WithExpirationRequired(),
		jwt.WithLeeway(v.leeway),
		jwt.WithStrictDecoding(),
	}
	if room != "" {
		opts = append(opts, jwt.WithAudience(room))
	}
	if v.issuer != "" {
		opts = append(opts, jwt.WithIssuer(v.issuer))
	}
	var claims passClaims
	_, err := jwt.ParseWithClaims(token, &claims, v.keyFor, opts...)
	if err != nil {
		return Pass{}, fmt.Errorf("%w: %w", ErrInvalidPass, err)
	}
	if claims.ID == "" || claims.Subject == "" || len(claims.Audience) != 1 || claims.IssuedAt == nil {
		return Pass{}, fmt.Errorf("%w: missing jti, sub, iat or a single aud", ErrInvalidPass)
	}
	return Pass{
		ID:        claims.ID,
		Room:      claims.Audience[0],
		Subject:   claims.Subject,
		OrderKey:  claims.OrderKey,
		IssuedAt:  claims.IssuedAt.Time,
		ExpiresAt: claims.ExpiresAt.Time,
	}, nil
}

func (v *PassVerifier) keyFor(t *jwt.Token) (any, error) {
	kid, _ := t.Header["kid"].(string)
	if kid == "" {
		return nil, errors.New("pass has no kid")
	}
	key, ok := v.keys[kid]
	if !ok {
		return nil, fmt.Errorf("unknown kid %q", kid)
	}
	return key, nil
}
