package pass

import (
	"context"
	"crypto/ed25519"
	"errors"
	"fmt"
	"time"

	"github.com/golang-jwt/jwt/v5"
)

// Verifier checks passes against trusted public keys: a fixed set
// (NewVerifier) or a room's published key set kept fresh (NewCachedVerifier).
// It is what an origin needs, and all it needs, to trust the gateway.
type Verifier struct {
	key    func(ctx context.Context, kid string) (ed25519.PublicKey, error)
	issuer string
	now    func() time.Time
	leeway time.Duration
}

// Option adjusts a Verifier.
type Option func(*Verifier)

// WithIssuer requires the "iss" claim to equal iss.
func WithIssuer(iss string) Option { return func(v *Verifier) { v.issuer = iss } }

// WithClock sets the time source used for "exp" and "nbf"; tests inject one.
func WithClock(now func() time.Time) Option { return func(v *Verifier) { v.now = now } }

// WithLeeway tolerates clock skew between the issuing gateway and the verifier.
func WithLeeway(d time.Duration) Option { return func(v *Verifier) { v.leeway = d } }

// NewVerifier trusts the given keys, indexed by key ID.
func NewVerifier(keys map[string]ed25519.PublicKey, opts ...Option) *Verifier {
	return newVerifier(func(_ context.Context, kid string) (ed25519.PublicKey, error) {
		key, ok := keys[kid]
		if !ok {
			return nil, fmt.Errorf("unknown kid %q", kid)
		}
		return key, nil
	}, opts)
}

// NewCachedVerifier trusts the keys of a published key set, fetched again
// when a pass names a key it lacks (KeyCache).
func NewCachedVerifier(keys *KeyCache, opts ...Option) *Verifier {
	return newVerifier(keys.Key, opts)
}

func newVerifier(key func(context.Context, string) (ed25519.PublicKey, error), opts []Option) *Verifier {
	v := &Verifier{key: key, now: time.Now}
	for _, o := range opts {
		o(v)
	}
	return v
}

// Verify parses and checks a pass for room. Only EdDSA is accepted, whatever
// the token's header claims: "none", HMAC with the public key as secret and
// every other algorithm substitution fail here. An empty room accepts any
// audience (an origin that fronts several rooms may check Claims.Room itself).
func (v *Verifier) Verify(token, room string) (Claims, error) {
	return v.VerifyContext(context.Background(), token, room)
}

// VerifyContext is Verify with a context for the key fetch a cached
// verifier may make. Having no keys at all is an error wrapping both
// ErrInvalid and ErrNoKeys.
func (v *Verifier) VerifyContext(ctx context.Context, token, room string) (Claims, error) {
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
	var claims jwtClaims
	_, err := jwt.ParseWithClaims(token, &claims, func(t *jwt.Token) (any, error) {
		// The kid is read before the signature is checked: it only picks
		// the key, and a wrong one fails the signature.
		kid, _ := t.Header["kid"].(string)
		if kid == "" {
			return nil, errors.New("pass has no kid")
		}
		return v.key(ctx, kid)
	}, opts...)
	if err != nil {
		return Claims{}, fmt.Errorf("%w: %w", ErrInvalid, err)
	}
	if claims.ID == "" || claims.Subject == "" || len(claims.Audience) != 1 || claims.IssuedAt == nil {
		return Claims{}, fmt.Errorf("%w: missing jti, sub, iat or a single aud", ErrInvalid)
	}
	return Claims{
		ID:        claims.ID,
		Room:      claims.Audience[0],
		Subject:   claims.Subject,
		OrderKey:  claims.OrderKey,
		Waitlist:  claims.Waitlist,
		IssuedAt:  claims.IssuedAt.Time,
		ExpiresAt: claims.ExpiresAt.Time,
	}, nil
}
