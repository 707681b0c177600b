package booking

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"net/http"
)

// IdempotencyHeader names the client's idempotency key.
const IdempotencyHeader = "Idempotency-Key"

// idempotent runs a POST at most once per (scope, key): see idempotency.go for
// the rules. Responses below 500 are saved and replayed; a 5xx means nothing
// was changed (every store operation is one transaction), so the claim is
// dropped and the client may retry with the same key.
func (a *API) idempotent(w http.ResponseWriter, r *http.Request, scope string, body []byte, run func(w http.ResponseWriter) error) error {
	key := r.Header.Get(IdempotencyHeader)
	if key == "" {
		return run(w)
	}
	if len(key) > MaxIdempotencyKeyLength {
		return Errorf(KindInvalid, CodeInvalidRequest, "%s must be at most %d characters", IdempotencyHeader, MaxIdempotencyKeyLength)
	}
	sum := sha256.New()
	sum.Write([]byte(r.Method + " " + r.URL.Path + "\n"))
	sum.Write(body)
	k := IdempotencyKey{Scope: scope, Key: key, Fingerprint: hex.EncodeToString(sum.Sum(nil))}
	ctx := r.Context()
	res, err := a.svc.cfg.Store.BeginIdempotent(ctx, k, a.svc.cfg.Clock.Now())
	if err != nil {
		return err
	}
	switch res.State {
	case IdempotencyReplay:
		for name, values := range res.Response.Header {
			w.Header()[name] = values
		}
		w.Header().Set("Idempotent-Replayed", "true")
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(res.Response.Status)
		_, _ = w.Write(res.Response.Body)
		return nil
	case IdempotencyMismatch:
		return Errorf(KindUnprocessable, CodeIdempotencyReuse, "this %s was used with other parameters", IdempotencyHeader)
	case IdempotencyInFlight:
		return Errorf(KindConflict, CodeIdempotencyBusy, "a request with this %s is still being processed", IdempotencyHeader)
	}
	rec := &recorder{ResponseWriter: w, status: http.StatusOK}
	completed := false
	defer func() {
		if !completed {
			// A panic or a 5xx: forget the claim so a retry can run.
			_ = a.svc.cfg.Store.AbandonIdempotent(ctxWithoutCancel(r), k)
		}
	}()
	if err := run(rec); err != nil {
		// Answered through rec: a refusal below 500 is saved and replayed
		// like any other answer.
		writeError(rec, a.log, err)
	}
	if rec.status >= 500 {
		return nil
	}
	saved := SavedResponse{Status: rec.status, Body: rec.body.Bytes(), Header: replayedHeaderOf(rec.header)}
	if err := a.svc.cfg.Store.CompleteIdempotent(ctxWithoutCancel(r), k, saved); err != nil {
		a.log.Warn("saving idempotent response", "error", err)
		return nil
	}
	completed = true
	return nil
}

// recorder passes a response through while keeping a copy for replay: its
// status, body, and the headers as they were when the status was written.
type recorder struct {
	http.ResponseWriter
	status int
	header http.Header
	body   bytes.Buffer
}

func (r *recorder) WriteHeader(code int) {
	if r.header == nil {
		r.status = code
		r.header = r.ResponseWriter.Header().Clone()
	}
	r.ResponseWriter.WriteHeader(code)
}

func (r *recorder) Write(b []byte) (int, error) {
	if r.header == nil {
		r.WriteHeader(http.StatusOK)
	}
	r.body.Write(b)
	return r.ResponseWriter.Write(b)
}
