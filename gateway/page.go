package gateway

import (
	"bytes"
	"fmt"
	"html/template"
	"net/http"
	"os"
	"strconv"
	"strings"
	"time"

	"github.com/foyer-dev/foyer/static"
	"github.com/foyer-dev/foyer/waitingroom"
)

// pageData is what the waiting page template is given. Operators writing their
// own page (the page setting) get the same fields.
type pageData struct {
	Status   waitingroom.Status
	Title    string
	Headline string
	// Lead is a sentence or two for the fan; times in it are <time> elements
	// that the page's script rewrites in the fan's own time zone.
	Lead template.HTML
	// Notice is said above the lead, when there is something to warn of
	// (the store is away).
	Notice    string
	StatusURL string
	WSURL     string
	DrawURL   string
	// JoinURL and WorkerURL are where a newcomer in the challenge state
	// sends their answer, and the script that finds it.
	JoinURL   string
	WorkerURL string
	// Refresh is the no-JavaScript reload interval, and the first poll's delay.
	Refresh       int
	Position      string
	PositionLabel string
	ETA           string
	Progress      int
	DrawIndex     string
	ShowFigures   bool
	ShowProgress  bool
	Determinate   bool
	KeepOpen      bool
	// Variant names the wording (see pagetext.go); the page's script
	// reloads when a live update brings another.
	Variant string
	// Once is a notice said with this answer only (a turn that passed).
	Once string
}

func loadPage(path string) (*template.Template, error) {
	if path == "" {
		return template.ParseFS(static.Waiting, static.WaitingPage)
	}
	src, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("page: %w", err)
	}
	t, err := template.New("page").Parse(string(src))
	if err != nil {
		return nil, fmt.Errorf("page %s: %w", path, err)
	}
	return t, nil
}

// newPageData words a status for people, from the table in pagetext.go.
func newPageData(st waitingroom.Status, prefix string, unavailable bool) pageData {
	view, text := pageViewOf(st, unavailable)
	d := pageData{
		Status:        st,
		Title:         st.Title,
		Headline:      view.Headline,
		Lead:          lead(leadOf(text, st)...),
		DrawURL:       prefix + "/draw",
		Refresh:       st.RefreshSeconds,
		Position:      view.Position,
		PositionLabel: text.PositionLabel,
		ETA:           view.ETA,
		Progress:      view.Progress,
		ShowFigures:   text.Figures,
		ShowProgress:  text.Progress,
		Determinate:   text.Determinate,
		KeepOpen:      text.KeepOpen,
		Variant:       view.Variant,
		Once:          view.Once,
		JoinURL:       prefix + "/join",
		WorkerURL:     prefix + "/pow-worker.js",
	}
	if d.Title == "" {
		d.Title = "Waiting room"
	}
	if st.DrawIndex != nil {
		d.DrawIndex = formatCount(*st.DrawIndex)
	}
	if st.Reconnecting && !unavailable {
		d.Notice = reconnectingNotice
	}
	switch {
	case unavailable:
		d.Refresh = retryAfterUnavailable
	case view.Variant == variantChallenge:
		d.Refresh = 0 // the page's script answers; a reload would only bring a new puzzle
	case view.Variant == variantAdmitted:
		d.Refresh = 1
	case text.Live:
		d.StatusURL, d.WSURL = prefix+"/status", prefix+"/ws"
	default:
		// No place to follow (a sold-out room may reopen: the page asks
		// now and then), or a returner's, which only a claim, made by a
		// poll, can move: the page polls, over no live connection.
		d.StatusURL = prefix + "/status"
	}
	return d
}

// retryAfterUnavailable is the Retry-After given to a visitor who could not join
// because the store did not answer.
const retryAfterUnavailable = 10

func (h *Handler) renderPage(w http.ResponseWriter, code int, d pageData) error {
	var buf bytes.Buffer
	if err := h.page.Execute(&buf, d); err != nil {
		return err
	}
	hdr := w.Header()
	hdr.Set("Content-Type", "text/html; charset=utf-8")
	hdr.Set("Cache-Control", "no-store")
	hdr.Set("Content-Length", strconv.Itoa(buf.Len()))
	w.WriteHeader(code)
	_, err := w.Write(buf.Bytes())
	return err
}

// formatCount writes 1234567 as "1,234,567".
func formatCount(n uint64) string {
	s := strconv.FormatUint(n, 10)
	var b []byte
	for i := range len(s) {
		if i > 0 && (len(s)-i)%3 == 0 {
			b = append(b, ',')
		}
		b = append(b, s[i])
	}
	return string(b)
}

// formatWhen writes a time as a <time> element, in UTC until the page's script
// puts it in the fan's own time zone.
func formatWhen(t *time.Time) template.HTML {
	if t == nil {
		return "the start"
	}
	return template.HTML(`<time datetime="` + t.UTC().Format(time.RFC3339) + `">` +
		template.HTMLEscapeString(t.UTC().Format("15:04 MST on Mon 2 Jan")) + `</time>`)
}

// lead joins text (escaped) and markup made here (kept) into the page's lead.
func lead(parts ...any) template.HTML {
	var b strings.Builder
	for _, p := range parts {
		switch p := p.(type) {
		case template.HTML:
			b.WriteString(string(p))
		case string:
			b.WriteString(template.HTMLEscapeString(p))
		}
	}
	return template.HTML(b.String())
}
