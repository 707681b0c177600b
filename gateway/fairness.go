package gateway

import (
	"context"
	"errors"
	"html/template"
	"io"
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

var fairnessPage = template.Must(template.ParseFS(static.Fairness, static.FairnessPage))

// fairnessData is what the fairness page is given: the report, and the
// language it is worded in. Every word comes from the catalogs' fairness.*
// keys; numbers and times are written in the language's digits. The JSON
// report is the same in every language.
type fairnessData struct {
	waitingroom.FairnessReport
	Lang, Dir string
	Languages []langOption
	// History says whether the admissions cover every place reached, and
	// which.
	History template.HTML
	// NotPublished: the sale still runs; the page says when the report
	// comes, and nothing else.
	NotPublished bool
	loc          *locale
}

func newFairnessData(rep waitingroom.FairnessReport, l *locale, menu []langOption) fairnessData {
	d := fairnessData{FairnessReport: rep, Lang: l.Code, Dir: l.Dir, Languages: menu, loc: l}
	state, class := l.T("fairness.history.incomplete"), "warn"
	detail := l.T("fairness.history.lost")
	if rep.Complete {
		state, class = l.T("fairness.history.complete"), "ok"
		switch s := rep.Counts.Serving; s {
		case 0:
			detail = l.T("fairness.covers.none")
		case 1:
			detail = l.T("fairness.covers.one", "place", l.Uint(0))
		default:
			detail = l.T("fairness.covers.range", "first", l.Uint(0), "last", l.Uint(s-1))
		}
	}
	d.History = withMarkup(l.T("fairness.history.line"),
		"state", template.HTML(`<span class="`+class+`">`+template.HTMLEscapeString(state)+`</span>`),
		"detail", template.HTML(template.HTMLEscapeString(detail)))
	return d
}

// T is the text of a catalog key in the page's language, {{.T "key"}}; with
// a number, {{.T "key" .Count}}, the plural text about it.
func (d fairnessData) T(key string, n ...uint64) string {
	if len(n) == 0 {
		return d.loc.T(key)
	}
	return d.loc.Count(key, n[0])
}

// H is T for a text with markup made here in it: each {name} is replaced,
// unescaped, by the markup that follows its name; the rest is escaped.
func (d fairnessData) H(key string, pairs ...any) template.HTML {
	return withMarkup(d.loc.T(key), pairs...)
}

// Title is the page's title: the report's, and the room's name.
func (d fairnessData) Title() string { return d.loc.T("fairness.title", "room", d.Room) }

// Num writes a number in the page's language.
func (d fairnessData) Num(n uint64) string { return d.loc.Uint(n) }

// Range writes the places or order keys of an entry of the history.
func (d fairnessData) Range(e waitingroom.HistoryEntry) string {
	return d.loc.T("fairness.range", "first", d.loc.Uint(e.Start), "last", d.loc.Uint(e.Start+e.Count-1))
}

// PhaseKeys writes the order keys a phase's draw covered: their range,
// none when nobody registered, a dash while it is not drawn.
func (d fairnessData) PhaseKeys(p waitingroom.PhaseDraw) string {
	switch {
	case p.FirstKey == nil || p.DrawSize == nil:
		return "—"
	case *p.DrawSize == 0:
		return d.loc.Count("fairness.draw.keys", 0)
	}
	return d.Range(waitingroom.HistoryEntry{Start: *p.FirstKey, Count: *p.DrawSize})
}

// When writes a time of the history to the millisecond, in UTC, as a
// <time> element: ISO 8601's order, which needs no month names, in the
// language's digits.
func (d fairnessData) When(t time.Time) template.HTML {
	t = t.UTC()
	return template.HTML(`<time datetime="` + t.Format(time.RFC3339Nano) + `">` +
		template.HTMLEscapeString(d.loc.Digits(t.Format("2006-01-02 15:04:05.000"))+" UTC") + `</time>`)
}

// Pause tells of a pause of admission and how many were let in meanwhile.
func (d fairnessData) Pause(p waitingroom.PauseEffect) template.HTML {
	count := template.HTML(template.HTMLEscapeString(d.loc.Count("fairness.admissions.fans", p.LetIn)))
	if p.To == nil {
		return withMarkup(d.loc.T("fairness.pauses.open"), "from", d.When(p.From), "count", count)
	}
	return withMarkup(d.loc.T("fairness.pauses.closed"), "from", d.When(p.From), "to", d.When(*p.To), "count", count)
}

// Method names the queueing method in the page's language.
func (d fairnessData) Method() string {
	key := "fairness.method." + string(d.QueueingMethod)
	if !d.loc.Has(key) {
		return string(d.QueueingMethod)
	}
	return d.loc.T(key)
}

// withMarkup escapes text but for its {name}s, each replaced by the markup
// given after its name in pairs: a name, then template.HTML, or a string
// written in the page's template itself (never one from a catalog or a
// report).
func withMarkup(text string, pairs ...any) template.HTML {
	var b strings.Builder
	for text != "" {
		i := strings.IndexByte(text, '{')
		j := strings.IndexByte(text[max(i, 0):], '}')
		if i < 0 || j < 0 {
			break
		}
		name, markup := text[i+1:i+j], ""
		found := false
		for k := 0; k+1 < len(pairs); k += 2 {
			if pairs[k] != name {
				continue
			}
			switch m := pairs[k+1].(type) {
			case template.HTML:
				markup, found = string(m), true
			case string: // a literal of the page's template
				markup, found = m, true
			}
		}
		if !found {
			b.WriteString(template.HTMLEscapeString(text[:i+j+1]))
			text = text[i+j+1:]
			continue
		}
		b.WriteString(template.HTMLEscapeString(text[:i]))
		b.WriteString(markup)
		text = text[i+j+1:]
	}
	b.WriteString(template.HTMLEscapeString(text))
	return template.HTML(b.String())
}

// renderFairness writes the fairness page in a language.
func renderFairness(w io.Writer, rep waitingroom.FairnessReport, l *locale, menu []langOption) error {
	return fairnessPage.Execute(w, newFairnessData(rep, l, menu))
}

// serveFairness answers <path_prefix>/fairness: the room's fairness report,
// JSON for programs (the default) and a page for people who ask for HTML.
// Before the room has closed or sold out it answers 404 with the reason.
func (h *Handler) serveFairness(w http.ResponseWriter, r *http.Request) error {
	w.Header().Set("Access-Control-Allow-Origin", "*")
	w.Header().Set("Vary", "Accept")
	rep, err := h.handle.fairness.get(r.Context(), h.room, h.clockNow())
	switch {
	case errors.Is(err, waitingroom.ErrNotPublished):
		// A fan who follows a link to the report before the end reads why
		// there is none yet, in their language; a program reads the code.
		w.Header().Set("Vary", "Accept, Accept-Language, Cookie")
		w.Header().Set("Cache-Control", "private, max-age=5")
		l := h.langs.choose(w, r)
		if !wantsHTML(r) {
			w.Header().Set("Content-Language", l.Code)
			return writeError(w, http.StatusNotFound, "not_published", l.T("fairness.not_published"))
		}
		d := newFairnessData(waitingroom.FairnessReport{Room: h.room.ID()}, l, h.langs.menu(r.URL, l))
		d.NotPublished = true
		var b strings.Builder
		if err := fairnessPage.Execute(&b, d); err != nil {
			return err
		}
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		w.WriteHeader(http.StatusNotFound)
		_, err = w.Write([]byte(b.String()))
		return err
	case err != nil:
		w.Header().Set("Retry-After", "5")
		return writeError(w, http.StatusServiceUnavailable, "store_unavailable",
			"The room's history cannot be read right now; try again shortly.")
	}
	if !wantsHTML(r) {
		w.Header().Set("Cache-Control", "public, max-age=5")
		return writeJSON(w, http.StatusOK, rep)
	}
	// The page is in the fan's language, chosen as the waiting page's is
	// (?lang=, which sets a cookie, the cookie, the language setting,
	// Accept-Language): a shared cache must not hand one fan's to another.
	w.Header().Set("Vary", "Accept, Accept-Language, Cookie")
	w.Header().Set("Cache-Control", "private, max-age=5")
	l := h.langs.choose(w, r)
	var b strings.Builder
	if err := renderFairness(&b, rep, l, h.langs.menu(r.URL, l)); err != nil {
		return err
	}
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	w.WriteHeader(http.StatusOK)
	_, err = w.Write([]byte(b.String()))
	return err
}
