package gateway

import (
	"context"
	"errors"
	"html/template"
	"net/http"
	"strings"
	"sync"
	"time"

	"github.com/foyer-dev/foyer/static"
	"github.com/foyer-dev/foyer/waitingroom"
)

// fairnessTTL is how long a node reuses a fairness report it built. The
// report is public and may be fetched by many once a sale is over; building
// it reads the store's history, so one node reads it at most this often.
const fairnessTTL = 5 * time.Second

// fairnessCache holds a room's latest report on this node. Requests that
// arrive while it is being built wait for that one build.
type fairnessCache struct {
	mu  sync.Mutex
	at  time.Time
	rep waitingroom.FairnessReport
	err error
}

func (c *fairnessCache) get(ctx context.Context, room *waitingroom.Room, now time.Time) (waitingroom.FairnessReport, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if !c.at.IsZero() && now.Sub(c.at) < fairnessTTL {
		return c.rep, c.err
	}
	ctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	c.rep, c.err = room.Fairness(ctx)
	c.at = now
	return c.rep, c.err
}

var fairnessPage = template.Must(template.New("fairness.html").Funcs(template.FuncMap{
	"last":        func(e waitingroom.HistoryEntry) uint64 { return e.Start + e.Count - 1 },
	"placesBelow": placesBelow,
	"when":        func(t time.Time) string { return t.UTC().Format("2006-01-02 15:04:05.000 MST") },
}).ParseFS(static.Fairness, static.FairnessPage))

// serveFairness answers <path_prefix>/fairness: the room's fairness report,
// JSON for programs (the default) and a page for people who ask for HTML.
// Before the room has closed or sold out it answers 404 with the reason.
func (h *Handler) serveFairness(w http.ResponseWriter, r *http.Request) error {
	w.Header().Set("Access-Control-Allow-Origin", "*")
	w.Header().Set("Vary", "Accept")
	rep, err := h.handle.fairness.get(r.Context(), h.room, now())
	switch {
	case errors.Is(err, waitingroom.ErrNotPublished):
		return writeError(w, http.StatusNotFound, "not_published",
			"The fairness report is published once the room has closed or sold out.")
	case err != nil:
		w.Header().Set("Retry-After", "5")
		return writeError(w, http.StatusServiceUnavailable, "store_unavailable",
			"The room's history cannot be read right now; try again shortly.")
	}
	w.Header().Set("Cache-Control", "public, max-age=5")
	if !wantsHTML(r) {
		return writeJSON(w, http.StatusOK, rep)
	}
	var b strings.Builder
	if err := fairnessPage.Execute(&b, rep); err != nil {
		return err
	}
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	w.WriteHeader(http.StatusOK)
	_, err = w.Write([]byte(b.String()))
	return err
}
