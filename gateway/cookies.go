package gateway

import (
	"net/http"
	"strconv"
	"strings"
	"sync/atomic"
	"time"

	"go.uber.org/zap"

	"github.com/foyer-dev/foyer/waitingroom"
)

// ourCookies finds the ticket and the pass in one pass over the request's
// Cookie headers, without building every cookie the browser sent (net/http
// would parse them all on each lookup, on every request).
func (h *Handler) ourCookies(r *http.Request) (ticket, pass string) {
	for _, line := range r.Header["Cookie"] {
		for part := range strings.SplitSeq(line, ";") {
			name, value, ok := strings.Cut(strings.TrimSpace(part), "=")
			if !ok {
				continue
			}
			if len(value) > 1 && value[0] == '"' && value[len(value)-1] == '"' {
				value = value[1 : len(value)-1]
			}
			switch name {
			case h.ticketCk:
				ticket = value
			case h.passCk:
				pass = value
			}
		}
	}
	return ticket, pass
}

// dropOurCookies removes the ticket and the pass from the Cookie headers the
// origin will see. The origin gets the pass in X-Waiting-Room-Pass; the ticket
// is none of its business; and a pass sent twice is a few hundred bytes more
// on every admitted request.
func (h *Handler) dropOurCookies(hdr http.Header) {
	lines := hdr["Cookie"]
	if len(lines) == 0 {
		return
	}
	kept := lines[:0:0]
	for _, line := range lines {
		if !strings.Contains(line, h.ticketCk) && !strings.Contains(line, h.passCk) {
			kept = append(kept, line)
			continue
		}
		var b strings.Builder
		for part := range strings.SplitSeq(line, ";") {
			name, _, _ := strings.Cut(strings.TrimSpace(part), "=")
			if name == h.ticketCk || name == h.passCk {
				continue
			}
			if b.Len() > 0 {
				b.WriteString("; ")
			}
			b.WriteString(strings.TrimSpace(part))
		}
		if b.Len() > 0 {
			kept = append(kept, b.String())
		}
	}
	if len(kept) == 0 {
		delete(hdr, "Cookie")
		return
	}
	hdr["Cookie"] = kept
}

// setCookie adds a Set-Cookie for one of our cookies. Their values are
// base64url and JWTs, valid cookie octets by construction, so the header is
// written directly rather than through http.Cookie's validation.
func (h *Handler) setCookie(w http.ResponseWriter, r *http.Request, name, value string, maxAge int) {
	var line [640]byte // a pass and its attributes fit: the line costs one string
	b := append(append(append(line[:0], name...), '='), value...)
	h.setCookieLine(w, r, b, maxAge)
}

// Values of cookie_samesite.
const (
	sameSiteLax    = "lax"
	sameSiteStrict = "strict"
	sameSiteNone   = "none"
)

// cookieAttrs are the attributes after Max-Age on every cookie of ours,
// worked out once from the settings: the request only decides whether
// Secure is added when the settings do not force it.
type cookieAttrs struct {
	// tail follows Max-Age on every line: HttpOnly and SameSite, then Secure
	// and Partitioned when the settings force them.
	tail string
	// forcedSecure says tail has Secure already; otherwise it is added on
	// TLS.
	forcedSecure bool
	// plainHTTPSeen is set once such a cookie went out over plain HTTP, so
	// that the warning is logged once.
	plainHTTPSeen *atomic.Bool
}

// newCookieAttrs builds the attributes for cookie_samesite and
// cookie_partitioned. SameSite=None and Partitioned both need Secure
// (browsers drop such a cookie without it), so either sets it whatever the
// request came over; a room that sets them over plain HTTP loses its
// cookies, which docs/configuration.md says.
func newCookieAttrs(sameSite string, partitioned bool) cookieAttrs {
	var a cookieAttrs
	switch sameSite {
	case sameSiteStrict:
		a.tail = "; HttpOnly; SameSite=Strict"
	case sameSiteNone:
		a.tail = "; HttpOnly; SameSite=None; Secure"
		a.forcedSecure = true
	default:
		a.tail = "; HttpOnly; SameSite=Lax"
	}
	if partitioned {
		if !a.forcedSecure {
			a.tail += "; Secure"
			a.forcedSecure = true
		}
		a.tail += "; Partitioned"
	}
	if a.forcedSecure {
		a.plainHTTPSeen = new(atomic.Bool)
	}
	return a
}

// setCookieLine adds a Set-Cookie for one of our cookies from its
// name=value, with our attributes.
func (h *Handler) setCookieLine(w http.ResponseWriter, r *http.Request, b []byte, maxAge int) {
	if r.TLS == nil && h.cookieAttrs.plainHTTPSeen != nil && !h.cookieAttrs.plainHTTPSeen.Swap(true) && h.logger != nil {
		// Behind a proxy that ends TLS this is right; served to browsers
		// over plain HTTP, no fan ever gets in.
		h.logger.Warn("waiting room cookies are Secure (cookie_samesite none or cookie_partitioned) but this request came over plain HTTP: "+
			"browsers keep them only from HTTPS, so serve the room over HTTPS or end TLS in front of Caddy",
			zap.String("room", h.Room), zap.String("host", r.Host))
	}
	addSetCookie(w, h.cookieAttrs.append(b, r, maxAge))
}

// append ends a Set-Cookie line: every cookie of ours is the whole site's,
// kept from scripts, and sent as cookie_samesite says.
func (a cookieAttrs) append(b []byte, r *http.Request, maxAge int) []byte {
	b = append(b, "; Path=/; Max-Age="...)
	b = strconv.AppendInt(b, int64(maxAge), 10)
	if a.tail == "" {
		a = newCookieAttrs("", false) // a handler built without setup, in tests
	}
	b = append(b, a.tail...)
	if r.TLS != nil && !a.forcedSecure {
		b = append(b, "; Secure"...)
	}
	return b
}

func addSetCookie(w http.ResponseWriter, line []byte) {
	hdr := w.Header()
	hdr["Set-Cookie"] = append(hdr["Set-Cookie"], string(line))
}

// setTicket hands the visitor their (renewed) ticket. admit calls it when the
// ticket changed (it carries the last position shown) or is due for renewal
// (Room.MustReseal), not on every poll. The ticket is sealed straight into
// the cookie's line: every newcomer gets one.
func (h *Handler) setTicket(w http.ResponseWriter, r *http.Request, t waitingroom.Ticket) {
	if t.Room == "" {
		return // no place was given (closed, sold out): nothing to keep
	}
	life := h.room.Settings().TicketLifetime
	var line [640]byte
	b := append(append(line[:0], h.ticketCk...), '=')
	b = h.room.AppendSealedTicket(b, t)
	h.setCookieLine(w, r, b, int(life/time.Second))
}

// setPass hands the visitor their admission pass, valid until the session ends.
func (h *Handler) setPass(w http.ResponseWriter, r *http.Request, tok string, p waitingroom.Pass) {
	h.setCookie(w, r, h.passCk, tok, max(1, int(p.ExpiresAt.Sub(h.clockNow())/time.Second)))
}

// clearPass removes the pass cookie, once the origin has ended the session.
func (h *Handler) clearPass(w http.ResponseWriter, r *http.Request) {
	h.setCookie(w, r, h.passCk, "", -1)
}
