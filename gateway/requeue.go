package gateway

import (
	"context"
	"errors"
	"net/http"
	"strconv"

	"github.com/caddyserver/caddy/v2/modules/caddyhttp"
	"go.uber.org/zap"

	"github.com/foyer-dev/foyer/waitingroom"
)

// Requeue (docs/PROTOCOL.md, "Requeue"): when the origin fails an admitted
// fan's request through no fault of theirs (it answers
// `X-Waiting-Room-Command: retry`, or, under requeue_on_origin_error, a 5xx
// or nothing in time), the room puts the fan back at the front with their
// place, and the gateway answers with the requeued page instead of the
// origin's answer: 503 with Retry-After, the page (or, to a client asking
// for JSON, the status) saying the site had a problem and they keep their
// turn. The page polls, and the fan goes in first when a slot is theirs.

// requeuesOnError reports whether the origin's 5xx answers and upstream
// failures requeue the fan (requeue_on_origin_error above 0).
func (h *Handler) requeuesOnError() bool {
	return h.room.Settings().RequeueOnOriginError > 0
}

// requeue asks the room to requeue the fan whose request this is, for the
// origin's retry command or, without one, its answer of status code (0: no
// answer came), and reports whether it did: then the requeued page has been
// written. Otherwise (the ticket's requeues are spent, or the store is
// away) the origin's answer goes through as it is.
func (cw *commandWriter) requeue(retry bool, code int) bool {
	h := cw.h
	ctx, cancel := context.WithTimeout(context.WithoutCancel(cw.r.Context()), commandTimeout)
	defer cancel()
	tr, err := h.room.Requeue(ctx, cw.pass)
	cause := "retry"
	if !retry {
		cause = "origin_error"
	}
	if err != nil {
		h.logger.Warn("could not requeue the fan: the origin's answer goes through", zap.String("room", h.Room), zap.String("cause", cause), zap.Error(err))
		return false
	}
	if tr.Action != waitingroom.ActionRequeue {
		return false // counted: requeues_refused_total
	}
	h.logger.Info("fan requeued: the origin failed their session", zap.String("room", h.Room), zap.String("cause", cause), zap.Int("status", code))
	// The origin's answer is dropped whole, its headers too: the fan gets
	// the room's page instead.
	hdr := cw.Header()
	for k := range hdr {
		delete(hdr, k)
	}
	cw.requeued = true
	w := cw.ResponseWriterWrapper.ResponseWriter
	h.clearPass(w, cw.r)
	if err := h.writeRequeued(w, cw.r); err != nil {
		h.logger.Debug("writing the requeued page", zap.String("room", h.Room), zap.Error(err))
	}
	return true
}

// writeRequeued answers a fan just requeued: 503 with Retry-After, and the
// waiting page (or the status as JSON) saying why.
func (h *Handler) writeRequeued(w http.ResponseWriter, r *http.Request) error {
	st := h.room.RequeuedStatus()
	w.Header().Set("Retry-After", strconv.Itoa(st.RefreshSeconds))
	if wantsJSON(r) {
		return writeBody(w, http.StatusServiceUnavailable, append(st.AppendJSON(nil), '\n'))
	}
	return h.renderPage(w, http.StatusServiceUnavailable, h.pageFor(w, r, st, false))
}

// upstreamFailed handles an error the origin's handler returned with nothing
// written (reverse_proxy's 502 when the upstream cannot be reached, 504 when
// it does not answer in time): under requeue_on_origin_error the fan is
// requeued and the error answered; otherwise it goes on to Caddy.
func (cw *commandWriter) upstreamFailed(err error) error {
	if cw.written || !cw.h.requeuesOnError() {
		return err
	}
	code := http.StatusInternalServerError
	var he caddyhttp.HandlerError
	if errors.As(err, &he) && he.StatusCode != 0 {
		code = he.StatusCode
	}
	if code < 500 {
		return err
	}
	cw.written = true
	if cw.requeue(false, code) {
		return nil
	}
	cw.written = false
	return err
}
