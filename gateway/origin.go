package gateway

import (
	"context"
	"errors"
	"io"
	"net/http"
	"strings"
	"time"

	"github.com/caddyserver/caddy/v2/modules/caddyhttp"
	"go.uber.org/zap"

	"github.com/foyer-dev/foyer/waitingroom"
)

// Commands an origin may give in X-Waiting-Room-Command.
const (
	// commandRevoke: this visitor is done (checked out, logged out); free their
	// slot now rather than when the session would end.
	commandRevoke = "revoke"
	// commandSoldOut: nothing is left to sell; show everyone waiting, and every
	// newcomer, the sold-out page.
	commandSoldOut = "sold-out"
	// commandRetry: this visitor's session failed through no fault of theirs;
	// put them back at the front with their place (requeue.go).
	commandRetry = "retry"
)

// commandWriter watches the origin's response headers for a command, acts on it
// and strips it before the response leaves.
type commandWriter struct {
	caddyhttp.ResponseWriterWrapper // by value: one allocation per request, not two
	h                               *Handler
	r                               *http.Request
	pass                            waitingroom.Pass
	written                         bool
	// requeued is set once the fan was put back at the front instead of
	// being given the origin's answer: the answer is dropped, and the
	// requeued page was written in its place.
	requeued bool
}

// WriteHeader implements http.ResponseWriter.
func (cw *commandWriter) WriteHeader(code int) {
	// Informational responses (100 Continue, 103 Early Hints) come before the
	// real one; wait for it, except 101, which is the last the client sees.
	if !cw.written && (code >= 200 || code == http.StatusSwitchingProtocols) {
		cw.written = true
		if cw.act(code) {
			return
		}
	}
	if cw.requeued {
		return
	}
	cw.ResponseWriterWrapper.WriteHeader(code)
}

// Write implements http.ResponseWriter.
func (cw *commandWriter) Write(b []byte) (int, error) {
	if !cw.written {
		cw.WriteHeader(http.StatusOK)
	}
	if cw.requeued {
		return len(b), nil
	}
	return cw.ResponseWriterWrapper.Write(b)
}

// ReadFrom keeps io.Copy from writing the header behind our back.
func (cw *commandWriter) ReadFrom(r io.Reader) (int64, error) {
	if !cw.written {
		cw.WriteHeader(http.StatusOK)
	}
	if cw.requeued {
		return io.Copy(io.Discard, r)
	}
	return cw.ResponseWriterWrapper.ReadFrom(r)
}

// act carries out the origin's commands in a response of status code, and
// reports whether the fan was requeued: then the requeued page was written
// in the origin's answer's place.
func (cw *commandWriter) act(code int) bool {
	hdr := cw.Header()
	cmds := hdr.Values(headerCommand)
	cw.h.noteSupply(hdr)
	stripWaitingRoomHeaders(hdr)
	retry := false
	for _, c := range cmds {
		for _, cmd := range strings.Split(c, ",") {
			cmd = strings.ToLower(strings.TrimSpace(cmd))
			if cmd == commandRetry {
				retry = true
				continue
			}
			cw.run(cmd)
		}
	}
	if retry || (code >= 500 && cw.h.requeuesOnError()) {
		return cw.requeue(retry, code)
	}
	return false
}

func (cw *commandWriter) run(cmd string) {
	h := cw.h
	// The visitor's request may be cancelled while we act on the origin's word;
	// the command must still be carried out.
	ctx, cancel := context.WithTimeout(context.WithoutCancel(cw.r.Context()), commandTimeout)
	defer cancel()
	var err error
	switch cmd {
	case "":
		return
	case commandRevoke:
		err = h.room.Revoke(ctx, cw.pass)
		h.observeRevoke(cw.pass)
		h.clearPass(cw, cw.r)
	case commandSoldOut:
		err = h.room.DeclareSoldOut(ctx)
	default:
		h.logger.Warn("unknown command from origin", zap.String("room", h.Room), zap.String("command", cmd))
		return
	}
	if errors.Is(err, waitingroom.ErrRevocationDeferred) {
		// Not lost: refused here already, and written when the store answers.
		h.logger.Warn("revocation kept on this node until the store records it", zap.String("room", h.Room), zap.Error(err))
		return
	}
	if err != nil {
		h.logger.Error("carrying out origin command", zap.String("room", h.Room), zap.String("command", cmd), zap.Error(err))
	}
}

const commandTimeout = 5 * time.Second
