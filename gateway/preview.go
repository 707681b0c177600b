package gateway

import (
	"bytes"
	"crypto/rand"
	"encoding/base64"
	"fmt"
	"html/template"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/caddyserver/caddy/v2/modules/caddyhttp"

	"github.com/foyer-dev/foyer/static"
	"github.com/foyer-dev/foyer/waitingroom"
)

// Previews of the fan's pages, on the dashboard's route (docs/operations.md,
// "Previews"):
//
//	<route>?format=preview&room=<id>                     every state, linked
//	<route>?format=preview&room=<id>&state=<s>&lang=<l>  one state's page
//	...&phase=<name>                                     as under a scheduled phase
//
// A preview is the page a fan would get, rendered by the room's handler with
// its own page template and catalogs, from a made-up status: it reads nothing
// of the room but its settings, and calls no store. Its page must not reach
// the room either: the response's content security policy refuses every
// connection, worker and form post (whatever the operator's template does),
// and the embedded page's script, told by .Preview, does not even try.

// previewPage is which page a preview state renders.
type previewPage int

const (
	previewWaiting      previewPage = iota // the waiting page: the page template
	previewSlowDown                        // over join_limit: 429 (slowdown.go)
	previewLeaveConfirm                    // "Leave the line?" (leave.go)
	previewLeft                            // the place given up (leave.go)
)

// previewState is one state of the fan's pages: a synthetic status and how
// to read it. A new variant of the page is one more row of previewStates.
type previewState struct {
	Name  string
	About string
	Page  previewPage
	// Status is what the room would say; Unavailable: its store is away.
	Status      waitingroom.Status
	Unavailable bool
	// Opens sets the status's OpensAt to the sample opening time.
	Opens bool
	// Notice is the catalog key of a notice the page says (a refused code).
	Notice string
}

// Sample figures of the previews.
var (
	previewPlace     = uint64(1234)
	previewNext      = uint64(0)
	previewETA       = int64(25 * 60)
	previewShortETA  = int64(40)
	previewDrawIndex = uint64(57)
	// What a fan is told of their chance, once the room knows its supply
	// (docs/supply.md).
	previewEnds     = &waitingroom.SupplyEnds{Low: 900, High: 2600}
	previewSoldEnds = &waitingroom.SupplyEnds{Low: 0, High: 0}
)

// previewStates is every state of the fan's pages that the dashboard
// previews, in the order of a sale (TestEveryVariantHasAPreview).
var previewStates = []previewState{
	{Name: "not_open", About: "The sale has not opened, and takes no registrations yet", Opens: true,
		Status: waitingroom.Status{State: waitingroom.StateClosed, RefreshSeconds: 20}},
	{Name: "registered", About: "Pre-queue: registered for the draw at the opening, with no place yet", Opens: true,
		Status: waitingroom.Status{State: waitingroom.StatePrequeue, DrawIndex: &previewDrawIndex, RefreshSeconds: 20}},
	{Name: "prequeue", About: "Pre-queue: a place at the opening already known", Opens: true,
		Status: waitingroom.Status{State: waitingroom.StatePrequeue, Position: &previewPlace, DrawIndex: &previewDrawIndex, RefreshSeconds: 20}},
	{Name: "challenge", About: "A newcomer's browser solves the proof of work before it gets a place",
		Status: waitingroom.Status{State: waitingroom.StateChallenge, Challenge: &waitingroom.ChallengeOffer{Algorithm: waitingroom.PoWAlgorithm, Seed: "cHJldmlldw", Bits: waitingroom.DefaultPoWBits}}},
	{Name: "code_required", About: "Invite-only (codes_required): a newcomer without a code gets no place and is asked for one",
		Status: waitingroom.Status{State: waitingroom.StateCodeRequired, RefreshSeconds: 20}},
	{Name: "code_required_opens", About: "Invite-only until the public sale, whose opening is known: asked for a code", Opens: true,
		Status: waitingroom.Status{State: waitingroom.StateCodeRequired, RefreshSeconds: 20}},
	{Name: "code_refused", About: "A wrong access code in an invite-only room: 403, asked again", Notice: "code.wrong",
		Status: waitingroom.Status{State: waitingroom.StateCodeRequired, RefreshSeconds: 20}},
	{Name: "code_retry", About: "A code used up in a room that takes fans without one too: 403, asked again or offered the line", Notice: "code.used_up",
		Status: waitingroom.Status{State: waitingroom.StateCodeRequired, CodeOptional: true, RefreshSeconds: 20}},
	{Name: "slow_down", About: "Too many new places from the fan's network (join_limit): 429", Page: previewSlowDown},
	{Name: "awaiting_draw", About: "In line, waiting for the next random draw of places",
		Status: waitingroom.Status{State: waitingroom.StateQueued, AwaitingDraw: true, ETASeconds: &previewETA, RefreshSeconds: 9}},
	{Name: "queued", About: "In line, with a place and an estimated wait",
		Status: waitingroom.Status{State: waitingroom.StateQueued, Position: &previewPlace, ETASeconds: &previewETA, Progress: .42, RefreshSeconds: 9}},
	{Name: "queued_turn_passed", About: "In line again after a turn that passed unused (said once)",
		Status: waitingroom.Status{State: waitingroom.StateQueued, Position: &previewPlace, ETASeconds: &previewETA, Progress: .05, TurnPassed: true, RefreshSeconds: 9}},
	{Name: "queued_likely", About: "In line, the room knowing its supply: likely to get tickets",
		Status: waitingroom.Status{State: waitingroom.StateQueued, Position: &previewNext, ETASeconds: &previewShortETA, Progress: .99, RefreshSeconds: 2,
			Outcome: waitingroom.OutcomeLikely, Chance: &waitingroom.Chance{Low: 0.9, High: 1}, SupplyEnds: previewEnds}},
	{Name: "queued_at_risk", About: "In line, the room knowing its supply: tickets may run out first",
		Status: waitingroom.Status{State: waitingroom.StateQueued, Position: &previewPlace, ETASeconds: &previewETA, Progress: .42, RefreshSeconds: 9,
			Outcome: waitingroom.OutcomeAtRisk, Chance: &waitingroom.Chance{Low: 0.3, High: 0.5}, SupplyEnds: previewEnds}},
	{Name: "queued_unlikely", About: "In line, the room knowing its supply: unlikely to get tickets, place kept",
		Status: waitingroom.Status{State: waitingroom.StateQueued, Position: &previewPlace, ETASeconds: &previewETA, Progress: .42, RefreshSeconds: 9,
			Outcome: waitingroom.OutcomeUnlikely, Chance: &waitingroom.Chance{Low: 0, High: 0.1}, SupplyEnds: previewSoldEnds}},
	{Name: "paused_at_risk", About: "In line while admissions are paused, the room knowing its supply",
		Status: waitingroom.Status{State: waitingroom.StatePaused, Position: &previewPlace, Progress: .42, RefreshSeconds: 13,
			Outcome: waitingroom.OutcomeAtRisk, Chance: &waitingroom.Chance{Low: 0.5, High: 0.7}, SupplyEnds: previewEnds}},
	{Name: "next", About: "First in line",
		Status: waitingroom.Status{State: waitingroom.StateQueued, Position: &previewNext, ETASeconds: &previewShortETA, Progress: .99, RefreshSeconds: 2}},
	{Name: "reconnecting", About: "In line while this node cannot reach the store: the place is kept",
		Status: waitingroom.Status{State: waitingroom.StateQueued, Position: &previewPlace, ETASeconds: &previewETA, Progress: .42, Reconnecting: true, RefreshSeconds: 9}},
	{Name: "paused", About: "In line while the operator has paused admissions",
		Status: waitingroom.Status{State: waitingroom.StatePaused, Position: &previewPlace, Progress: .42, RefreshSeconds: 13}},
	{Name: "queue_all", About: "In line while the room lets nobody in (queue_all)",
		Status: waitingroom.Status{State: waitingroom.StatePaused, QueueAll: true, Position: &previewPlace, Progress: .42, RefreshSeconds: 13}},
	{Name: "returned", About: "Back after a lapsed turn, waiting at the front for a free slot",
		Status: waitingroom.Status{State: waitingroom.StateQueued, Returned: true, Position: &previewNext, ETASeconds: &previewShortETA, Progress: .99, RefreshSeconds: 2}},
	{Name: "requeued", About: "Put back at the front after the site failed their session (the origin's retry, or requeue_on_origin_error)",
		Status: waitingroom.Status{State: waitingroom.StateQueued, Requeued: true, Position: &previewNext, ETASeconds: &previewShortETA, Progress: .99, RefreshSeconds: 2}},
	{Name: "paused_returned", About: "Back after a lapsed turn while admissions are paused",
		Status: waitingroom.Status{State: waitingroom.StatePaused, Returned: true, Position: &previewNext, Progress: .99, RefreshSeconds: 13}},
	{Name: "queue_all_returned", About: "Back after a lapsed turn while the room lets nobody in",
		Status: waitingroom.Status{State: waitingroom.StatePaused, Returned: true, QueueAll: true, Position: &previewNext, Progress: .99, RefreshSeconds: 13}},
	{Name: "leave_confirm", About: "\u201cLeave the line\u201d: asked to confirm", Page: previewLeaveConfirm},
	{Name: "left", About: "\u201cLeave the line\u201d: the place given up", Page: previewLeft},
	{Name: "admitted", About: "The fan's turn: the moment before the page takes them to the site",
		Status: waitingroom.Status{State: waitingroom.StateAdmitted, Progress: 1, RefreshSeconds: 1}},
	{Name: "unavailable", About: "A newcomer while the store is away (on_store_failure closed): 503", Unavailable: true,
		Status: waitingroom.Status{State: waitingroom.StateQueued}},
	{Name: "sold_out", About: "Sold out", Status: waitingroom.Status{State: waitingroom.StateSoldOut, RefreshSeconds: 60}},
	{Name: "waitlist", About: "Sold out, on the waitlist", Status: waitingroom.Status{State: waitingroom.StateWaitlist, Position: &previewPlace, RefreshSeconds: 13}},
	{Name: "closed", About: "Closed: the sale has ended, or the room takes nobody (reject)",
		Status: waitingroom.Status{State: waitingroom.StateClosed, RefreshSeconds: 60}},
}

// findPreviewState is the row of previewStates with the given name.
func findPreviewState(name string) (previewState, bool) {
	for _, ps := range previewStates {
		if ps.Name == name {
			return ps, true
		}
	}
	return previewState{}, false
}

// status is the state's synthetic status for a room under settings s at a
// time: the sample opening is the next whole hour at least an hour away.
func (ps previewState) status(h *Handler, s waitingroom.Settings, at time.Time) waitingroom.Status {
	st := ps.Status
	st.Room, st.Title = h.Room, s.Title
	if ps.Opens {
		opens := at.Add(time.Hour).Truncate(time.Hour).Add(time.Hour).UTC()
		st.OpensAt = &opens
	}
	if st.Challenge != nil {
		c := *st.Challenge
		if bits := s.Challenge.PoWBits; bits > 0 {
			c.Bits = bits
		}
		st.Challenge = &c
	}
	return st
}

// previews answers ?format=preview: the index of a room's previews, or one.
func (d *Dashboard) previews(w http.ResponseWriter, r *http.Request) error {
	q := r.URL.Query()
	id, ok := d.roomOf(q.Get("room"))
	if !ok {
		return writeError(w, http.StatusBadRequest, "room_required", "room: name the room to preview, such as ?format=preview&room=concert")
	}
	lr, found := d.rooms.findRoom(id)
	var h *Handler
	if found {
		lead, _ := lr.lead()
		h = d.handlerOf(lead)
	}
	if h == nil {
		return writeError(w, http.StatusNotFound, "unknown_room", "room: "+strconv.Quote(id)+" is not a live room on this node")
	}
	// The settings in effect now, or under the phase asked for
	// (docs/configuration.md, "Phases").
	s, phase := h.room.Settings(), q.Get("phase")
	if phase != "" {
		if s, ok = s.WithPhase(phase); !ok {
			return writeError(w, http.StatusNotFound, "unknown_phase", "phase: "+strconv.Quote(phase)+" is not a phase of the room; the index, ?format=preview&room="+id+", lists them")
		}
	}
	if !q.Has("state") {
		return previewIndex(w, h, s, phase)
	}
	ps, ok := findPreviewState(q.Get("state"))
	if !ok {
		return writeError(w, http.StatusNotFound, "unknown_state", "state: "+strconv.Quote(q.Get("state"))+" is not a state the dashboard previews; the index, ?format=preview&room="+id+", lists them")
	}
	l := h.langs.def()
	if code := q.Get("lang"); code != "" {
		if l = h.langs.match(code); l == nil {
			return writeError(w, http.StatusBadRequest, "unknown_language", "lang: the room does not offer "+strconv.Quote(code)+"; it offers "+strings.Join(langCodes(h.langs), ", "))
		}
	}
	body, err := h.previewBody(ps, s, l, r.URL)
	if err != nil {
		return caddyhttp.Error(http.StatusInternalServerError, err)
	}
	label := ps.Name
	if phase != "" {
		label += ", phase " + phase
	}
	return writeOperatorPage(w, withPreviewBanner(body, label, previewPhaseURL(id, phase, "", "")), previewPolicy)
}

// roomOf is the room a request names, or the node's only room when it names
// none.
func (d *Dashboard) roomOf(id string) (string, bool) {
	if id != "" {
		return id, true
	}
	if live := d.rooms(); len(live) == 1 {
		return live[0].id, true
	}
	return "", false
}

// previewBody renders a state's page as the room would under settings s
// for a fan reading language l, with u the preview's own address.
func (h *Handler) previewBody(ps previewState, s waitingroom.Settings, l *locale, u *url.URL) ([]byte, error) {
	var buf bytes.Buffer
	self := u.RequestURI()
	switch ps.Page {
	case previewSlowDown:
		buf.WriteString(slowDownPage(l, 30, self))
		return buf.Bytes(), nil
	case previewLeaveConfirm, previewLeft:
		err := leavePage.Execute(&buf, h.leaveData(l, self, ps.Page == previewLeaveConfirm))
		return buf.Bytes(), err
	}
	d := newPageData(ps.status(h, s, now()), h.prefix, ps.Unavailable, l)
	d.Preview = true
	d.Languages = h.langs.menu(u, l)
	d.CheckURL, d.AutoRefreshURL = self, self
	h.offerLeave(&d)
	h.offerCode(&d)
	if ps.Notice != "" {
		d.Notice = l.T(ps.Notice)
	}
	err := h.page.Execute(&buf, d)
	return buf.Bytes(), err
}

// previewURL is the address of a room's preview of a state in a language,
// relative to the dashboard's route; no state is the index.
func previewURL(room, state, lang string) string { return previewPhaseURL(room, "", state, lang) }

// previewPhaseURL is previewURL under a scheduled phase ("" for the settings
// in effect now).
func previewPhaseURL(room, phase, state, lang string) string {
	u := "?format=preview&room=" + url.QueryEscape(room)
	if phase != "" {
		u += "&phase=" + url.QueryEscape(phase)
	}
	if state != "" {
		u += "&state=" + url.QueryEscape(state)
	}
	if lang != "" {
		u += "&lang=" + url.QueryEscape(lang)
	}
	return u
}

// previewBanner marks a preview for the operator. It is no part of the fan's
// page: it is put in after the page's <body> tag, and says in English, like
// the dashboard, which state this is.
const previewBanner = `<aside aria-label="Preview" lang="en" dir="ltr" data-foyer-preview style="position:fixed;top:0;right:0;left:auto;width:max-content;z-index:2147483647;margin:0;padding:2px 10px;border-bottom-left-radius:8px;background:#1d1b18;color:#fff;font:600 13px/1.6 system-ui,sans-serif">Preview: %s · <a href="%s" style="color:#fff">every state</a></aside>`

// withPreviewBanner puts the banner in after the page's <body> tag, or
// first when a page of the operator's has none.
func withPreviewBanner(page []byte, state, index string) []byte {
	banner := fmt.Appendf(nil, previewBanner, template.HTMLEscapeString(state), template.HTMLEscapeString(index))
	at := 0
	lower := bytes.ToLower(page)
	if i := bytes.Index(lower, []byte("<body")); i >= 0 {
		if j := bytes.IndexByte(page[i:], '>'); j >= 0 {
			at = i + j + 1
		}
	}
	out := make([]byte, 0, len(page)+len(banner))
	out = append(out, page[:at]...)
	out = append(out, banner...)
	return append(out, page[at:]...)
}

// previewPolicy is the content security policy of a preview: whatever its
// page's script tries, it opens no connection (fetch, WebSocket, event
// stream), starts no worker (the proof of work) and posts no form (leaving
// the line); scripts and styles of the operator's page still run.
const previewPolicy = "connect-src 'none'; worker-src 'none'; form-action 'none'; frame-ancestors 'none'; base-uri 'none'"

// writeOperatorPage answers a page of the dashboard's: never stored, never
// indexed, under its own content security policy.
func writeOperatorPage(w http.ResponseWriter, body []byte, policy string) error {
	hdr := w.Header()
	hdr.Set("Content-Type", "text/html; charset=utf-8")
	hdr.Set("Cache-Control", "no-store")
	hdr.Set("X-Robots-Tag", "noindex")
	hdr.Set("Content-Security-Policy", policy)
	hdr.Set("X-Content-Type-Options", "nosniff")
	hdr.Set("Referrer-Policy", "no-referrer")
	hdr.Set("Content-Length", strconv.Itoa(len(body)))
	w.WriteHeader(http.StatusOK)
	_, err := w.Write(body)
	return err
}

// previewIndexData is what the index template is given.
type previewIndexData struct {
	Room, Nonce string
	// Phase is the scheduled phase the previews are under ("" for now),
	// Title the room's title then; Phases link the index under each.
	Phase, Title string
	Phases       []previewPhaseLink
	States       []previewLink
}

// previewPhaseLink is a scheduled phase of the room, linked to its previews.
type previewPhaseLink struct {
	Name, Start, End, URL string
}

type previewLink struct {
	Name, About, URL string
	Langs            []struct{ Code, URL string }
}

// previewIndexTemplate shares the dashboard page's head.
var previewIndexTemplate = template.Must(template.Must(dashTemplate.Clone()).New("previews").Parse(static.DashboardPreviews))

func previewIndex(w http.ResponseWriter, h *Handler, s waitingroom.Settings, phase string) error {
	var nonce [16]byte
	_, _ = rand.Read(nonce[:])
	p := previewIndexData{Room: h.Room, Nonce: base64.RawStdEncoding.EncodeToString(nonce[:]), Phase: phase, Title: s.Title}
	for _, ph := range s.Phases.List() {
		p.Phases = append(p.Phases, previewPhaseLink{Name: ph.Name, Start: rfc3339(ph.Start), End: rfc3339(ph.End), URL: previewPhaseURL(h.Room, ph.Name, "", "")})
	}
	codes := langCodes(h.langs)
	for _, ps := range previewStates {
		link := previewLink{Name: ps.Name, About: ps.About, URL: previewPhaseURL(h.Room, phase, ps.Name, "")}
		for _, c := range codes {
			link.Langs = append(link.Langs, struct{ Code, URL string }{c, previewPhaseURL(h.Room, phase, ps.Name, c)})
		}
		p.States = append(p.States, link)
	}
	var buf bytes.Buffer
	if err := previewIndexTemplate.Execute(&buf, p); err != nil {
		return caddyhttp.Error(http.StatusInternalServerError, err)
	}
	return writeOperatorPage(w, buf.Bytes(), "default-src 'none'; style-src 'nonce-"+p.Nonce+"'; img-src data:; base-uri 'none'; form-action 'none'; frame-ancestors 'none'")
}

// langCodes are the codes of the languages a room offers, its default first.
func langCodes(ls *langSet) []string {
	codes := make([]string, len(ls.locales))
	for i, l := range ls.locales {
		codes[i] = l.Code
	}
	return codes
}
