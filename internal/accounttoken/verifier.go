package accounttoken

import (
	"context"
	"crypto"
	"crypto/ecdsa"
	"crypto/ed25519"
	"crypto/rsa"
	"crypto/x509"
	"encoding/json"
	"encoding/pem"
	"errors"
	"fmt"
	"net/http"
	"strconv"
	"sync"
	"time"

	"github.com/foyer-dev/foyer/internal/jwks"
	"github.com/go-jose/go-jose/v4"
	"github.com/golang-jwt/jwt/v5"
)

// ErrInvalid wraps every reason a token names no account: malformed, wrong
// algorithm or key, expired, another issuer or audience, no such claim.
var ErrInvalid = errors.New("invalid account token")

// MaxTokenSize bounds a token worth parsing.
const MaxTokenSize = 8 << 10

// Asymmetric are the algorithms accepted unless the operator names fewer.
var Asymmetric = []string{"RS256", "RS384", "RS512", "PS256", "PS384", "PS512", "ES256", "ES384", "ES512", "EdDSA"}

// Config describes where keys come from and what a token must say.
type Config struct {
	// JWKSURL, or PublicKeyPEM: exactly one.
	JWKSURL      string
	PublicKeyPEM []byte
	// Issuer and Audience, when set, must match the token's iss and aud.
	Issuer, Audience string
	// Claim names the account (default "sub"); a string or an integer.
	Claim string
	// Algorithms the token may use (default Asymmetric); HS* and none are
	// refused whatever is listed.
	Algorithms []string
	// Client fetches the JWKS (default: a plain client); FetchTimeout bounds
	// one fetch (default 5 s); Refresh is how old a key set may grow before it
	// is fetched again in the background (default 5 min); MinRefetch spaces
	// fetches caused by unknown key IDs (default 10 s).
	Client                            *http.Client
	FetchTimeout, Refresh, MinRefetch time.Duration
	// Leeway forgives clock skew on exp, nbf and iat (default 30 s).
	Leeway time.Duration
	// Now is the clock (default time.Now).
	Now func() time.Time
}

// Verifier checks account tokens. It is safe for concurrent use.
type Verifier struct {
	cfg    Config
	static []jose.JSONWebKey // from the PEM key
	jwks   *jwks.Cache
	parser *jwt.Parser
	cache  tokenCache
}

// New checks cfg and prepares a verifier. A JWKS is not fetched here: the
// first token that needs it does (see jwks.Cache), so a login service that is
// away at start does not stop the room.
func New(cfg Config) (*Verifier, error) {
	if (cfg.JWKSURL == "") == (len(cfg.PublicKeyPEM) == 0) {
		return nil, errors.New("account: give exactly one of jwks_url and public_key")
	}
	if cfg.Claim == "" {
		cfg.Claim = "sub"
	}
	if cfg.Now == nil {
		cfg.Now = time.Now
	}
	if cfg.Leeway == 0 {
		cfg.Leeway = 30 * time.Second
	}
	algs, err := checkAlgorithms(cfg.Algorithms)
	if err != nil {
		return nil, err
	}
	v := &Verifier{cfg: cfg}
	if len(cfg.PublicKeyPEM) > 0 {
		key, err := parsePEM(cfg.PublicKeyPEM)
		if err != nil {
			return nil, err
		}
		v.static = []jose.JSONWebKey{{Key: key}}
	} else {
		v.jwks = jwks.NewCache(jwks.URL(cfg.JWKSURL, cfg.Client), jwks.CacheConfig{
			Now: cfg.Now, FetchTimeout: cfg.FetchTimeout, Refresh: cfg.Refresh, MinRefetch: cfg.MinRefetch,
		})
	}
	opts := []jwt.ParserOption{
		jwt.WithValidMethods(algs),
		jwt.WithExpirationRequired(),
		jwt.WithLeeway(cfg.Leeway),
		jwt.WithTimeFunc(cfg.Now),
		jwt.WithJSONNumber(),
	}
	if cfg.Issuer != "" {
		opts = append(opts, jwt.WithIssuer(cfg.Issuer))
	}
	if cfg.Audience != "" {
		opts = append(opts, jwt.WithAudience(cfg.Audience))
	}
	v.parser = jwt.NewParser(opts...)
	return v, nil
}

func checkAlgorithms(names []string) ([]string, error) {
	if len(names) == 0 {
		return Asymmetric, nil
	}
	for _, n := range names {
		ok := false
		for _, a := range Asymmetric {
			ok = ok || n == a
		}
		if !ok {
			return nil, fmt.Errorf("account: algorithm %q is not accepted (one of %v; never none or HS*)", n, Asymmetric)
		}
	}
	return names, nil
}

// parsePEM reads a PKIX public key (or a certificate's) in PEM.
func parsePEM(data []byte) (crypto.PublicKey, error) {
	b, _ := pem.Decode(data)
	if b == nil {
		return nil, errors.New("account: public_key holds no PEM block")
	}
	var key any
	switch b.Type {
	case "PUBLIC KEY":
		k, err := x509.ParsePKIXPublicKey(b.Bytes)
		if err != nil {
			return nil, fmt.Errorf("account: public_key: %w", err)
		}
		key = k
	case "CERTIFICATE":
		c, err := x509.ParseCertificate(b.Bytes)
		if err != nil {
			return nil, fmt.Errorf("account: public_key: %w", err)
		}
		key = c.PublicKey
	default:
		return nil, fmt.Errorf("account: public_key is a %q PEM block, want PUBLIC KEY", b.Type)
	}
	switch key.(type) {
	case *rsa.PublicKey, *ecdsa.PublicKey, ed25519.PublicKey:
		return key, nil
	}
	return nil, fmt.Errorf("account: public_key of type %T is not supported", key)
}

// Verify returns the account a token names, or an error wrapping ErrInvalid
// (or a JWKS fetch failure, also wrapped in ErrInvalid: the token cannot be
// trusted either way).
func (v *Verifier) Verify(ctx context.Context, token string) (string, error) {
	if token == "" || len(token) > MaxTokenSize {
		return "", fmt.Errorf("%w: empty or oversized", ErrInvalid)
	}
	now := v.cfg.Now()
	if acct, ok := v.cache.get(token, now); ok {
		return acct, nil
	}
	claims := jwt.MapClaims{}
	tok, err := v.parser.ParseWithClaims(token, claims, func(t *jwt.Token) (any, error) {
		return v.keyFor(ctx, t)
	})
	if err != nil {
		return "", fmt.Errorf("%w: %w", ErrInvalid, err)
	}
	acct, err := accountClaim(claims, v.cfg.Claim)
	if err != nil {
		return "", err
	}
	if exp, err := tok.Claims.GetExpirationTime(); err == nil && exp != nil {
		v.cache.put(token, acct, exp.Time)
	}
	return acct, nil
}

// keyFor picks the key a token's header names. The algorithm was checked
// against the accepted list already; a JWK that names its algorithm must name
// the token's, and the key's type must fit it (the library checks that too).
func (v *Verifier) keyFor(ctx context.Context, t *jwt.Token) (any, error) {
	kid, _ := t.Header["kid"].(string)
	alg := t.Method.Alg()
	var candidates []jose.JSONWebKey
	if v.static != nil {
		candidates = v.static
	} else {
		ks, err := v.jwks.Keys(ctx, kid)
		if err != nil {
			return nil, err
		}
		if kid != "" {
			k, ok := ks.Key(kid)
			if !ok {
				return nil, fmt.Errorf("no key with kid %q", kid)
			}
			candidates = []jose.JSONWebKey{k}
		} else {
			candidates = ks.Keys
		}
	}
	var keys []jwt.VerificationKey
	for _, k := range candidates {
		if k.Algorithm != "" && k.Algorithm != alg {
			continue
		}
		if fits(k.Key, alg) {
			keys = append(keys, k.Key)
		}
	}
	switch len(keys) {
	case 0:
		return nil, fmt.Errorf("no key for algorithm %s", alg)
	case 1:
		return keys[0], nil
	}
	return jwt.VerificationKeySet{Keys: keys}, nil
}

func fits(key any, alg string) bool {
	switch key.(type) {
	case *rsa.PublicKey:
		return alg[0] == 'R' || alg[0] == 'P'
	case *ecdsa.PublicKey:
		return alg[0] == 'E' && alg != "EdDSA"
	case ed25519.PublicKey:
		return alg == "EdDSA"
	}
	return false
}

// maxAccountLen bounds an account id: it is hashed, never stored, but a
// megabyte-long one is no login's.
const maxAccountLen = 512

func accountClaim(claims jwt.MapClaims, name string) (string, error) {
	switch c := claims[name].(type) {
	case string:
		if c == "" || len(c) > maxAccountLen {
			return "", fmt.Errorf("%w: claim %q is empty or too long", ErrInvalid, name)
		}
		return c, nil
	case json.Number:
		if _, err := strconv.ParseInt(string(c), 10, 64); err != nil {
			return "", fmt.Errorf("%w: claim %q is not an integer", ErrInvalid, name)
		}
		return string(c), nil
	case nil:
		return "", fmt.Errorf("%w: no claim %q", ErrInvalid, name)
	}
	return "", fmt.Errorf("%w: claim %q is neither a string nor an integer", ErrInvalid, name)
}

// tokenCache remembers verified tokens until they expire, so a waiting fan's
// polls cost a map lookup rather than a signature check. It is bounded: when
// full it starts afresh (a verification each is the worst it costs).
type tokenCache struct {
	mu sync.Mutex
	m  map[string]cachedToken
}

type cachedToken struct {
	account string
	exp     time.Time
}

const maxCachedTokens = 1 << 16

func (c *tokenCache) get(token string, now time.Time) (string, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	e, ok := c.m[token]
	if !ok || !now.Before(e.exp) {
		return "", false
	}
	return e.account, true
}

func (c *tokenCache) put(token, account string, exp time.Time) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.m == nil || len(c.m) >= maxCachedTokens {
		c.m = make(map[string]cachedToken)
	}
	c.m[token] = cachedToken{account: account, exp: exp}
}
