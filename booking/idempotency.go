package booking

import (
	"net/http"
	"time"
)

// Idempotency follows Stripe's rules: a key names one request of one caller;
// a second request with the same key and the same parameters replays the first
// response; the same key with other parameters is refused (422); a key whose
// first request is still running is refused (409) so that a client retrying
// too fast never runs the operation twice.
const (
	// MaxIdempotencyKeyLength is Stripe's limit.
	MaxIdempotencyKeyLength = 255
	// IdempotencyKeyTTL is how long a saved response is replayed, as at
	// Stripe. Records older than this are pruned (see PruneIdempotency), so
	// the store holds at most a day of keys.
	IdempotencyKeyTTL = 24 * time.Hour
	// IdempotencyClaimTimeout is how long a claim may stay unfinished before a
	// retry may take it over: a process that died mid-request must not lock
	// the key forever.
	IdempotencyClaimTimeout = time.Minute
)

// IdempotencyKey identifies one request: the caller (Scope, e.g. the
// customer), the client's Key, and a Fingerprint of method, path and body.
type IdempotencyKey struct {
	Scope       string
	Key         string
	Fingerprint string
}

// IdempotencyState is what BeginIdempotent found.
type IdempotencyState int

// Idempotency states.
const (
	// IdempotencyNew: the key is claimed for this request; run it, then
	// CompleteIdempotent or AbandonIdempotent.
	IdempotencyNew IdempotencyState = iota + 1
	// IdempotencyReplay: the request already ran; send Response again.
	IdempotencyReplay
	// IdempotencyInFlight: the first request with the key is still running.
	IdempotencyInFlight
	// IdempotencyMismatch: the key was used with other parameters.
	IdempotencyMismatch
)

// IdempotencyResult is the outcome of claiming a key.
type IdempotencyResult struct {
	State    IdempotencyState
	Response SavedResponse
}

// SavedResponse is a response kept for replay.
type SavedResponse struct {
	Status int
	Body   []byte
	// Header holds the replayed headers (ReplayedHeaders) the first
	// response had; nil when it had none.
	Header http.Header
}

// ReplayedHeaders are the response headers a replay repeats: those that
// carry meaning for the client (where the new resource is) or the gateway
// (a command it must act on). Others (Date, Content-Length) are made afresh.
var ReplayedHeaders = []string{"Location", "Cache-Control", CommandHeader}

// replayedHeaderOf keeps the ReplayedHeaders of h, or nil if it has none.
func replayedHeaderOf(h http.Header) http.Header {
	var out http.Header
	for _, name := range ReplayedHeaders {
		if v := h.Values(name); len(v) > 0 {
			if out == nil {
				out = http.Header{}
			}
			out[http.CanonicalHeaderKey(name)] = append([]string(nil), v...)
		}
	}
	return out
}

// InvariantReport is the invariant checker's finding. Violations is empty when
// every invariant holds.
type InvariantReport struct {
	Events     int      `json:"events"`
	Seats      int      `json:"seats"`
	Tickets    int      `json:"tickets"` // live ones: not cancelled by a refund
	Violations []string `json:"violations"`
}

// OK reports whether every invariant holds.
func (r InvariantReport) OK() bool { return len(r.Violations) == 0 }
