package booking

import (
	"context"
	"crypto/ed25519"
	"errors"
	"net/http"
	"sync/atomic"
	"time"

	"github.com/foyer-dev/foyer/waitingroom/pass"
)

// PassHeader carries the admission pass the gateway forwards with every
// admitted request.
const PassHeader = "X-Waiting-Room-Pass"

// Passes identifies customers by their admission pass. Keys come from the
// gateway's JWKS (a URL or a file) kept by a pass.KeyCache: refetched
// periodically and when a pass names a key id not seen yet (a key rotation),
// at most once per DefaultMinRefetch (WithMinRefetch) so that a flood of forged kids cannot hammer
// the gateway.
type Passes struct {
	room   string
	clock  Clock
	source string
	client *http.Client
	keys   *pass.KeyCache // nil: static keys
	// Cookie, when set, is a cookie the pass may also come in. Only the
	// standalone demo sets it; behind a gateway the header is the only way.
	Cookie string

	static   map[string]ed25519.PublicKey
	issuer   string
	verifier atomic.Pointer[pass.Verifier]
}

// DefaultMinRefetch is the least time between two fetches of the JWKS that
// unknown key ids cause, unless WithMinRefetch says otherwise.
const DefaultMinRefetch = 10 * time.Second

// NewStaticPasses trusts a fixed set of keys (tests, the standalone demo).
// Passes must come from the issuer pass.DefaultIssuer unless WithIssuer
// names another.
func NewStaticPasses(keys map[string]ed25519.PublicKey, room string, clock Clock) *Passes {
	p := &Passes{room: room, clock: clock, static: keys, issuer: pass.DefaultIssuer}
	p.install()
	return p
}

// NewJWKSPasses trusts the keys published at source: an http(s) URL, or a
// file path. Call Load before serving and Run to keep the keys fresh.
func NewJWKSPasses(source, room string, clock Clock, client *http.Client) *Passes {
	p := &Passes{room: room, clock: clock, source: source, client: client, issuer: pass.DefaultIssuer}
	return p.WithMinRefetch(DefaultMinRefetch)
}

// WithMinRefetch sets the least time between two fetches of the JWKS that
// unknown key ids cause. It must be called before p serves requests.
func (p *Passes) WithMinRefetch(d time.Duration) *Passes {
	if p.source == "" {
		return p
	}
	p.keys = pass.NewKeyCache(p.source, pass.CacheConfig{Client: p.client, Now: p.clock.Now, MinRefetch: d})
	p.install()
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
	p.install()
	return p
}

func (p *Passes) install() {
	opts := []pass.Option{pass.WithIssuer(p.issuer), pass.WithClock(p.clock.Now), pass.WithLeeway(5 * time.Second)}
	if p.keys != nil {
		p.verifier.Store(pass.NewCachedVerifier(p.keys, opts...))
	} else {
		p.verifier.Store(pass.NewVerifier(p.static, opts...))
	}
}

// Load fetches the key set now.
func (p *Passes) Load(ctx context.Context) error {
	if p.keys == nil {
		return nil
	}
	return p.keys.Load(ctx)
}

// Run refetches the keys every interval until ctx ends.
func (p *Passes) Run(ctx context.Context, interval time.Duration, onError func(error)) {
	if p.keys == nil {
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
	claims, err := p.verifier.Load().VerifyContext(r.Context(), token, p.room)
	if errors.Is(err, pass.ErrNoKeys) {
		return "", &Error{Kind: KindUnavailable, Code: CodeUnavailable, Message: "admission pass keys are not loaded yet", Err: err}
	}
	if err != nil {
		return "", &Error{Kind: KindUnauthorized, Code: CodeUnauthorized, Message: "the admission pass is not valid", Err: err}
	}
	return claims.Subject, nil
}

// FromWaitlist reports whether the request's admission pass may take places
// that came back after the sell-out (the pass's "waitlist" claim: its holder
// was let in from the room's waitlist, or the sale reopened since;
// docs/PROTOCOL.md, "The waitlist claim"). A request without a valid pass
// may not.
func (p *Passes) FromWaitlist(r *http.Request) bool {
	token := r.Header.Get(PassHeader)
	if token == "" && p.Cookie != "" {
		if c, err := r.Cookie(p.Cookie); err == nil {
			token = c.Value
		}
	}
	if token == "" || len(token) > 4096 {
		return false
	}
	claims, err := p.verifier.Load().VerifyContext(r.Context(), token, p.room)
	return err == nil && claims.Waitlist
}

// EnsureLoaded reports whether pass keys are loaded, fetching them first if
// they are not (at most once per DefaultMinRefetch): a readiness probe calls it, so
// a service started before its gateway becomes ready once the keys arrive.
func (p *Passes) EnsureLoaded(ctx context.Context) error {
	if p.keys == nil {
		return nil
	}
	if err := p.keys.EnsureLoaded(ctx); err != nil {
		return errors.New("pass keys are not loaded")
	}
	return nil
}
