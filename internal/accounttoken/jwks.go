package accounttoken

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"sync"
	"time"
)

// maxJWKSSize bounds a key set's body: a few keys are a few kilobytes.
const maxJWKSSize = 1 << 20

// jwksSource keeps the login's key set: fetched when first needed, refreshed
// in the background once older than Refresh, and fetched at once when a token
// names a key ID the set lacks (the login rotated its key), but at most once
// every MinRefetch, so tokens with made-up key IDs cannot drive fetches. One
// fetch runs at a time; requests that need it wait for it, never longer than
// FetchTimeout. A failed fetch keeps the keys already known.
type jwksSource struct {
	url                          string
	client                       *http.Client
	timeout, refresh, minRefetch time.Duration
	now                          func() time.Time

	mu        sync.Mutex
	set       *keySet
	fetchedAt time.Time
	tried     time.Time     // last fetch started
	inflight  chan struct{} // closed when the fetch in flight ends
	lastErr   error
}

func newJWKSSource(cfg Config) *jwksSource {
	s := &jwksSource{
		url: cfg.JWKSURL, client: cfg.Client, now: cfg.Now,
		timeout: cfg.FetchTimeout, refresh: cfg.Refresh, minRefetch: cfg.MinRefetch,
	}
	if s.client == nil {
		s.client = &http.Client{}
	}
	if s.timeout <= 0 {
		s.timeout = 5 * time.Second
	}
	if s.refresh <= 0 {
		s.refresh = 5 * time.Minute
	}
	if s.minRefetch <= 0 {
		s.minRefetch = 10 * time.Second
	}
	return s
}

// keys returns the key set to verify a token naming kid with.
func (s *jwksSource) keys(ctx context.Context, kid string) (*keySet, error) {
	s.mu.Lock()
	now := s.now()
	set := s.set
	known := set != nil && (kid == "" || hasKid(set, kid))
	if known {
		if now.Sub(s.fetchedAt) >= s.refresh && s.inflight == nil && now.Sub(s.tried) >= s.minRefetch {
			s.start(now) // in the background: this token has its key already
		}
		s.mu.Unlock()
		return set, nil
	}
	wait := s.inflight
	if wait == nil && (s.tried.IsZero() || now.Sub(s.tried) >= s.minRefetch) {
		wait = s.start(now)
	}
	s.mu.Unlock()
	if wait != nil {
		select {
		case <-wait:
		case <-ctx.Done():
			return nil, ctx.Err()
		}
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.set == nil {
		return nil, fmt.Errorf("login key set unavailable: %w", s.lastErr)
	}
	return s.set, nil
}

func hasKid(ks *keySet, kid string) bool {
	_, ok := ks.byKid[kid]
	return ok
}

// start begins a fetch; s.mu is held.
func (s *jwksSource) start(now time.Time) chan struct{} {
	done := make(chan struct{})
	s.inflight, s.tried = done, now
	go func() {
		set, err := s.fetch()
		s.mu.Lock()
		if err == nil {
			s.set, s.fetchedAt = set, s.now()
		}
		s.lastErr = err
		s.inflight = nil
		s.mu.Unlock()
		close(done)
	}()
	return done
}

func (s *jwksSource) fetch() (*keySet, error) {
	ctx, cancel := context.WithTimeout(context.Background(), s.timeout)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, s.url, nil)
	if err != nil {
		return nil, err
	}
	req.Header.Set("Accept", "application/json")
	resp, err := s.client.Do(req)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return nil, fmt.Errorf("GET %s: %s", s.url, resp.Status)
	}
	body, err := io.ReadAll(io.LimitReader(resp.Body, maxJWKSSize+1))
	if err != nil {
		return nil, err
	}
	if len(body) > maxJWKSSize {
		return nil, errors.New("JWKS larger than 1 MiB")
	}
	return parseJWKS(body)
}
