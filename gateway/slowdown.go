package gateway

import (
	"errors"
	"math"
	"net/http"
	"net/netip"
	"strconv"

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
	return h.unavailable(w, r, err)
}

// slowDown answers 429 with Retry-After to a newcomer over the join limit:
// JSON for apps, a plain page for browsers. It sets no cookie: nothing of
// the visit is kept, so a client that ignores it gains nothing by coming
// back at once. The body is written by hand, as cheaply as Caddy's own
// respond, since an abusive client may send nothing else.
func (h *Handler) slowDown(w http.ResponseWriter, r *http.Request, wait float64) error {
	secs := int64(max(1, math.Ceil(wait)))
	n := strconv.FormatInt(secs, 10)
	hdr := w.Header()
	hdr["Retry-After"] = []string{n}
	if wantsJSON(r) {
		body := make([]byte, 0, 192)
		body = append(body, `{"error":"join_limited","message":"Too many new places from your network; try again in `...)
		body = append(body, n...)
		body = append(body, ` seconds.","retry_after":`...)
		body = append(body, n...)
		body = append(body, "}\n"...)
		return writeBody(w, http.StatusTooManyRequests, body)
	}
	body := make([]byte, 0, len(slowDownHead)+len(slowDownMid)+len(slowDownTail)+2*len(n))
	body = append(body, slowDownHead...)
	body = append(body, n...)
	body = append(body, slowDownMid...)
	body = append(body, n...)
	body = append(body, slowDownTail...)
	hdr["Content-Type"] = []string{"text/html; charset=utf-8"}
	hdr["Cache-Control"] = []string{"no-store"}
	hdr["Content-Length"] = []string{strconv.Itoa(len(body))}
	w.WriteHeader(http.StatusTooManyRequests)
	_, err := w.Write(body)
	return err
}

// The slow-down page, around the seconds to wait (twice). It reloads itself
// once they have passed.
const (
	slowDownHead = `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta name="robots" content="noindex">
<meta http-equiv="refresh" content="`
	slowDownMid = `">
<title>Slow down</title>
<style>body{font:1.1rem/1.5 system-ui,sans-serif;max-width:34rem;margin:15vh auto;padding:0 1rem;color:#222}</style>
</head>
<body>
<h1>Slow down</h1>
<p>Too many visitors have joined the line from your network in a short time.
This page will try again by itself in `
	slowDownTail = ` seconds; there is no need to reload it.</p>
</body>
</html>
`
)
