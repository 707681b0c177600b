package booking

import (
	"io"
	"net/http"
)

// DefaultDrainLimit is how much of an unread request body DrainBody reads
// and discards: more than any body the API accepts, and more than a proxy in
// front should let through (the demo Caddyfile caps bodies at the same size).
const DefaultDrainLimit = 10 << 20

// DrainBody reads and discards up to limit bytes of whatever the handler left
// unread of a request body, before the response goes out.
//
// A handler that refuses a body without reading it (413, 401) would
// otherwise leave bytes in the socket; the server then closes the
// connection, the kernel answers the unread bytes with a reset, and a
// reverse proxy still sending the body sees the reset instead of the answer
// and reports 502. Drained, the connection ends cleanly and the proxy reads
// the 413 or 401. Past limit the server closes the connection as before.
func DrainBody(next http.Handler, limit int64) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Body == nil || r.Body == http.NoBody {
			next.ServeHTTP(w, r)
			return
		}
		body := r.Body
		next.ServeHTTP(w, r)
		// A small response (every error is one) is still in the server's
		// buffer here: it goes out when this function returns, after the
		// body is read.
		_, _ = io.CopyN(io.Discard, body, limit)
	})
}
