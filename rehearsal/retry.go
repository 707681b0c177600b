package rehearsal

import (
	"encoding/json"
	"net/http"
	"strconv"
	"time"
)

// shopFailure handles what every shopping request may meet: the transport
// failing, the service unavailable, the pass refused.
func (r *rehearsal) shopFailure(f *fan, res result, ok bool, what string) (next time.Duration, done, handled bool) {
	if !ok || res.status == http.StatusServiceUnavailable {
		next, done = r.retry(f, res, what)
		if done {
			r.live.shopping.Add(-1)
			f.shop = nil
		}
		return next, done, true
	}
	f.retries = 0
	if res.status == http.StatusUnauthorized {
		return 0, r.endShop(f, outLostPass, ""), true
	}
	return 0, false, false
}

// retry tries a failed request again after a second (or the Retry-After
// the server gave), a few times.
func (r *rehearsal) retry(f *fan, res result, what string) (time.Duration, bool) {
	if what == "join" || what == "poll" {
		// A status the fan never read: the room may have told them an
		// outcome all the same (calibration.go).
		r.calib.unread.Add(1)
	}
	if res.cut {
		return 0, r.end(f, outCut, "")
	}
	f.retries++
	if f.retries > maxRetries {
		msg := what + ": " + strconv.Itoa(res.status)
		if res.err != nil {
			msg = what + ": " + res.err.Error()
		}
		return 0, r.end(f, outError, msg)
	}
	wait := time.Second
	if s, err := strconv.Atoi(res.retryAfter); err == nil && s > 0 {
		wait = time.Duration(min(s, 30)) * time.Second
	}
	return r.now() + wait, false
}

func (r *rehearsal) endShop(f *fan, o outcome, msg string) bool {
	r.live.shopping.Add(-1)
	f.shop = nil
	return r.end(f, o, msg)
}

// end closes a fan's visit.
func (r *rehearsal) end(f *fan, o outcome, msg string) bool {
	f.outcome = o
	if msg != "" {
		r.note(msg)
	}
	return true
}

// think is the time a fan takes between two shopping steps.
func (r *rehearsal) think(w *worker) time.Duration {
	return time.Duration((0.5 + w.rng.Float64()) * float64(r.cfg.Think))
}

// errCode reads the "error" member of a JSON error body.
func errCode(body []byte) string {
	var e struct {
		Error string `json:"error"`
	}
	_ = json.Unmarshal(body, &e)
	return e.Error
}
