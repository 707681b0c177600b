package pass

import (
	"context"
	"crypto/ed25519"
	"fmt"
	"net/http"
	"time"

	"github.com/foyer-dev/foyer/internal/jwks"
)

// ErrNoKeys is wrapped by a cached verifier's errors while no key set could
// be fetched at all (the gateway was never reachable): an origin answers 503
// then, not a 401 that blames the visitor.
var ErrNoKeys = jwks.ErrNoKeys

// KeyCache keeps a room's published key set (its jwks.json, from a URL or a
// file): fetched by Load or when first needed, fetched again in the
// background once older than Refresh, and at once when a pass names a key ID
// the set lacks (the gateway rotated its key), but at most once every
// MinRefetch, so that a flood of forged kids cannot hammer the gateway. A
// failed fetch keeps the keys already known. NewCachedVerifier verifies with
// it.
type KeyCache struct {
	cache *jwks.Cache
}

// CacheConfig tunes a KeyCache; zero values take the defaults.
type CacheConfig struct {
	Client       *http.Client     // fetches an http(s) source (default: a plain client)
	Now          func() time.Time // the clock (default time.Now)
	FetchTimeout time.Duration    // bounds one fetch (default 5 s)
	Refresh      time.Duration    // how old the set may grow (default 5 min)
	MinRefetch   time.Duration    // least time between fetches for unknown kids (default 10 s)
}

// NewKeyCache keeps the key set at source: an http(s) URL, or a file path.
func NewKeyCache(source string, cfg CacheConfig) *KeyCache {
	return &KeyCache{cache: jwks.NewCache(jwks.URLOrFile(source, cfg.Client), jwks.CacheConfig{
		Now: cfg.Now, FetchTimeout: cfg.FetchTimeout, Refresh: cfg.Refresh, MinRefetch: cfg.MinRefetch,
	})}
}

// Load fetches the key set now and reports that fetch's failure.
func (c *KeyCache) Load(ctx context.Context) error {
	if err := c.cache.Load(ctx); err != nil {
		return fmt.Errorf("fetching pass keys: %w", err)
	}
	return nil
}

// Loaded reports whether a key set was ever fetched.
func (c *KeyCache) Loaded() bool { return c.cache.Loaded() }

// EnsureLoaded fetches the key set if none was fetched yet (at most once per
// MinRefetch) and reports whether one is there now: a readiness probe calls
// it, so an origin started before its gateway becomes ready once the keys
// arrive.
func (c *KeyCache) EnsureLoaded(ctx context.Context) error {
	if c.cache.Loaded() {
		return nil
	}
	if _, err := c.cache.Keys(ctx, ""); err != nil {
		return err
	}
	return nil
}

// Key returns the Ed25519 key whose "kid" is kid, fetching the set as the
// KeyCache doc says.
func (c *KeyCache) Key(ctx context.Context, kid string) (ed25519.PublicKey, error) {
	set, err := c.cache.Keys(ctx, kid)
	if err != nil {
		return nil, err
	}
	if k, ok := set.Key(kid); ok {
		if pub, ok := k.Key.(ed25519.PublicKey); ok {
			return pub, nil
		}
		return nil, fmt.Errorf("kid %q is not an Ed25519 key", kid)
	}
	// A key published without a kid goes by its thumbprint (ParseJWKS).
	for _, k := range set.Keys {
		if pub, ok := k.Key.(ed25519.PublicKey); ok && k.KeyID == "" && Thumbprint(pub) == kid {
			return pub, nil
		}
	}
	return nil, fmt.Errorf("unknown kid %q", kid)
}
