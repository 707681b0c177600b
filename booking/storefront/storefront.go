package storefront

import (
	"bytes"
	"crypto/rand"
	"encoding/json"
	"fmt"
	"html/template"
	"io/fs"
	"log/slog"
	"net/http"
	"net/url"
	"strings"

	"github.com/foyer-dev/foyer/booking"
	"github.com/foyer-dev/foyer/internal/i18n"
)

// LangCookie remembers the language a fan chose from the menu.
const LangCookie = "shop_lang"

// Config assembles the storefront.
type Config struct {
	// API is the booking API's handler; every page and form goes through it.
	API http.Handler
	// Files holds index.html's assets (app.js, app.css, favicon.ico) and
	// the catalogs under messages/.
	Files fs.FS
	// MaxPerCustomer bounds the quantity menus.
	MaxPerCustomer int
	Logger         *slog.Logger
}

// Handler serves the storefront's pages and forms.
type Handler struct {
	api   http.Handler
	langs *i18n.Set
	tmpl  *template.Template
	max   int
	log   *slog.Logger
	mux   *http.ServeMux
	// serve is mux behind a guard against cross-site form posts: the
	// storefront's forms act with the fan's cookies and pass, and SameSite
	// alone leaves a window (older browsers, cookies without the attribute).
	serve http.Handler
}

// New reads and checks the catalogs (a missing key or plural form is an
// error naming the file and the key) and parses the page.
func New(cfg Config) (*Handler, error) {
	langs, err := i18n.NewSet(cfg.Files, "messages", LangCookie)
	if err != nil {
		return nil, err
	}
	tmpl, err := template.New("page.html").Funcs(funcs).ParseFS(cfg.Files, "page.html")
	if err != nil {
		return nil, err
	}
	h := &Handler{api: cfg.API, langs: langs, tmpl: tmpl, max: cfg.MaxPerCustomer, log: cfg.Logger, mux: http.NewServeMux()}
	if h.max <= 0 {
		h.max = booking.DefaultMaxPerCustomer
	}
	if h.log == nil {
		h.log = slog.New(slog.DiscardHandler)
	}
	h.mux.HandleFunc("GET /{$}", h.events)
	h.mux.HandleFunc("GET /events/{id}", h.event)
	h.mux.HandleFunc("POST /events/{id}/hold", h.postHold)
	h.mux.HandleFunc("GET /holds/{id}", h.hold)
	h.mux.HandleFunc("POST /holds/{id}/checkout", h.postCheckout)
	h.mux.HandleFunc("POST /holds/{id}/release", h.postRelease)
	h.mux.HandleFunc("GET /orders/{id}", h.order)
	h.mux.HandleFunc("GET "+booking.OrderLinkPath+"{link}", h.orderByLink)
	cross := http.NewCrossOriginProtection()
	cross.SetDenyHandler(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		l := h.langs.Choose(nil, r)
		h.log.Warn("cross-site form post refused", "path", r.URL.Path, "origin", r.Header.Get("Origin"), "sec_fetch_site", r.Header.Get("Sec-Fetch-Site"))
		h.fail(w, r, l, http.StatusForbidden, booking.CodeCrossOrigin, "", l.T("error.form"), "/")
	}))
	h.serve = cross.Handler(h.mux)
	return h, nil
}

// Langs is the storefront's languages.
func (h *Handler) Langs() *i18n.Set { return h.langs }

// Routes are the patterns the handler answers, for the service's mux.
var Routes = []string{"GET /{$}", "GET /events/{id}", "POST /events/{id}/hold", "GET /holds/{id}",
	"POST /holds/{id}/checkout", "POST /holds/{id}/release", "GET /orders/{id}", "GET " + booking.OrderLinkPath + "{link}"}

func (h *Handler) ServeHTTP(w http.ResponseWriter, r *http.Request) { h.serve.ServeHTTP(w, r) }

// apiAnswer is what the API said to one internal request.
type apiAnswer struct {
	status int
	header http.Header
	body   []byte
}

// apiError is the API's JSON error.
type apiError struct {
	Error   string   `json:"error"`
	Message string   `json:"message"`
	Seats   []string `json:"seats"`
}

func (a apiAnswer) ok() bool { return a.status >= 200 && a.status < 300 }

func (a apiAnswer) err() apiError {
	var e apiError
	_ = json.Unmarshal(a.body, &e)
	return e
}

// call sends one request to the API as the fan: with their headers (the
// admission pass, cookies), as JSON. A POST carries key as its
// Idempotency-Key, so a form sent twice holds or checks out once.
func (h *Handler) call(r *http.Request, method, path string, body any, key string) apiAnswer {
	var buf []byte
	if body != nil {
		buf, _ = json.Marshal(body)
	}
	req, err := http.NewRequestWithContext(r.Context(), method, path, bytes.NewReader(buf))
	if err != nil {
		return apiAnswer{status: http.StatusInternalServerError}
	}
	req.Header = r.Header.Clone()
	req.Header.Del("Content-Length")
	req.Header.Set("Accept", "application/json")
	req.Header.Del(booking.IdempotencyHeader)
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	} else {
		req.Header.Del("Content-Type")
	}
	if key != "" {
		req.Header.Set(booking.IdempotencyHeader, key)
	}
	req.RemoteAddr = r.RemoteAddr
	rec := &recorder{header: http.Header{}, status: http.StatusOK}
	h.api.ServeHTTP(rec, req)
	return apiAnswer{status: rec.status, header: rec.header, body: rec.body.Bytes()}
}

// recorder keeps an internal answer.
type recorder struct {
	header http.Header
	status int
	wrote  bool
	body   bytes.Buffer
}

func (r *recorder) Header() http.Header { return r.header }
func (r *recorder) WriteHeader(code int) {
	if !r.wrote {
		r.status, r.wrote = code, true
	}
}
func (r *recorder) Write(b []byte) (int, error) { r.wrote = true; return r.body.Write(b) }

// passCommand hands the gateway the command the API's answer carried
// (sold-out, revoke): a page that reads an order or an event tells the
// gateway what the API would have.
func passCommand(w http.ResponseWriter, a apiAnswer) {
	if c := a.header.Get(booking.CommandHeader); c != "" {
		w.Header().Set(booking.CommandHeader, c)
	}
}

// newKey is a fresh idempotency key for a form.
func newKey() string { return rand.Text() }

// wantsJSON reports whether a client asked for JSON rather than a page.
func wantsJSON(r *http.Request) bool {
	a := r.Header.Get("Accept")
	return strings.Contains(a, "application/json") && !strings.Contains(a, "text/html")
}

// page is what every page's template reads.
type page struct {
	L       *i18n.Locale
	Menu    []i18n.Option
	Title   string
	View    string // which view the template draws
	Notice  string
	Info    bool
	Data    any
	Max     []int
	Scripts bool
}

func (h *Handler) render(w http.ResponseWriter, r *http.Request, l *i18n.Locale, status int, view, title string, data any) {
	p := page{L: l, Menu: h.langs.Menu(r.URL, l), View: view, Title: title, Data: data, Scripts: true}
	for i := 1; i <= h.max; i++ {
		p.Max = append(p.Max, i)
	}
	switch r.URL.Query().Get("notice") {
	case "released":
		p.Notice, p.Info = l.T("hold.released"), true
	}
	var buf bytes.Buffer
	if err := h.tmpl.Execute(&buf, p); err != nil {
		h.log.Error("storefront page", "view", view, "error", err)
		http.Error(w, "the page could not be drawn", http.StatusInternalServerError)
		return
	}
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	w.Header().Set("Content-Language", l.Code)
	w.Header().Set("Vary", "Accept-Language, Cookie")
	w.Header().Set("Cache-Control", "no-store")
	w.Header().Set("Content-Security-Policy", "default-src 'self'; img-src 'self' data:; style-src 'self'; script-src 'self'; form-action 'self' http: https:; frame-ancestors 'none'")
	w.WriteHeader(status)
	_, _ = w.Write(buf.Bytes())
}

// fail answers a refused request: a page that says what went wrong and
// which field to change, or for an API client ("Accept: application/json")
// the same as JSON with the machine fields error and field.
func (h *Handler) fail(w http.ResponseWriter, r *http.Request, l *i18n.Locale, status int, code, field, message string, back string) {
	if wantsJSON(r) {
		w.Header().Set("Content-Type", "application/json")
		w.Header().Set("Content-Language", l.Code)
		w.WriteHeader(status)
		_ = json.NewEncoder(w).Encode(map[string]string{"error": code, "field": field, "message": message})
		return
	}
	h.render(w, r, l, status, "error", l.T("error.title"), errorView{Message: message, Field: field, Back: back})
}

type errorView struct {
	Message, Field, Back string
}

// explain words an API refusal for the fan.
func explain(l *i18n.Locale, a apiAnswer) string {
	e := a.err()
	switch {
	case a.status == http.StatusUnauthorized:
		return l.T("error.visit_ended")
	case e.Error == booking.CodeInvalidOrderLink:
		return l.T("error.bad_link")
	case e.Error == booking.CodeSoldOut:
		return l.T("error.sold_out")
	case e.Error == booking.CodeOverLimit:
		return l.T("error.over_limit")
	case e.Error == booking.CodeSeatUnavailable:
		return l.T("error.seat_taken")
	case e.Error == booking.CodeHoldExpired || e.Error == booking.CodeHoldNotActive:
		return l.T("hold.gone")
	case strings.HasSuffix(e.Error, "_not_found"):
		return l.T("error.not_found")
	case e.Error == booking.CodeIdempotencyReuse || e.Error == booking.CodeIdempotencyBusy:
		return l.T("error.resent")
	}
	return l.T("error.generic")
}

// fieldOf names the form field an API refusal is about.
func fieldOf(e apiError, section bool) string {
	switch e.Error {
	case booking.CodeOverLimit, booking.CodeInvalidRequest:
		return "quantity"
	case booking.CodeSectionNotFound:
		return "section"
	case booking.CodeZoneNotFound:
		return "zone"
	case booking.CodeSoldOut:
		if section {
			return "section"
		}
		return "zone"
	case booking.CodeSeatNotFound, booking.CodeSeatUnavailable:
		return "seats"
	}
	return ""
}

var funcs = template.FuncMap{
	"seat": func(l *i18n.Locale, id string) string {
		sec, row, num, ok := booking.ParseSeatID(id)
		if !ok {
			return id
		}
		return l.T("seat.label", "section", sec, "row", l.Number(row), "seat", l.Number(num))
	},
	"money": func(l *i18n.Locale, m booking.Money, cur string) string { return l.Money(int64(m), cur) },
	"messages": func(l *i18n.Locale) template.JS {
		return template.JS(l.JSON(""))
	},
	"split": func(s, sep string) []string {
		a, b, _ := strings.Cut(s, sep)
		return []string{a, b}
	},
	"path":  func(format string, args ...any) string { return fmt.Sprintf(format, args...) },
	"query": url.QueryEscape,
}
