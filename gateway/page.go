package gateway

import (
	"bytes"
	"fmt"
	"html/template"
	"math"
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
	Lead      template.HTML
	StatusURL string
	WSURL     string
	DrawURL   string
	// JoinURL and WorkerURL are where a newcomer in the challenge state
	// sends their answer, and the script that finds it.
	JoinURL   string
	WorkerURL string
	// Refresh is the no-JavaScript reload interval, and the first poll's delay.
	Refresh      int
	Position     string
	ETA          string
	Progress     int
	DrawIndex    string
	ShowFigures  bool
	ShowProgress bool
	Determinate  bool
	KeepOpen     bool
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

// newPageData words a status for people.
func newPageData(st waitingroom.Status, prefix string, unavailable bool) pageData {
	d := pageData{
		Status:    st,
		Title:     st.Title,
		StatusURL: prefix + "/status",
		WSURL:     prefix + "/ws",
		DrawURL:   prefix + "/draw",
		JoinURL:   prefix + "/join",
		WorkerURL: prefix + "/pow-worker.js",
		Refresh:   st.RefreshSeconds,
		Progress:  int(math.Round(st.Progress * 100)),
		ETA:       formatETA(st.ETASeconds),
	}
	if d.Title == "" {
		d.Title = "Waiting room"
	}
	if st.Position != nil {
		d.Position = formatCount(*st.Position)
	}
	if st.DrawIndex != nil {
		d.DrawIndex = formatCount(*st.DrawIndex)
	}
	switch {
	case unavailable:
		d.Headline = "We're very busy right now"
		d.Lead = lead("So many people are arriving that we could not give you a place in line just yet. This page will try again in a few seconds.")
		d.Refresh = retryAfterUnavailable
		d.StatusURL, d.WSURL = "", ""
	case st.State == waitingroom.StateQueued && st.AwaitingDraw:
		d.Headline = "You're in line"
		d.Lead = lead("Places are given by a fair random draw: when the group ahead is in, everyone waiting, you included, is drawn into the next one. Arriving a moment earlier or later makes no difference.")
		d.Position = "in the next draw"
		d.ShowFigures, d.ShowProgress, d.KeepOpen = true, true, true
	case st.State == waitingroom.StateQueued && st.Returned:
		d.Headline = "You're next"
		d.Lead = lead("Your turn came while you were away. You are at the front of the line, and go in as soon as a place frees.")
		d.ShowFigures, d.ShowProgress, d.Determinate, d.KeepOpen = true, true, true, true
	case st.State == waitingroom.StateQueued:
		d.Headline = "You're in line"
		if st.Position != nil && *st.Position == 0 {
			d.Headline = "You're next"
		}
		d.Lead = lead("Thanks for your patience. We let people in a few at a time so that the site stays fast for everyone.")
		if st.TurnPassed {
			d.Lead = lead("Your turn came while you were away and has passed, so you have a new place in line.")
		}
		d.ShowFigures, d.ShowProgress, d.Determinate, d.KeepOpen = true, true, true, true
	case st.State == waitingroom.StatePrequeue:
		d.Headline = "You're registered"
		d.ShowProgress, d.KeepOpen = true, true
		when := formatWhen(st.OpensAt)
		if st.Position == nil {
			d.Lead = lead("The sale starts at ", when, ". Everyone registered before then gets a place by a fair random draw, so there is no advantage in arriving early. Every tab of this browser shares your one place.")
			d.Position = "drawn at start"
		} else {
			d.Lead = lead("The sale starts at ", when, ". You keep your place in line until then.")
			d.ShowFigures = true
		}
	case st.State == waitingroom.StatePaused:
		d.Headline = "The line is paused"
		d.Lead = lead("The sale is paused for a moment. You keep your place, and the line moves again as soon as it resumes.")
		if st.Returned {
			d.Lead = lead("The sale is paused for a moment. Your turn came while you were away: you keep your place at the front, and go in first when it resumes.")
		}
		d.ShowFigures, d.ShowProgress, d.Determinate, d.KeepOpen = true, true, true, true
	case st.State == waitingroom.StateSoldOut:
		d.Headline = "Sold out"
		d.Lead = lead("Every ticket has been sold. Thank you for waiting with us.")
	case st.State == waitingroom.StateClosed && st.OpensAt != nil:
		d.Headline = "Not open yet"
		d.Lead = lead("The line opens at ", formatWhen(st.OpensAt), ". This page will let you in when it does.")
		d.KeepOpen = true
	case st.State == waitingroom.StateClosed:
		d.Headline = "This sale is closed"
		d.Lead = lead("The sale is not taking new visitors.")
	case st.State == waitingroom.StateChallenge:
		d.Headline = "One moment"
		d.Lead = lead("Before you join the line, your browser solves a small puzzle that keeps bots out. It takes a second or two, and then you have your place.")
		d.Refresh = 0 // the page's script answers; a reload would only bring a new puzzle
	case st.State == waitingroom.StateAdmitted:
		d.Headline = "It's your turn"
		d.Lead = lead("Taking you to the site…")
		d.Refresh = 1
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

func formatETA(sec *int64) string {
	switch {
	case sec == nil:
		return "—"
	case *sec < 60:
		return "under a minute"
	}
	minutes := int64(math.Round(float64(*sec) / 60))
	if minutes < 60 {
		if minutes == 1 {
			return "about 1 minute"
		}
		return fmt.Sprintf("about %d minutes", minutes)
	}
	h, m := minutes/60, minutes%60
	if m == 0 {
		return fmt.Sprintf("about %d h", h)
	}
	return fmt.Sprintf("about %d h %d min", h, m)
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
