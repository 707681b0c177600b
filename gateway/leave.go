package gateway

import (
	"bytes"
	"html/template"
	"net/http"
	"strconv"
	"strings"

	"github.com/foyer-dev/foyer/static"
	"github.com/foyer-dev/foyer/waitingroom"
)

// Leaving the line: POST {prefix}/leave. The waiting page's "Leave the line"
// button posts the form without confirm, which answers a page asking the fan
// to confirm; the confirmation posts it again with confirm=yes, which gives
// the place up (Room.Leave: one store round trip), clears the room's cookies
// and says so. Both steps are plain forms, so they work without JavaScript.
// A client that asks for JSON (Accept: application/json) leaves at once and
// is answered {"left": true, "state": ...}.
//
// A cross-site form post is refused (403): a page elsewhere must not make a
// fan lose their place. net/http's CrossOriginProtection checks
// Sec-Fetch-Site, and Origin against Host where a browser sends no
// Sec-Fetch-Site; a request with neither comes from no browser, which no
// other site can drive.

var leaveOrigin = http.NewCrossOriginProtection()

var leavePage = template.Must(template.ParseFS(static.Waiting, static.LeavePage))

// leaveData is what the leave page template is given.
type leaveData struct {
	Lang, Dir, Title, Headline, Lead string
	Confirm                          bool
	LeaveURL, Back                   string
	loc                              *locale
}

// T translates a catalog key into the page's language.
func (d leaveData) T(key string) string { return d.loc.T(key) }

// refusePagePost answers a request to one of the waiting page's forms (name)
// that is not a POST from the page's own site, and reports whether it did.
func refusePagePost(w http.ResponseWriter, r *http.Request, origin *http.CrossOriginProtection, name string) (bool, error) {
	if r.Method != http.MethodPost {
		w.Header().Set("Allow", "POST")
		return true, writeError(w, http.StatusMethodNotAllowed, "method_not_allowed", name+" takes POST.")
	}
	if err := origin.Check(r); err != nil {
		return true, writeError(w, http.StatusForbidden, "cross_origin", name+" takes a form posted from the waiting page itself.")
	}
	return false, nil
}

func (h *Handler) serveLeave(w http.ResponseWriter, r *http.Request) error {
	if refused, err := refusePagePost(w, r, leaveOrigin, "leave"); refused {
		return err
	}
	wantsJSON := strings.Contains(r.Header.Get("Accept"), "application/json")
	r.Body = http.MaxBytesReader(w, r.Body, 4096)
	if err := r.ParseForm(); err != nil && !wantsJSON {
		return writeError(w, http.StatusBadRequest, "malformed_form", "The form could not be read.")
	}
	l := h.langs.choose(w, r)
	if !wantsJSON && r.PostFormValue("confirm") != "yes" {
		return renderLeave(w, h.leaveData(l, localPath(r.PostFormValue("back")), true))
	}
	ticket, pass := h.ourCookies(r)
	tr, err := h.room.Leave(r.Context(), waitingroom.Arrival{Kind: waitingroom.RequestStatus, Client: clientAddr(r), Ticket: ticket, Pass: pass})
	if err != nil {
		r.Header.Set("Accept", "application/json")
		return h.refuse(w, r, err)
	}
	if ticket != "" {
		h.setCookie(w, r, h.ticketCk, "", -1)
	}
	if pass != "" {
		h.clearPass(w, r)
	}
	if wantsJSON {
		return writeJSON(w, http.StatusOK, struct {
			Left  bool   `json:"left"`
			State string `json:"state"`
		}{true, tr.To.String()})
	}
	return renderLeave(w, h.leaveData(l, localPath(r.PostFormValue("back")), false))
}

// leaveData words the leave page in a language: the question (confirm), or
// the fan's place given up. back is the page to come back to.
func (h *Handler) leaveData(l *locale, back string, confirm bool) leaveData {
	d := leaveData{Lang: l.Code, Dir: l.Dir, loc: l, LeaveURL: h.prefix + "/leave", Back: back, Confirm: confirm}
	if d.Title = h.room.Settings().Title; d.Title == "" {
		d.Title = l.T("title.default")
	}
	d.Headline, d.Lead = l.T("leave.done_headline"), l.T("leave.done_lead")
	if confirm {
		d.Headline, d.Lead = l.T("leave.confirm_headline"), l.T("leave.confirm_lead")
	}
	return d
}

func renderLeave(w http.ResponseWriter, d leaveData) error {
	var buf bytes.Buffer
	if err := leavePage.Execute(&buf, d); err != nil {
		return err
	}
	hdr := w.Header()
	hdr.Set("Content-Type", "text/html; charset=utf-8")
	hdr.Set("Cache-Control", "no-store")
	hdr.Set("Content-Length", strconv.Itoa(buf.Len()))
	w.WriteHeader(http.StatusOK)
	_, err := w.Write(buf.Bytes())
	return err
}

// localPath is p when it is a path on this site ("/tickets?x=1"), "/"
// otherwise: the way back from the leave page never leads elsewhere.
func localPath(p string) string {
	if !strings.HasPrefix(p, "/") || strings.HasPrefix(p, "//") || strings.HasPrefix(p, "/\\") {
		return "/"
	}
	return p
}
