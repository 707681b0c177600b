package jwks

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"
)

// Cache keeps a key set fetched from a Source: fetched when first needed (or
// by Load), fetched again in the background once older than Refresh, and at
// once when a token names a key ID the set lacks (the issuer rotated its
// key), but at most once every MinRefetch, so tokens with made-up key IDs
// cannot drive fetches. One fetch runs at a time and callers that need it
// wait for it, never longer than FetchTimeout. A failed fetch keeps the keys
// already known.
//
// go-jose decodes keys but fetches nothing. MicahParks/jwkset does fetch and
// refresh, but its refresh on an unknown key ID waits on a rate.Limiter with
// the wall clock (a flood of made-up key IDs queues callers instead of being
// answered from the set at hand), each waiting caller refreshes on its own
// rather than sharing the fetch in flight, and it reads no files; the
// booking service's tests also step an injected clock across MinRefetch.
// So this small loop is ours, and go-jose decodes the keys.
type Cache struct {
	source                       Source
	now                          func() time.Time
	timeout, refresh, minRefetch time.Duration

	mu        sync.Mutex
	set       *Set
	fetchedAt time.Time
	tried     time.Time  // last fetch started
	inflight  *fetchCall // the fetch running, if any
	lastErr   error
}

// CacheConfig tunes a Cache; zero values take the defaults.
type CacheConfig struct {
	// Now is the clock (default time.Now).
	Now func() time.Time
	// FetchTimeout bounds one fetch (default 5 s).
	FetchTimeout time.Duration
	// Refresh is how old the set may grow before a use fetches it again in
	// the background (default 5 min).
	Refresh time.Duration
	// MinRefetch is the least time between two fetches caused by unknown key
	// IDs (default 10 s).
	MinRefetch time.Duration
}

type fetchCall struct {
	done chan struct{}
	err  error
}

// ErrNoKeys is wrapped by Keys when no key set could be fetched yet.
var ErrNoKeys = errors.New("key set unavailable")

// NewCache keeps the key set of source.
func NewCache(source Source, cfg CacheConfig) *Cache {
	c := &Cache{source: source, now: cfg.Now, timeout: cfg.FetchTimeout, refresh: cfg.Refresh, minRefetch: cfg.MinRefetch}
	if c.now == nil {
		c.now = time.Now
	}
	if c.timeout <= 0 {
		c.timeout = 5 * time.Second
	}
	if c.refresh <= 0 {
		c.refresh = 5 * time.Minute
	}
	if c.minRefetch <= 0 {
		c.minRefetch = 10 * time.Second
	}
	return c
}

// Keys returns the set to verify a token naming kid with ("" when the token
// names none), fetching as the Cache doc says. The error wraps ErrNoKeys
// when no set was ever fetched; a set that lacks kid is returned as is.
func (c *Cache) Keys(ctx context.Context, kid string) (*Set, error) {
	c.mu.Lock()
	now := c.now()
	set := c.set
	if set != nil && (kid == "" || set.Has(kid)) {
		if now.Sub(c.fetchedAt) >= c.refresh && c.inflight == nil && now.Sub(c.tried) >= c.minRefetch {
			c.start(now) // in the background: this token has its key already
		}
		c.mu.Unlock()
		return set, nil
	}
	call := c.inflight
	if call == nil && (c.tried.IsZero() || now.Sub(c.tried) >= c.minRefetch) {
		call = c.start(now)
	}
	c.mu.Unlock()
	if call != nil {
		select {
		case <-call.done:
		case <-ctx.Done():
			return nil, ctx.Err()
		}
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.set == nil {
		return nil, fmt.Errorf("%w: %w", ErrNoKeys, c.lastErr)
	}
	return c.set, nil
}

// Load fetches the set now (or waits for the fetch in flight) and returns
// that fetch's error. Start-up calls it, so that a bad source is reported
// before the first request; a failure keeps the keys already known.
func (c *Cache) Load(ctx context.Context) error {
	c.mu.Lock()
	call := c.inflight
	if call == nil {
		call = c.start(c.now())
	}
	c.mu.Unlock()
	select {
	case <-call.done:
		return call.err
	case <-ctx.Done():
		return ctx.Err()
	}
}

// Loaded reports whether a set was ever fetched.
func (c *Cache) Loaded() bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.set != nil
}

// start begins a fetch; c.mu is held.
func (c *Cache) start(now time.Time) *fetchCall {
	call := &fetchCall{done: make(chan struct{})}
	c.inflight, c.tried = call, now
	go func() {
		set, err := c.fetch()
		c.mu.Lock()
		if err == nil {
			c.set, c.fetchedAt = set, c.now()
		}
		c.lastErr, call.err = err, err
		c.inflight = nil
		c.mu.Unlock()
		close(call.done)
	}()
	return call
}

func (c *Cache) fetch() (*Set, error) {
	ctx, cancel := context.WithTimeout(context.Background(), c.timeout)
	defer cancel()
	data, err := c.source(ctx)
	if err != nil {
		return nil, err
	}
	return Parse(data)
}
