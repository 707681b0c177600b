package gateway

import (
	"net/http"
	"strings"

	"github.com/foyer-dev/foyer/waitingroom"
)

// serveEndpoint answers the room's own endpoints under the path prefix. They
// never reach the origin, so a client's X-Waiting-Room-* headers are left
// alone here: nothing of ours reads them, and nothing after us sees them.
// (Every request that goes on is stripped where it goes: forward, and the
// login page; walking the header map costs a poll about 1% of the gateway's
// CPU.)
func (h *Handler) serveEndpoint(w http.ResponseWriter, r *http.Request, name string) error {
	if name == "join" {
		return h.serveJoin(w, r)
	}
	if name == "leave" {
		return h.serveLeave(w, r)
	}
	if name == "code" {
		return h.serveCode(w, r)
	}
	if r.Method != http.MethodGet && r.Method != http.MethodHead {
		w.Header().Set("Allow", "GET, HEAD")
		return writeError(w, http.StatusMethodNotAllowed, "method_not_allowed", "The waiting room's endpoints answer GET only.")
	}
	switch name {
	case "status":
		return h.serveStatus(w, r)
	case "ws":
		return h.serveWS(w, r)
	case "jwks.json":
		w.Header().Set("Access-Control-Allow-Origin", "*")
		w.Header().Set("Cache-Control", "public, max-age=300")
		return writeJSON(w, http.StatusOK, h.room.JWKS())
	case "pow-worker.js":
		return h.serveWorker(w)
	case "draw":
		w.Header().Set("Access-Control-Allow-Origin", "*")
		return writeJSON(w, http.StatusOK, h.room.DrawInfo())
	case "fairness":
		return h.serveFairness(w, r)
	}
	return writeError(w, http.StatusNotFound, "not_found", "No such waiting room endpoint.")
}

// serveStatus answers "where am I?" as JSON. A visitor with a valid pass is told
// they are in; one with a ticket gets their place (and their pass, when their
// turn has come); anyone else joins the line.
func (h *Handler) serveStatus(w http.ResponseWriter, r *http.Request) error {
	a, err := h.admit(w, r, waitingroom.RequestStatus, waitingroom.Answer{})
	if err != nil {
		r.Header.Set("Accept", "application/json")
		return h.refuse(w, r, err)
	}
	if q := r.URL.RawQuery; q == "page" || strings.HasPrefix(q, "page=") {
		return h.writePageStatus(w, a.status, strings.TrimPrefix(q[4:], "="))
	}
	return h.writeStatus(w, a.status)
}
