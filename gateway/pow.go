package gateway

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"strconv"

	"github.com/foyer-dev/foyer/static"
	"github.com/foyer-dev/foyer/waitingroom"
)

// maxAnswerBody bounds a join body: a seed of about 50 characters and a nonce
// of at most 32 digits, in JSON, fit in a tenth of it.
const maxAnswerBody = 1 << 10

// answer is the body of POST join.
type answer struct {
	Seed  string `json:"seed"`
	Nonce string `json:"nonce"`
}

// answerRefusals maps each refused answer to its status and error code, the
// contract docs/endpoints.md states ("Answering the proof of work").
var answerRefusals = []struct {
	err  error
	code int
	name string
}{
	{waitingroom.ErrAnswerMalformed, http.StatusBadRequest, "malformed_answer"},
	{waitingroom.ErrSeedInvalid, http.StatusForbidden, "seed_invalid"},
	{waitingroom.ErrSeedExpired, http.StatusGone, "seed_expired"},
	{waitingroom.ErrSeedOutdated, http.StatusGone, "seed_outdated"},
	{waitingroom.ErrSeedSpent, http.StatusConflict, "seed_spent"},
	{waitingroom.ErrWrongNonce, http.StatusUnprocessableEntity, "wrong_nonce"},
}

// serveJoin takes a newcomer's answer to a proof-of-work seed: a right one
// joins them (the ticket cookie, and the pass if they go straight in) and
// answers their status; anything else is a 4xx JSON error and makes no place.
// A visitor who holds a good ticket or pass already is told their status as a
// poll would: the room's table says an answer sent with a ticket makes no
// second place (docs/ARCHITECTURE.md, "The admission state machine").
//
// The waiting page's own answer (join?page) is told a refusal with 200 and
// the error in the body, Retry-After kept, as its polls are (status?page):
// the browser's console logs every 4xx and 5xx a page fetches.
func (h *Handler) serveJoin(w http.ResponseWriter, r *http.Request) error {
	if r.URL.RawQuery == "page" {
		w = pageAnswer{w}
	}
	if r.Method != http.MethodPost {
		w.Header().Set("Allow", "POST")
		return writeError(w, http.StatusMethodNotAllowed, "method_not_allowed", "join takes POST with a JSON body {\"seed\": ..., \"nonce\": ...}.")
	}
	body, err := io.ReadAll(http.MaxBytesReader(w, r.Body, maxAnswerBody))
	if _, tooBig := errors.AsType[*http.MaxBytesError](err); tooBig {
		return writeError(w, http.StatusRequestEntityTooLarge, "body_too_large", "The body of join is at most "+strconv.Itoa(maxAnswerBody)+" bytes.")
	}
	if err != nil {
		return writeError(w, http.StatusBadRequest, "malformed_answer", "The body could not be read.")
	}
	var a answer
	dec := json.NewDecoder(bytes.NewReader(body))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&a); err != nil || dec.More() {
		if ticket, pass := h.ourCookies(r); ticket == "" && pass == "" {
			return writeError(w, http.StatusBadRequest, "malformed_answer", `The body must be a JSON object {"seed": "<the seed given>", "nonce": "<decimal digits>"}.`)
		}
		// A visitor with cookies may be one who holds a place: the room
		// answers them as a poll, and refuses the empty answer otherwise.
		a = answer{}
	}
	r.Header.Set("Accept", "application/json")
	adm, err := h.admit(w, r, waitingroom.RequestJoin, waitingroom.Answer{Seed: a.Seed, Nonce: a.Nonce})
	if err != nil {
		return h.refuseAnswer(w, r, err)
	}
	return h.writeStatus(w, adm.status)
}

// pageAnswer is the waiting page's answer's writer: a refusal's status is
// written as 200, its body and headers as they are.
type pageAnswer struct{ http.ResponseWriter }

func (p pageAnswer) WriteHeader(code int) {
	if code >= http.StatusBadRequest {
		code = http.StatusOK
	}
	p.ResponseWriter.WriteHeader(code)
}

// refuseAnswer answers a refused join with its 4xx, or a failed join as any
// newcomer's (503 while the store is away).
func (h *Handler) refuseAnswer(w http.ResponseWriter, r *http.Request, err error) error {
	for _, ref := range answerRefusals {
		if errors.Is(err, ref.err) {
			return writeError(w, ref.code, ref.name, err.Error())
		}
	}
	if errors.Is(err, waitingroom.ErrChallengeBusy) {
		w.Header().Set("Retry-After", strconv.Itoa(retryAfterUnavailable))
		return writeError(w, http.StatusServiceUnavailable, "busy", err.Error())
	}
	r.Header.Set("Accept", "application/json")
	return h.refuse(w, r, err) // over join_limit: 429; store away: 503
}

// serveWorker answers the waiting page's proof-of-work solver, a script that
// runs in a Web Worker and so must be a file of its own.
func (h *Handler) serveWorker(w http.ResponseWriter) error {
	hdr := w.Header()
	hdr.Set("Content-Type", "text/javascript; charset=utf-8")
	hdr.Set("Cache-Control", "public, max-age=3600")
	hdr.Set("Content-Length", strconv.Itoa(len(static.PoWWorker)))
	w.WriteHeader(http.StatusOK)
	_, err := w.Write(static.PoWWorker)
	return err
}
