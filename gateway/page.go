package gateway

import (
	"bytes"
	"errors"
	"fmt"
	"html/template"
	"net/http"
	"os"
	"strconv"
	"strings"
	"text/template/parse"
	"time"

	"github.com/foyer-dev/foyer/internal/i18n"
	"github.com/foyer-dev/foyer/static"
	"github.com/foyer-dev/foyer/waitingroom"
)

// pageData is what the waiting page template is given. Operators writing their
// own page (the page setting) get the same fields, and T, which translates.
type pageData struct {
	Status waitingroom.Status
	// Lang is the page's language as a BCP 47 tag (lang="de"); Dir is
	// "ltr" or "rtl" (dir="rtl"). Languages is the menu of the languages the
	// room offers, empty when it offers one.
	Lang, Dir string
	Languages []langOption
	// AutoRefresh: the fan, without JavaScript, asked the page to check
	// again by itself every Refresh seconds; CheckURL checks now, and
	// AutoRefreshURL turns the checking on or off.
	AutoRefresh              bool
	CheckURL, AutoRefreshURL string

	loc      *locale
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
	// Outcome is the fan's chance of getting tickets in plain words, once
	// the room knows its supply (docs/supply.md).
	Outcome string
	// LeaveURL, for a fan who holds a place, is where the "Leave the line"
	// form posts (Back: the page to come back to); ReturnMinutes is
	// return_window in whole minutes, rounded up (0: none), which the page
	// tells them of.
	LeaveURL, Back string
	ReturnMinutes  int
	// CodeURL, on the page that asks for an access code, is where its form
	// posts (docs/codes.md); Back is the page to come back to.
	CodeURL string
	// Preview: the page is a preview on the operator's dashboard
	// (docs/operations.md, "Previews"); the embedded page's script then
	// neither polls, connects, solves nor reloads.
	Preview bool
}

// T translates a catalog key into the page's language: {{.T "figure.wait"}},
// or, for a text about a number, {{.T "nojs.auto" .Refresh}}, which picks
// the plural form and writes the number as the language does.
func (d pageData) T(key string, n ...any) string {
	if len(n) == 0 {
		return d.loc.T(key)
	}
	var v uint64
	switch x := n[0].(type) {
	case int:
		v = uint64(max(x, 0))
	case int64:
		v = uint64(max(x, 0))
	case uint64:
		v = x
	case *uint64:
		if x != nil {
			v = *x
		}
	}
	return d.loc.Count(key, v)
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

// newPageData words a status for people in a language, from the table in
// pagetext.go.
func newPageData(st waitingroom.Status, prefix string, unavailable bool, l *locale) pageData {
	view, text := pageViewOf(st, unavailable, l)
	d := pageData{
		Status:        st,
		Lang:          l.Code,
		Dir:           l.Dir,
		loc:           l,
		Title:         st.Title,
		Headline:      view.Headline,
		Lead:          lead(leadOf(text, st, l)...),
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
		Outcome:       view.Outcome,
		JoinURL:       prefix + "/join",
		WorkerURL:     prefix + "/pow-worker.js",
	}
	if d.Title == "" {
		d.Title = l.T("title.default")
	}
	if st.DrawIndex != nil {
		d.DrawIndex = l.Uint(*st.DrawIndex)
	}
	if st.Reconnecting && !unavailable {
		d.Notice = l.T("notice.reconnecting")
	}
	switch {
	case unavailable:
		d.Refresh = retryAfterUnavailable
	case view.Variant == variantChallenge:
		d.Refresh = 0 // the page's script answers; a reload would only bring a new puzzle
	case view.Variant == variantCodeRetry:
		// A refused code, in a room that takes fans without one: a poll
		// would give the fan a place in the general line while they type
		// their code again. The page waits for them (docs/codes.md).
		d.Refresh = 0
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

// formatCount writes 1234567 as "1,234,567", for operators' pages (the
// dashboard), which are in English.
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
// puts it in the fan's own time zone and words it in the page's language
// (Intl). Without JavaScript, English reads "10:00 UTC on Tue 1 Dec" and
// other languages ISO 8601's "2026-12-01 10:00 UTC", which needs no month
// names.
func formatWhen(t *time.Time, l *locale) template.HTML {
	if t == nil {
		return template.HTML(template.HTMLEscapeString(l.T("when.unknown")))
	}
	layout := "2006-01-02 15:04 MST"
	if l.Code == i18n.Reference {
		layout = "15:04 MST on Mon 2 Jan"
	}
	return template.HTML(`<time datetime="` + t.UTC().Format(time.RFC3339) + `">` +
		template.HTMLEscapeString(t.UTC().Format(layout)) + `</time>`)
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

// checkPageKeys refuses a page whose template asks T for a key that a
// language the room offers does not have: a word of the operator's own that
// only some of their catalogs give would be a blank on some fans' pages.
// The keys are read from the template's calls of .T with a literal key.
func checkPageKeys(file string, t *template.Template, ls *langSet) error {
	if file == "" {
		file = "the embedded page"
	}
	var errs []error
	for _, tt := range t.Templates() {
		if tt.Tree == nil {
			continue
		}
		walkT(tt.Tree.Root, func(key string) {
			for _, l := range ls.locales {
				if !l.Has(key) {
					errs = append(errs, fmt.Errorf("page %s: T %q: no such key in the %s catalog", file, key, l.Code))
				}
			}
		})
	}
	return errors.Join(errs...)
}

// walkT calls found with the literal key of every {{.T "key" ...}} under n.
func walkT(n parse.Node, found func(string)) {
	switch n := n.(type) {
	case *parse.ListNode:
		if n != nil {
			walkAll(n.Nodes, found)
		}
	case *parse.ActionNode:
		walkT(n.Pipe, found)
	case *parse.PipeNode:
		if n != nil {
			walkAll(n.Cmds, found)
		}
	case *parse.CommandNode:
		if len(n.Args) >= 2 {
			if f, ok := n.Args[0].(*parse.FieldNode); ok && len(f.Ident) > 0 && f.Ident[len(f.Ident)-1] == "T" {
				if s, ok := n.Args[1].(*parse.StringNode); ok {
					found(s.Text)
				}
			}
		}
		walkAll(n.Args, found)
	case *parse.IfNode:
		walkBranch(&n.BranchNode, found)
	case *parse.RangeNode:
		walkBranch(&n.BranchNode, found)
	case *parse.WithNode:
		walkBranch(&n.BranchNode, found)
	case *parse.TemplateNode:
		walkT(n.Pipe, found)
	}
}

func walkAll[N parse.Node](nodes []N, found func(string)) {
	for _, c := range nodes {
		walkT(c, found)
	}
}

// walkBranch walks an if, range or with: its pipeline and both its lists.
func walkBranch(b *parse.BranchNode, found func(string)) {
	walkT(b.Pipe, found)
	walkT(b.List, found)
	walkT(b.ElseList, found)
}
