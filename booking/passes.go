package booking

import (
	"context"
	"crypto/ed25519"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/foyer-dev/foyer/waitingroom"
	"github.com/golang-jwt/jwt/v5"
)

// PassHeader carries the admission pass the gateway forwards with every
// admitted request.
const PassHeader = "X-Waiting-Room-Pass"

// Passes identifies customers by their admission pass. Keys come from the
// gateway's JWKS (a URL or a file), refetched periodically and when a pass
// names a key id not seen yet (a key rotation), at most once per
// MinRefetch so that a flood of forged kids cannot hammer the gateway.
type Passes struct {
	room   string
	issuer string
	clock  Clock
	fetch  func(context.Context) ([]byte, error) // nil: static keys
	// MinRefetch is the least time between two fetches of the JWKS.
	MinRefetch time.Duration
	// Cookie, when set, is a cookie the pass may also come in. Only the
	// standalone demo sets it; behind a gateway the header is the only way.
	Cookie string

	mu        sync.Mutex // serializes fetches
	lastFetch time.Time
	keys      atomic.Pointer[passKeys]
}

type passKeys struct {
	verifier *waitingroom.PassVerifier
	kids     map[string]bool
	keys     map[string]ed25519.PublicKey
}

// maxJWKSSize bounds a fetched key set.
const maxJWKSSize = 1 << 20

// NewStaticPasses trusts a fixed set of keys (tests, the standalone demo).
// Passes must come from the issuer waitingroom.DefaultIssuer unless
// WithIssuer names another.
func NewStaticPasses(keys map[string]ed25519.PublicKey, room string, clock Clock) *Passes {
	p := &Passes{room: room, issuer: waitingroom.DefaultIssuer, clock: clock}
	p.install(keys)
	return p
}

// NewJWKSPasses trusts the keys published at source: an http(s) URL, or a
// file path. Call Load before serving and Run to keep the keys fresh.
func NewJWKSPasses(source, room string, clock Clock, client *http.Client) *Passes {
	p := &Passes{room: room, issuer: waitingroom.DefaultIssuer, clock: clock, MinRefetch: 10 * time.Second}
	if strings.HasPrefix(source, "http://") || strings.HasPrefix(source, "https://") {
		if client == nil {
			client = &http.Client{Timeout: 5 * time.Second}
		}
		p.fetch = func(ctx context.Context) ([]byte, error) {
			req, err := http.NewRequestWithContext(ctx, http.MethodGet, source, nil)
			if err != nil {
				return nil, err
			}
			resp, err := client.Do(req)
			if err != nil {
				return nil, err
			}
			defer resp.Body.Close()
			if resp.StatusCode != http.StatusOK {
				return nil, fmt.Errorf("GET %s: %s", source, resp.Status)
			}
			return io.ReadAll(io.LimitReader(resp.Body, maxJWKSSize))
		}
	} else {
		p.fetch = func(context.Context) ([]byte, error) { return os.ReadFile(source) }
	}
	return p
}

// WithIssuer makes p accept only passes whose "iss" is iss: the gateway's
// `issuer` setting. It must be called before p serves requests. An empty iss
// is refused, so that a typo cannot turn the check off.
func (p *Passes) WithIssuer(iss string) *Passes {
	if iss == "" {
		panic("booking: empty pass issuer")
	}
	p.issuer = iss
	if k := p.keys.Load(); k != nil {
		p.install(k.keys)
	}
	return p
}

func (p *Passes) install(keys map[string]ed25519.PublicKey) {
	kids := make(map[string]bool, len(keys))
	for kid := range keys {
		kids[kid] = true
	}
	v := waitingroom.NewPassVerifier(keys, waitingroom.WithIssuer(p.issuer), waitingroom.WithClock(p.clock.Now), waitingroom.WithLeeway(5*time.Second))
	p.keys.Store(&passKeys{verifier: v, kids: kids, keys: keys})
}

// Load fetches the key set now.
func (p *Passes) Load(ctx context.Context) error {
	if p.fetch == nil {
		return nil
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.loadLocked(ctx)
}

func (p *Passes) loadLocked(ctx context.Context) error {
	p.lastFetch = p.clock.Now()
	data, err := p.fetch(ctx)
	if err != nil {
		return fmt.Errorf("fetching pass keys: %w", err)
	}
	keys, err := waitingroom.ParseJWKS(data)
	if err != nil {
		return err
	}
	p.install(keys)
	return nil
}

// refetch loads the keys unless that was done less than MinRefetch ago.
func (p *Passes) refetch(ctx context.Context) {
	if p.fetch == nil {
		return
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.clock.Now().Sub(p.lastFetch) < p.MinRefetch {
		return
	}
	_ = p.loadLocked(ctx)
}

// Run refetches the keys every interval until ctx ends.
func (p *Passes) Run(ctx context.Context, interval time.Duration, onError func(error)) {
	if p.fetch == nil {
		return
	}
	every(ctx, interval, func() {
		if err := p.Load(ctx); err != nil && onError != nil {
			onError(err)
		}
	})
}

// Customer returns the verified customer id of the request: the subject of
// its admission pass. Every failure is KindUnauthorized, except having no
// keys at all (the gateway's JWKS was never reachable), which is
// KindUnavailable.
func (p *Passes) Customer(r *http.Request) (string, error) {
	token := r.Header.Get(PassHeader)
	if token == "" && p.Cookie != "" {
		if c, err := r.Cookie(p.Cookie); err == nil {
			token = c.Value
		}
	}
	if token == "" {
		return "", Errorf(KindUnauthorized, CodeUnauthorized, "an admission pass is required")
	}
	if len(token) > 4096 {
		return "", Errorf(KindUnauthorized, CodeUnauthorized, "the admission pass is not valid")
	}
	keys := p.keys.Load()
	if keys == nil || !keys.kids[kidOf(token)] {
		// An unknown key id may be a rotation we have not seen yet.
		p.refetch(r.Context())
		keys = p.keys.Load()
	}
	if keys == nil {
		return "", &Error{Kind: KindUnavailable, Code: CodeUnavailable, Message: "admission pass keys are not loaded yet"}
	}
	pass, err := keys.verifier.Verify(token, p.room)
	if err != nil {
		return "", &Error{Kind: KindUnauthorized, Code: CodeUnauthorized, Message: "the admission pass is not valid", Err: err}
	}
	return pass.Subject, nil
}

// kidOf reads the "kid" of a JWT header without trusting it: it only decides
// whether refetching the keys could help.
func kidOf(token string) string {
	t, _, err := jwt.NewParser().ParseUnverified(token, &jwt.RegisteredClaims{})
	if err != nil {
		return ""
	}
	kid, _ := t.Header["kid"].(string)
	return kid
}

// EnsureLoaded reports whether pass keys are loaded, fetching them first if
// they are not (at most once per MinRefetch): a readiness probe calls it, so
// a service started before its gateway becomes ready once the keys arrive.
func (p *Passes) EnsureLoaded(ctx context.Context) error {
	if p.keys.Load() == nil {
		p.refetch(ctx)
	}
	if p.keys.Load() == nil {
		return errors.New("pass keys are not loaded")
	}
	return nil
}
