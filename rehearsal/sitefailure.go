package rehearsal

import (
	"encoding/json"
	"strconv"
	"time"
)

// siteFailedCheckout handles a checkout answered 503: the booking service
// failed it on its side (its provider's rehearsal fault), or the service was
// away. Requeued by the gateway (the room's status, "requeued": true, the
// pass cleared), the fan goes back to the line as its page would, keeping
// its hold to check out when let in again; otherwise it tries again a few
// times, a second apart, and gives up (docs/rehearsal.md, "An origin that
// fails 2% of checkouts").
func (r *rehearsal) siteFailedCheckout(f *fan, res result) (time.Duration, bool) {
	if f.failStart < 0 {
		f.failStart, f.failEnd = res.start, res.end
	}
	if res.passCleared && isRequeued(res.body) {
		f.requeued, f.retries = true, 0
		r.live.shopping.Add(-1)
		r.live.waiting.Add(1)
		f.step = stepPoll
		wait := time.Second
		if s, err := strconv.Atoi(res.retryAfter); err == nil && s > 0 {
			wait = time.Duration(min(s, 30)) * time.Second
		}
		return res.end + wait, false
	}
	next, done := r.retry(f, res, "checkout")
	if done {
		r.live.shopping.Add(-1)
		f.shop = nil
		if f.outcome == outError {
			f.outcome = outSiteFailed
		}
	}
	return next, done
}

// isRequeued reports whether body is the room's status of a fan just
// requeued (docs/PROTOCOL.md, "Requeue").
func isRequeued(body []byte) bool {
	var st struct {
		Requeued bool `json:"requeued"`
	}
	return json.Unmarshal(body, &st) == nil && st.Requeued
}
