package gateway

import (
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"os"
	"strings"
	"time"

	"github.com/caddyserver/caddy/v2"
	"github.com/caddyserver/caddy/v2/caddyconfig/caddyfile"
	"go.uber.org/zap"

	"github.com/foyer-dev/foyer/internal/accounttoken"
	"github.com/foyer-dev/foyer/waitingroom"
)

// AccountConfig is the account block: the site's own login issues a signed
// token (a JWT), and with it the room gives each account one place at most
// (docs/configuration.md, "The account block").
type AccountConfig struct {
	// JWKSURL is where the login publishes its public keys (a JWKS). It is
	// fetched when first needed, kept, refreshed every JWKSRefresh and at once
	// (at most every 10 s) when a token names a kid it lacks.
	JWKSURL string `json:"jwks_url,omitempty"`
	// PublicKey is the path of the login's public key (PEM, PKIX or a
	// certificate), instead of a JWKS.
	PublicKey string `json:"public_key,omitempty"`
	// Cookie and Header name where the token is read: the cookie first, then
	// the header (a "Bearer " prefix is dropped). At least one.
	Cookie string `json:"cookie,omitempty"`
	Header string `json:"header,omitempty"`
	// Claim names the account in the token. Default: sub.
	Claim string `json:"claim,omitempty"`
	// Issuer and Audience, when set, must be the token's iss and aud.
	Issuer   string `json:"issuer,omitempty"`
	Audience string `json:"audience,omitempty"`
	// Algorithms the token may be signed with. Default: every asymmetric
	// JWS algorithm; none and the HMAC ones are never accepted.
	Algorithms []string `json:"algorithms,omitempty"`
	// Required sends visitors without a valid token to LoginURL: browsers are
	// redirected (303), JSON clients get 401 with the URL. Without it they
	// queue as before, each browser with its own place.
	Required bool `json:"required,omitempty"`
	// LoginURL is the site's login page; Caddy placeholders are replaced, so
	// /login?next={http.request.uri_escaped} brings the fan back. Requests to
	// its path bypass the room, so the login itself is never queued.
	LoginURL string `json:"login_url,omitempty"`
	// JWKSRefresh is how old the key set may grow before it is fetched again
	// (default 5m); FetchTimeout bounds one fetch (default 5s).
	JWKSRefresh  caddy.Duration `json:"jwks_refresh,omitempty"`
	FetchTimeout caddy.Duration `json:"fetch_timeout,omitempty"`
}

// accountGate is the account block, ready: the verifier, and the login
// page's path and host (empty: any host), whose requests bypass the room.
type accountGate struct {
	cfg       *AccountConfig
	verifier  *accounttoken.Verifier
	loginPath string
	loginHost string
}

// validate checks the block; every error names the line at fault.
func (a *AccountConfig) validate() error {
	if (a.JWKSURL == "") == (a.PublicKey == "") {
		return errors.New("account: give exactly one of jwks_url and public_key")
	}
	if a.JWKSURL != "" {
		u, err := url.Parse(a.JWKSURL)
		if err != nil || (u.Scheme != "https" && u.Scheme != "http") || u.Host == "" {
			return fmt.Errorf("account: jwks_url %q is not an http(s) URL", a.JWKSURL)
		}
	}
	if a.Cookie == "" && a.Header == "" {
		return errors.New("account: name the cookie or the header that carries the token")
	}
	if a.Required && a.LoginURL == "" {
		return errors.New("account: required needs login_url")
	}
	if a.LoginURL != "" {
		if _, _, err := loginTarget(a.LoginURL); err != nil {
			return err
		}
	}
	if a.JWKSRefresh < 0 || a.FetchTimeout < 0 {
		return errors.New("account: jwks_refresh and fetch_timeout must be positive")
	}
	return nil
}

// loginTarget is the path (and host, for an absolute URL) whose requests
// bypass the room.
func loginTarget(raw string) (path, host string, err error) {
	u, err := url.Parse(raw)
	if err != nil || (u.Scheme != "" && u.Scheme != "http" && u.Scheme != "https") ||
		(u.Host == "" && !strings.HasPrefix(u.Path, "/")) {
		return "", "", fmt.Errorf("account: login_url %q is neither a path starting with '/' nor an http(s) URL", raw)
	}
	if u.Path == "" || u.Path == "/" {
		return "", "", fmt.Errorf("account: login_url %q names the site's root: every request would bypass the room", raw)
	}
	return u.Path, u.Hostname(), nil
}

// newAccountGate prepares the block: it reads the PEM key, if that is where
// keys come from, and builds the verifier.
func newAccountGate(a *AccountConfig) (*accountGate, error) {
	if err := a.validate(); err != nil {
		return nil, err
	}
	cfg := accounttoken.Config{
		JWKSURL: a.JWKSURL, Issuer: a.Issuer, Audience: a.Audience, Claim: a.Claim,
		Algorithms: a.Algorithms, Refresh: time.Duration(a.JWKSRefresh), FetchTimeout: time.Duration(a.FetchTimeout),
		Now: now,
	}
	if a.PublicKey != "" {
		pem, err := os.ReadFile(a.PublicKey)
		if err != nil {
			return nil, fmt.Errorf("account: public_key: %w", err)
		}
		cfg.PublicKeyPEM = pem
	}
	v, err := accounttoken.New(cfg)
	if err != nil {
		return nil, err
	}
	g := &accountGate{cfg: a, verifier: v}
	if a.LoginURL != "" {
		g.loginPath, g.loginHost, _ = loginTarget(a.LoginURL)
	}
	return g, nil
}

// isLogin reports whether r asks for the login page, which is never queued.
func (g *accountGate) isLogin(r *http.Request) bool {
	if g.loginPath == "" || r.URL.Path != g.loginPath {
		return false
	}
	if g.loginHost == "" {
		return true
	}
	host := r.Host
	if h, _, ok := strings.Cut(host, ":"); ok && !strings.HasPrefix(host, "[") {
		host = h
	}
	return strings.EqualFold(host, g.loginHost)
}

// token finds the account token in r: the cookie, then the header. Every
// poll of a signed-in fan reads it, so the cookie is found the way
// ourCookies finds the room's, without net/http's validation of every
// cookie's bytes: the token is verified anyway.
func (g *accountGate) token(r *http.Request) string {
	if g.cfg.Cookie != "" {
		for _, line := range r.Header["Cookie"] {
			for part := range strings.SplitSeq(line, ";") {
				name, value, ok := strings.Cut(strings.TrimSpace(part), "=")
				if ok && name == g.cfg.Cookie && value != "" {
					return strings.Trim(value, `"`)
				}
			}
		}
	}
	if g.cfg.Header != "" {
		v := strings.TrimSpace(r.Header.Get(g.cfg.Header))
		if len(v) > 7 && strings.EqualFold(v[:7], "bearer ") {
			v = strings.TrimSpace(v[7:])
		}
		return v
	}
	return ""
}

// errLoginRequired is admit's answer to a visitor without a valid account
// token in a room that requires one.
var errLoginRequired = errors.New("login required")

// accountOf verifies the visitor's account token and, when it is good,
// returns the account, so the room keeps it to one place. A bad or missing
// token is errLoginRequired when the block is required, and otherwise leaves
// the visitor to queue as anyone without an account.
func (h *Handler) accountOf(r *http.Request) (waitingroom.AccountKey, bool, error) {
	g := h.account
	tok := g.token(r)
	if tok == "" {
		if g.cfg.Required {
			return waitingroom.AccountKey{}, false, errLoginRequired
		}
		return waitingroom.AccountKey{}, false, nil
	}
	acct, err := g.verifier.Verify(r.Context(), tok)
	if err != nil {
		if ce := h.logger.Check(zap.DebugLevel, "account token refused"); ce != nil {
			ce.Write(zap.String("room", h.Room), zap.Error(err))
		}
		if g.cfg.Required {
			return waitingroom.AccountKey{}, false, errLoginRequired
		}
		return waitingroom.AccountKey{}, false, nil
	}
	return waitingroom.NewAccountKey(h.Room, acct), true, nil
}

// toLogin sends a visitor without a valid account token to the login page:
// a redirect for a browser, 401 with the page's URL for a JSON client.
func (h *Handler) toLogin(w http.ResponseWriter, r *http.Request) error {
	target := h.account.cfg.LoginURL
	if repl, ok := r.Context().Value(caddy.ReplacerCtxKey).(*caddy.Replacer); ok {
		target = repl.ReplaceKnown(target, "")
	}
	w.Header().Set("Cache-Control", "no-store")
	if wantsJSON(r) {
		w.Header().Set("WWW-Authenticate", `Bearer realm="`+h.Room+`"`)
		return writeJSON(w, http.StatusUnauthorized, loginError{
			Error:    "login_required",
			Message:  h.langs.choose(nil, r).T("api.login_required"),
			LoginURL: target,
		})
	}
	http.Redirect(w, r, target, http.StatusSeeOther)
	return nil
}

// loginError is apiError with the login page's URL.
type loginError struct {
	Error    string `json:"error"`
	Message  string `json:"message"`
	LoginURL string `json:"login_url"`
}

// parseAccountBlock reads
//
//	account {
//	    jwks_url      <url>       | public_key <path>
//	    cookie        <name>
//	    header        <name>
//	    claim         <name>
//	    issuer        <iss>
//	    audience      <aud>
//	    algorithms    <alg>...
//	    required
//	    login_url     <url>
//	    jwks_refresh  <duration>
//	    fetch_timeout <duration>
//	}
//
// accountLines are the lines of the account block that take one value (or
// none, for a flag), by name.
var accountLines = map[string]func(a *AccountConfig) waitingroom.Value{
	"jwks_url":      func(a *AccountConfig) waitingroom.Value { return (*waitingroom.Text)(&a.JWKSURL) },
	"public_key":    func(a *AccountConfig) waitingroom.Value { return (*waitingroom.Text)(&a.PublicKey) },
	"cookie":        func(a *AccountConfig) waitingroom.Value { return (*waitingroom.Text)(&a.Cookie) },
	"header":        func(a *AccountConfig) waitingroom.Value { return (*waitingroom.Text)(&a.Header) },
	"claim":         func(a *AccountConfig) waitingroom.Value { return (*waitingroom.Text)(&a.Claim) },
	"issuer":        func(a *AccountConfig) waitingroom.Value { return (*waitingroom.Text)(&a.Issuer) },
	"audience":      func(a *AccountConfig) waitingroom.Value { return (*waitingroom.Text)(&a.Audience) },
	"login_url":     func(a *AccountConfig) waitingroom.Value { return (*waitingroom.Text)(&a.LoginURL) },
	"required":      func(a *AccountConfig) waitingroom.Value { return (*waitingroom.Flag)(&a.Required) },
	"jwks_refresh":  func(a *AccountConfig) waitingroom.Value { return (*waitingroom.Duration)(&a.JWKSRefresh) },
	"fetch_timeout": func(a *AccountConfig) waitingroom.Value { return (*waitingroom.Duration)(&a.FetchTimeout) },
}

func parseAccountBlock(d *caddyfile.Dispenser, h *Handler) error {
	if d.NextArg() {
		return d.ArgErr()
	}
	a := &AccountConfig{}
	for nesting := d.Nesting(); d.NextBlock(nesting); {
		name := d.Val()
		var err error
		field, ok := accountLines[name]
		switch {
		case name == "algorithms":
			if a.Algorithms = d.RemainingArgs(); len(a.Algorithms) == 0 {
				err = d.ArgErr()
			}
		case !ok:
			err = d.Errf("unrecognized account setting %q", name)
		default:
			err = parseValue(d, "account "+name, field(a), waitingroom.Bounds{})
		}
		if err != nil {
			return err
		}
	}
	if err := a.validate(); err != nil {
		return d.Err(err.Error())
	}
	h.Account = a
	return nil
}
