package gateway

import (
	"encoding/json"
	"errors"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/caddyserver/caddy/v2/modules/caddyhttp"
	"go.uber.org/zap"

	"github.com/foyer-dev/foyer/waitingroom"
)

// Headers of the contract between gateway and origin.
const (
	headerPrefix  = "X-Waiting-Room-"
	headerPass    = "X-Waiting-Room-Pass"
	headerCommand = "X-Waiting-Room-Command"
)

// ServeHTTP implements caddyhttp.MiddlewareHandler.
func (h *Handler) ServeHTTP(w http.ResponseWriter, r *http.Request, next caddyhttp.Handler) error {
	if rest, ok := h.underPrefix(r.URL.Path); ok {
		return h.serveEndpoint(w, r, rest)
	}
	if h.account != nil && h.account.isLogin(r) {
		// The login page is how fans get the token the room asks for: it
		// is never queued. Like any request that goes on, it goes without
		// the room's cookies and without a client's X-Waiting-Room-*.
		stripWaitingRoomHeaders(r.Header)
		h.dropOurCookies(r.Header)
		return next.ServeHTTP(w, r)
	}
	a, err := h.admit(w, r, waitingroom.RequestPage, waitingroom.Answer{})
	if err != nil {
		return h.refuse(w, r, err)
	}
	if a.token != "" {
		return h.forward(w, r, next, a.token, a.pass)
	}
	return h.waiting(w, r, a.status)
}

// admission is what the room decided for a request: either a pass to go in
// with, or a status to show while waiting. A visitor who came with a valid
// pass to a page has no status: a request on its way to the origin needs none
// (the room fills it in for the status endpoint and join).
type admission struct {
	token  string
	pass   waitingroom.Pass
	status waitingroom.Status
}

// admit asks the room to decide the request (Room.Admit, the one call on a
// fan's path) and writes the cookies its decision sets. The gateway only reads
// the request's facts and writes the answer: who gets in is the room's table
// (docs/ARCHITECTURE.md, "The admission state machine").
func (h *Handler) admit(w http.ResponseWriter, r *http.Request, kind waitingroom.RequestKind, answer waitingroom.Answer) (admission, error) {
	a, err := h.arrival(r, kind)
	if err != nil {
		return admission{}, err
	}
	a.Answer = answer
	d, err := h.room.Admit(r.Context(), a)
	if err != nil {
		return admission{}, err
	}
	if d.SetTicket {
		h.setTicket(w, r, d.Ticket)
	}
	if d.NewPass {
		h.setPass(w, r, d.Pass, d.Admission)
		h.observeAdmission(d)
	}
	return admission{token: d.Pass, pass: d.Admission, status: d.Status}, nil
}

// arrival reads the facts of a request the room decides on: the client's
// address, the room's cookies, and the account the site's login vouches for
// (errLoginRequired when the account block requires one and there is none).
func (h *Handler) arrival(r *http.Request, kind waitingroom.RequestKind) (waitingroom.Arrival, error) {
	ticket, pass := h.ourCookies(r)
	a := waitingroom.Arrival{Kind: kind, Client: clientAddr(r), Ticket: ticket, Pass: pass}
	code, _, err := takeCode(r)
	if err != nil {
		return a, err
	}
	a.Code = code
	if h.account == nil {
		return a, nil
	}
	if pass != "" {
		// A pass is checked before anything else, and a fan who holds one
		// need not prove their account on every request: the account token is
		// verified only when the pass does not do.
		if _, err := h.room.CheckPass(pass); err == nil {
			return a, nil
		}
	}
	acct, ok, err := h.accountOf(r)
	a.Account, a.HasAccount = acct, ok
	return a, err
}

// underPrefix reports whether path is one of the room's own endpoints.
func (h *Handler) underPrefix(path string) (string, bool) {
	rest, ok := strings.CutPrefix(path, h.prefix)
	if !ok || (rest != "" && rest[0] != '/') {
		return "", false
	}
	return strings.TrimPrefix(rest, "/"), true
}

// stripWaitingRoomHeaders removes every X-Waiting-Room-* header: those a client
// sent (only the gateway speaks that language to the origin), and those the
// origin answered (they are for the gateway, not the client).
func stripWaitingRoomHeaders(hdr http.Header) {
	for name := range hdr {
		if len(name) >= len(headerPrefix) && strings.EqualFold(name[:len(headerPrefix)], headerPrefix) {
			delete(hdr, name)
		}
	}
}

// forward sends an admitted request on to the origin with the pass, and acts on
// the origin's command in the response. Only the gateway speaks X-Waiting-Room-*
// to the origin: whatever of it the client sent goes first.
func (h *Handler) forward(w http.ResponseWriter, r *http.Request, next caddyhttp.Handler, tok string, p waitingroom.Pass) error {
	stripWaitingRoomHeaders(r.Header)
	h.dropOurCookies(r.Header)
	r.Header[headerPass] = []string{tok} // the name is canonical already: Set would check it again
	cw := &commandWriter{ResponseWriterWrapper: caddyhttp.ResponseWriterWrapper{ResponseWriter: w}, h: h, r: r, pass: p}
	if err := next.ServeHTTP(cw, r); err != nil {
		return cw.upstreamFailed(err)
	}
	return nil
}

// waiting answers a visitor who is not in yet: the page, or the status as JSON.
func (h *Handler) waiting(w http.ResponseWriter, r *http.Request, st waitingroom.Status) error {
	if wantsJSON(r) {
		return h.writeStatus(w, st)
	}
	return h.renderPage(w, http.StatusOK, h.pageFor(w, r, st, false))
}

// pageFor words a status for the fan who sent r: in their language (which a
// ?lang= from the page's menu sets), with the menu, and the controls a fan
// without JavaScript checks their place with.
func (h *Handler) pageFor(w http.ResponseWriter, r *http.Request, st waitingroom.Status, unavailable bool) pageData {
	l := h.langs.choose(w, r)
	d := newPageData(st, h.prefix, unavailable, l)
	d.Languages = h.langs.menu(r.URL, l)
	d.AutoRefresh = h.autoRefresh(w, r)
	q := r.URL.Query()
	q.Del("autorefresh")
	d.CheckURL = r.URL.Path
	if len(q) > 0 {
		d.CheckURL += "?" + q.Encode()
	}
	if d.AutoRefresh {
		q.Set("autorefresh", "off")
	} else {
		q.Set("autorefresh", "on")
	}
	d.AutoRefreshURL = r.URL.Path + "?" + q.Encode()
	h.offerLeave(&d)
	h.offerCode(&d)
	return d
}

// offerLeave lets a fan with a place give it up, and tells them what missing
// their turn costs.
func (h *Handler) offerLeave(d *pageData) {
	if d.KeepOpen || strings.HasSuffix(d.Variant, variantReturned) {
		d.LeaveURL, d.Back = h.prefix+"/leave", d.CheckURL
		d.ReturnMinutes = int((h.room.Settings().ReturnWindow + time.Minute - 1) / time.Minute)
	}
}

// autoRefresh reports whether the page reloads by itself without JavaScript:
// only when the fan asked for it (?autorefresh=on, remembered in a cookie
// until ?autorefresh=off). A timed reload the fan did not choose is a time
// limit in WCAG 2.2.1's sense (and axe-core's meta-refresh rule): by
// default the page without JavaScript offers "Check my place now" instead,
// and a fan whose turn passes while they read is let back in at the front
// within return_window.
func (h *Handler) autoRefresh(w http.ResponseWriter, r *http.Request) bool {
	switch r.URL.Query().Get("autorefresh") {
	case "on":
		h.setCookie(w, r, h.refreshCk, "1", 24*3600)
		return true
	case "off":
		h.setCookie(w, r, h.refreshCk, "", -1)
		return false
	}
	c, err := r.Cookie(h.refreshCk)
	return err == nil && c.Value == "1"
}

// writeStatus answers the status as JSON, with 429 and Retry-After for those
// still waiting when the operator asked for it.
func (h *Handler) writeStatus(w http.ResponseWriter, st waitingroom.Status) error {
	code := http.StatusOK
	if h.QueuedStatusCode == http.StatusTooManyRequests && st.State != waitingroom.StateAdmitted {
		code = http.StatusTooManyRequests
		w.Header().Set("Retry-After", strconv.Itoa(st.RefreshSeconds))
	}
	buf := statusBodies.Get().(*[]byte)
	body := append(st.AppendJSON((*buf)[:0]), '\n')
	err := writeBody(w, code, body)
	// A Writer must not keep what it is given (io.Writer), so the buffer
	// is free again: polls and joins are the hot paths.
	if cap(body) <= 4096 {
		*buf = body
		statusBodies.Put(buf)
	}
	return err
}

// statusBodies are buffers for status JSON, which is a few hundred bytes.
var statusBodies = sync.Pool{New: func() any { b := make([]byte, 0, 512); return &b }}

// writePageStatus answers the waiting page's own poll (status?page=<lang>):
// the status with the page's words for it in the page's language, as a live
// update carries them.
func (h *Handler) writePageStatus(w http.ResponseWriter, st waitingroom.Status, lang string) error {
	view, _ := pageViewOf(st, false, h.langs.lookup(lang))
	page, err := json.Marshal(view)
	if err != nil {
		return caddyhttp.Error(http.StatusInternalServerError, err)
	}
	body := st.AppendJSON(make([]byte, 0, 480))
	body = append(body[:len(body)-1], `,"page":`...)
	body = append(append(body, page...), '}', '\n')
	return writeBody(w, http.StatusOK, body)
}

// unavailable answers a new visitor who could not join because the store is
// unreachable: 503 with Retry-After; or, in a room that requires an account,
// one without a valid account token: the login page.
func (h *Handler) unavailable(w http.ResponseWriter, r *http.Request, err error) error {
	if errors.Is(err, errLoginRequired) {
		return h.toLogin(w, r)
	}
	if !errors.Is(err, waitingroom.ErrStoreUnavailable) {
		return caddyhttp.Error(http.StatusInternalServerError, err)
	}

	if ce := h.logger.Check(zap.WarnLevel, "waiting room store unavailable"); ce != nil {
		ce.Write(zap.String("room", h.Room), zap.Error(err))
	}
	w.Header().Set("Retry-After", strconv.Itoa(retryAfterUnavailable))
	if wantsJSON(r) {
		return writeError(w, http.StatusServiceUnavailable, "unavailable", h.langs.choose(nil, r).T("api.unavailable"))
	}
	// Not Reconnecting: its notice tells a fan they keep their place, and a
	// newcomer has none yet.
	st := waitingroom.Status{Room: h.Room, Title: h.room.Settings().Title, State: waitingroom.StateQueued}
	return h.renderPage(w, http.StatusServiceUnavailable, h.pageFor(w, r, st, true))
}

// wantsJSON reports whether the client asked for JSON rather than a page.
func wantsJSON(r *http.Request) bool { return acceptedFirst(r) == "application/json" }

// wantsHTML reports whether the client prefers a page: a browser's Accept
// names text/html before any JSON.
func wantsHTML(r *http.Request) bool { return acceptedFirst(r) == "text/html" }

// acceptedFirst is whichever of JSON and HTML the request's Accept names
// first, or "" when it names neither.
func acceptedFirst(r *http.Request) string {
	for _, part := range strings.Split(r.Header.Get("Accept"), ",") {
		mt, _, _ := strings.Cut(strings.TrimSpace(part), ";")
		switch mt = strings.ToLower(strings.TrimSpace(mt)); mt {
		case "application/json", "text/html":
			return mt
		}
	}
	return ""
}

func writeJSON(w http.ResponseWriter, code int, v any) error {
	body, err := json.Marshal(v)
	if err != nil {
		return caddyhttp.Error(http.StatusInternalServerError, err)
	}
	return writeBody(w, code, append(body, '\n'))
}

// writeBody answers a JSON body, not to be cached unless the caller said so.
func writeBody(w http.ResponseWriter, code int, body []byte) error {
	hdr := w.Header()
	// Fresh slices, since a later handler may edit header values in place;
	// one array holds all three, each slice capped so that appending to one
	// never writes over the next.
	vals := [...]string{"application/json", "no-store", strconv.Itoa(len(body))}
	own := vals[:]
	hdr["Content-Type"] = own[0:1:1]
	if _, ok := hdr["Cache-Control"]; !ok {
		hdr["Cache-Control"] = own[1:2:2]
	}
	hdr["Content-Length"] = own[2:3:3]
	w.WriteHeader(code)
	_, err := w.Write(body)
	return err
}

// apiError is the JSON shape of every error the gateway answers.
type apiError struct {
	Error   string `json:"error"`
	Message string `json:"message"`
}

func writeError(w http.ResponseWriter, code int, errCode, msg string) error {
	return writeJSON(w, code, apiError{Error: errCode, Message: msg})
}
