package rehearsal

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"io"
	"net/http"
	"strings"
	"time"

	"github.com/foyer-dev/foyer/internal/loadgen"
	"github.com/foyer-dev/foyer/internal/servertiming"
)

// Cookie names of the room the rehearsal configures (the default prefix).
const (
	ticketCookie = "foyer_ticket"
	passCookie   = "foyer_pass"
)

// maxBody bounds what a fan reads of a response; a seat map of the largest
// venue the booking service accepts is well under it.
const maxBody = 8 << 20

// result is one request as a fan saw it.
type result struct {
	status      int
	body        []byte
	retryAfter  string
	start, end  time.Duration // offsets from the start of the rehearsal
	passSet     bool          // the response handed the fan a pass
	passCleared bool          // the response took the fan's pass away
	err         error
	cut         bool // the rehearsal was stopping
}

// do sends one request for fan f on the worker's own connection, with the fan's
// own cookies, records its latency under kind, and keeps the cookies the
// answer sets. ok is false when no answer came.
func (r *rehearsal) do(ctx context.Context, w *worker, f *fan, kind reqKind, method, target string, body io.Reader) (res result, ok bool) {
	req, err := http.NewRequestWithContext(ctx, method, target, body)
	if err != nil {
		res.err = err
		return res, false
	}
	req.Header.Set("Accept", "application/json")
	if method == http.MethodPost {
		if kind == kindPay {
			req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
		} else {
			// As the storefront does: a retried POST can never hold or
			// check out twice.
			req.Header.Set("Content-Type", "application/json")
			req.Header.Set("Idempotency-Key", idempotencyKey())
		}
	}
	if c := cookieHeader(f.ticket, f.pass); c != "" {
		req.Header.Set("Cookie", c)
	}
	res.start = r.now()
	var resp *http.Response
	resp, res.body, err = w.conns.roundTrip(ctx, req)
	res.end = r.now()
	if err != nil {
		res.err = err
		res.cut = ctx.Err() != nil || errors.Is(err, context.Canceled)
		if !res.cut {
			w.failed[kind]++
		}
		return res, false
	}
	res.status = resp.StatusCode
	res.retryAfter = resp.Header.Get("Retry-After")
	w.reqs = append(w.reqs, reqSample{at: msOf(res.end), us: usOf(res.end - res.start), lag: usOf(res.start - w.due), kind: kind})
	w.recordServed(kind, res.end-res.start, resp.Header.Get(servertiming.HeaderName))
	w.byClass[kind][min(resp.StatusCode/100, 5)]++
	r.live.count(res.end)
	for _, line := range resp.Header["Set-Cookie"] {
		c, err := http.ParseSetCookie(line)
		if err != nil {
			continue
		}
		gone := c.MaxAge < 0 || c.Value == ""
		switch c.Name {
		case ticketCookie:
			f.ticket = c.Value
			if gone {
				f.ticket = ""
			}
		case passCookie:
			if gone {
				f.pass = ""
				res.passCleared = true
			} else {
				f.pass = c.Value
				res.passSet = true
			}
		}
	}
	return res, true
}

// cookieHeader is the Cookie line a browser would send: the fan's ticket
// and pass, whichever it holds.
func cookieHeader(ticket, pass string) string {
	var b strings.Builder
	if ticket != "" {
		b.WriteString(ticketCookie + "=" + ticket)
	}
	if pass != "" {
		if b.Len() > 0 {
			b.WriteString("; ")
		}
		b.WriteString(passCookie + "=" + pass)
	}
	return b.String()
}

func idempotencyKey() string {
	var b [16]byte
	_, _ = rand.Read(b[:])
	return hex.EncodeToString(b[:])
}

// newTransport is the keep-alive transport of the rehearsal's own calls
// (creating the event, reading counters and invariants), to loopback only;
// the fans' requests go on their workers' connections (workerConns).
func newTransport(workers int) *http.Transport {
	return &http.Transport{
		DialContext:         loadgen.LoopbackDialer,
		MaxIdleConns:        workers + 16,
		MaxIdleConnsPerHost: workers + 16,
		IdleConnTimeout:     90 * time.Second,
		DisableCompression:  true,
	}
}
