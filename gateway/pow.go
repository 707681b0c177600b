package gateway

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"net"
	"net/http"
	"strconv"

	"github.com/caddyserver/caddy/v2/modules/caddyhttp"

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
// contract the README states ("What fans, apps and origins see").
var answerRefusals = []struct {
	err  error
	code int
	name string
}{
	{waitingroom.ErrAnswerMalformed, http.StatusBadRequest, "malformed_answer"},
	{waitingroom.ErrSeedInvalid, http.StatusForbidden, "seed_invalid"},
	{waitingroom.ErrSeedExpired, http.StatusGone, "seed_expired"},
	{waitingroom.ErrSeedSpent, http.StatusConflict, "seed_spent"},
	{waitingroom.ErrWrongNonce, http.StatusUnprocessableEntity, "wrong_nonce"},
}

// serveJoin takes a newcomer's answer to a proof-of-work seed: a right one
// joins them (the ticket cookie, and the pass if they go straight in) and
// answers their status; anything else is a 4xx JSON error and makes no place.
// A visitor who holds a good ticket or pass already is simply told their
// status: the challenge is for newcomers only.
func (h *Handler) serveJoin(w http.ResponseWriter, r *http.Request) error {
	if r.Method != http.MethodPost {
		w.Header().Set("Allow", "POST")
		return writeError(w, http.StatusMethodNotAllowed, "method_not_allowed", "join takes POST with a JSON body {\"seed\": ..., \"nonce\": ...}.")
	}
	if done, err := h.joinedAlready(w, r); done {
		return err
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
		return writeError(w, http.StatusBadRequest, "malformed_answer", `The body must be a JSON object {"seed": "<the seed given>", "nonce": "<decimal digits>"}.`)
	}
	// The place an answer makes is the account's, as any join is.
	ctx, err := h.withAccount(r)
	if err != nil {
		r.Header.Set("Accept", "application/json")
		return h.unavailable(w, r, err)
	}
	vis, err := h.room.JoinWithAnswer(ctx, clientIP(r), a.Seed, a.Nonce)
	if err != nil {
		return h.refuseAnswer(w, r, err)
	}
	h.setTicket(w, r, vis)
	if vis.Pass != "" {
		h.setPass(w, r, vis.Pass, vis.Admission)
	}
	return h.writeStatus(w, vis.Status)
}

// joinedAlready answers, as a status poll does, a visitor who holds a good
// pass or a ticket with a place, and reports whether it did: joining again
// would make them a second place. A visitor whose ticket is spent is asked
// for the puzzle by that poll (nothing is written then), and answers as a
// newcomer does.
func (h *Handler) joinedAlready(w http.ResponseWriter, r *http.Request) (bool, error) {
	ticket, pass := h.ourCookies(r)
	_, passOK := h.validPass(pass)
	_, ticketErr := h.room.OpenTicket(ticket)
	if !passOK && (ticket == "" || ticketErr != nil) {
		return false, nil
	}
	a, err := h.admit(w, r)
	if err != nil {
		r.Header.Set("Accept", "application/json")
		return true, h.unavailable(w, r, err)
	}
	st := h.statusOf(a)
	if st.State == waitingroom.StateChallenge {
		return false, nil
	}
	return true, h.writeStatus(w, st)
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

// clientIP is the client's address as Caddy determined it, as text, so that
// trusted_proxies and their forwarding headers apply; a handler run outside
// a Caddy server (unit tests) falls back to the connection's peer.
func clientIP(r *http.Request) string {
	if ip, ok := caddyhttp.GetVar(r.Context(), caddyhttp.ClientIPVarKey).(string); ok && ip != "" {
		return ip
	}
	host, _, err := net.SplitHostPort(r.RemoteAddr)
	if err != nil {
		return r.RemoteAddr
	}
	return host
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
