package gateway

import (
	"errors"
	"net/http"
	"strings"

	"github.com/foyer-dev/foyer/waitingroom"
)

// Access codes on a fan's path (docs/codes.md). A code comes in the room URL
// (?code=), in a header for apps (X-Waiting-Room-Code), or from the page's
// form (POST {prefix}/code, which works without JavaScript). The gateway only
// reads it and hands it to the room (Arrival.Code); it never logs it, and
// takes it out of the URL, so that it never goes on to the origin nor into
// the page's links.

const (
	headerCode = "X-Waiting-Room-Code"
	codeParam  = "code"
)

// codeOrigin refuses a code form posted from another site, as leaveOrigin
// does for the leave form: a page elsewhere must not spend a fan's
// join_limit allowance, nor try codes in their name.
var codeOrigin = http.NewCrossOriginProtection()

// takeCode reads the access code a request carries, and removes ?code= from
// its URL. ok is false for a request with none; a code sent empty is
// ErrCodeEmpty.
func takeCode(r *http.Request) (code string, ok bool, err error) {
	if v, has := r.Header[headerCode]; has {
		code, ok = strings.Join(v, ""), true
	} else if strings.Contains(r.URL.RawQuery, codeParam+"=") {
		q := r.URL.Query()
		if code, ok = q.Get(codeParam), q.Has(codeParam); ok {
			q.Del(codeParam)
			r.URL.RawQuery = q.Encode()
			r.RequestURI = r.URL.RequestURI()
		}
	}
	if ok && strings.TrimSpace(code) == "" {
		return "", true, waitingroom.ErrCodeEmpty
	}
	return code, ok, nil
}

// serveCode answers the page's code form: POST {prefix}/code with code (and
// back, the page to return to). A code that buys a place sets the room's
// cookies and sends the fan back to the page, now holding their place (or
// on to the site, when they were let in on the spot); a refused one gets the
// page again, saying why, with the form. A client that asks for JSON is
// answered with its status, as the status endpoint would.
func (h *Handler) serveCode(w http.ResponseWriter, r *http.Request) error {
	if refused, err := refusePagePost(w, r, codeOrigin, "code"); refused {
		return err
	}
	r.Body = http.MaxBytesReader(w, r.Body, 4096)
	if err := r.ParseForm(); err != nil {
		return writeError(w, http.StatusBadRequest, "malformed_form", "The form could not be read.")
	}
	back := localPath(r.PostFormValue("back"))
	// The code is the form's; whatever the URL or a header says is not.
	r.Header.Del(headerCode)
	r.Header[headerCode] = []string{r.PostFormValue(codeParam)}
	a, err := h.admit(w, r, waitingroom.RequestPage, waitingroom.Answer{})
	if err != nil {
		if isCodeError(err) {
			return h.refuseCode(w, r, err, back)
		}
		return h.refuse(w, r, err)
	}
	if wantsJSON(r) {
		return h.writeStatus(w, a.status)
	}
	w.Header().Set("Location", back)
	w.Header().Set("Cache-Control", "no-store")
	w.WriteHeader(http.StatusSeeOther)
	return nil
}

// isCodeError reports whether err refuses a fan's code: wrong, used up,
// empty or not a code.
func isCodeError(err error) bool {
	return errors.Is(err, waitingroom.ErrCodeRefused) || errors.Is(err, waitingroom.ErrCodeEmpty) || errors.Is(err, waitingroom.ErrCodeInvalid)
}

// codeRefusals are the answers to a refused code: status, error code and
// the catalog key of the words. A wrong code is one no lane has: the answer
// never says whether a code exists elsewhere.
func codeRefusal(err error) (int, string, string) {
	var ce *waitingroom.CodeRefusedError
	switch {
	case errors.As(err, &ce) && ce.Status == waitingroom.CodeUsedUp:
		return http.StatusForbidden, "code_used_up", "code.used_up"
	case errors.Is(err, waitingroom.ErrCodeEmpty):
		return http.StatusBadRequest, "code_empty", "code.empty"
	case errors.Is(err, waitingroom.ErrCodeInvalid):
		return http.StatusBadRequest, "code_invalid", "code.invalid"
	}
	return http.StatusForbidden, "code_wrong", "code.wrong"
}

// refuseCode answers a refused code: a JSON error for apps, or, for
// browsers, the page asking for a code again with the reason above the form,
// back being where the fan was going. No cookie is set: nothing was made.
func (h *Handler) refuseCode(w http.ResponseWriter, r *http.Request, err error, back string) error {
	code, name, key := codeRefusal(err)
	l := h.langs.choose(nil, r)
	if wantsJSON(r) {
		return writeError(w, code, name, l.T(key))
	}
	st := h.room.CodeRequiredStatus()
	st.CodeOptional = !h.room.Settings().CodesRequired
	d := h.pageFor(w, r, st, false)
	d.Notice = l.T(key)
	d.Back = back
	return h.renderPage(w, code, d)
}

// offerCode puts the code form on a page that asks for a code.
func (h *Handler) offerCode(d *pageData) {
	if d.Status.State == waitingroom.StateCodeRequired {
		d.CodeURL, d.Back = h.prefix+"/code", d.CheckURL
	}
}
