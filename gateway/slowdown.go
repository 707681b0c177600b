package gateway

import (
	"errors"
	"html"
	"io"
	"math"
	"net/http"
	"net/netip"
	"strconv"
	"strings"

	"github.com/caddyserver/caddy/v2/modules/caddyhttp"

	"github.com/foyer-dev/foyer/waitingroom"
)

// clientAddr is the visitor's address as Caddy determined it: the peer's,
// or, from a proxy in the server's trusted_proxies, the client it forwarded
// for (Caddy's client_ip). Outside a Caddy server it is the peer's.
func clientAddr(r *http.Request) netip.Addr {
	if s, ok := caddyhttp.GetVar(r.Context(), caddyhttp.ClientIPVarKey).(string); ok {
		if a, err := netip.ParseAddr(s); err == nil {
			return a
		}
	}
	if ap, err := netip.ParseAddrPort(r.RemoteAddr); err == nil {
		return ap.Addr()
	}
	a, _ := netip.ParseAddr(r.RemoteAddr)
	return a
}

// refuse answers a visitor the room could not place: too many new places
// from their address (429), or a store that cannot take them (503).
func (h *Handler) refuse(w http.ResponseWriter, r *http.Request, err error) error {
	if le, ok := errors.AsType[*waitingroom.JoinLimitedError](err); ok {
		return h.slowDown(w, r, le.RetryAfter.Seconds())
	}
	if isCodeError(err) {
		return h.refuseCode(w, r, err, r.URL.RequestURI())
	}
	return h.unavailable(w, r, err)
}

// slowDown answers 429 with Retry-After to a newcomer over the join limit:
// JSON for apps, a plain page for browsers, in the fan's language. It sets no
// cookie: nothing of the visit is kept, so a client that ignores it gains
// nothing by coming back at once. The body is written by hand, as cheaply as
// Caddy's own respond, since an abusive client may send nothing else.
//
// The page says how long to wait and links back to where the fan was going;
// it does not reload itself, since a timed reload the fan did not choose is
// a time limit in WCAG 2.2.1's sense (axe-core's meta-refresh rule), and
// coming back early costs the fan nothing but another wait.
func (h *Handler) slowDown(w http.ResponseWriter, r *http.Request, wait float64) error {
	secs := int64(max(1, math.Ceil(wait)))
	n := strconv.FormatInt(secs, 10)
	hdr := w.Header()
	hdr["Retry-After"] = []string{n}
	l := h.langs.choose(nil, r)
	if wantsJSON(r) {
		body := make([]byte, 0, 192)
		body = append(body, `{"error":"join_limited","message":`...)
		body = strconv.AppendQuote(body, l.Count("api.join_limited", uint64(secs)))
		body = append(body, `,"retry_after":`...)
		body = append(body, n...)
		body = append(body, "}\n"...)
		return writeBody(w, http.StatusTooManyRequests, body)
	}
	body := slowDownPage(l, secs, r.URL.RequestURI())
	hdr["Content-Type"] = []string{"text/html; charset=utf-8"}
	hdr["Cache-Control"] = []string{"no-store"}
	hdr["Content-Length"] = []string{strconv.Itoa(len(body))}
	w.WriteHeader(http.StatusTooManyRequests)
	_, err := io.WriteString(w, body)
	return err
}

// slowDownPage is the slow-down page in a language: wait secs, then follow
// again, the way the fan was going.
func slowDownPage(l *locale, secs int64, again string) string {
	var b strings.Builder
	b.Grow(1024)
	b.WriteString("<!doctype html>\n<html lang=\"")
	b.WriteString(l.Code)
	b.WriteString(`" dir="`)
	b.WriteString(l.Dir)
	b.WriteString(slowDownHead)
	b.WriteString(html.EscapeString(l.T("slowdown.title")))
	b.WriteString(slowDownStyle)
	b.WriteString(html.EscapeString(l.T("slowdown.title")))
	b.WriteString("</h1>\n<p>")
	b.WriteString(html.EscapeString(l.Count("slowdown.body", uint64(secs))))
	b.WriteString("</p>\n<p><a href=\"")
	b.WriteString(html.EscapeString(again))
	b.WriteString(`">`)
	b.WriteString(html.EscapeString(l.T("slowdown.again")))
	b.WriteString("</a></p>\n</main>\n</body>\n</html>\n")
	return b.String()
}

// The slow-down page's fixed parts.
const (
	slowDownHead = `">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta name="robots" content="noindex">
<link rel="icon" href="data:,">
<title>`
	slowDownStyle = `</title>
<style>body{font:1.1rem/1.5 system-ui,sans-serif;max-inline-size:34rem;margin-block:15vh;margin-inline:auto;padding-inline:1rem;color:#222;background:#fff}a{color:#9a3412}</style>
</head>
<body>
<main>
<h1>`
)
