package gateway

import (
	"math"
	"strings"

	"github.com/foyer-dev/foyer/waitingroom"
)

// What fans read, state by state. The server's render of the waiting page and
// the live page's updates both come from fanShapes, worded in the fan's
// language from the message catalogs (language.go, package i18n), and from
// pageViewOf, so a fan who reloads reads what the live page showed them
// (docs/waiting-page.md, "What fans read").

// fanText is the wording and the shape of the page for one variant.
type fanText struct {
	Headline string
	// Lead is the first paragraph; "{when}" stands for the status's
	// OpensAt, written as a <time> element.
	Lead string
	// PositionLabel names the first figure; NoETA is the second figure when
	// there is no estimate. In fanShapes they are catalog keys.
	PositionLabel string
	NoETA         string
	// Figures shows the place and the wait; Progress the bar, Determinate
	// with a width (else it only says something is happening).
	Figures, Progress, Determinate bool
	// KeepOpen tells the fan that the page lets them in by itself; Live opens
	// a live connection (only a fan holding a ticket has a place to follow).
	KeepOpen, Live bool
}

// Variants of the page. A change of variant reloads the live page; within
// one, only the figures change.
const (
	variantQueued       = "queued"
	variantNext         = "next"
	variantAwaitingDraw = "awaiting_draw"
	variantRegistered   = "registered"
	variantPrequeue     = "prequeue"
	variantPaused       = "paused"
	variantQueueAll     = "queue_all"
	// A fan back from a lapsed turn waits at the front (see docs/line.md, "Coming
	// back after a lapsed turn"); their page polls, each poll a claim.
	variantReturned         = "returned"
	variantPausedReturned   = "paused_returned"
	variantQueueAllReturned = "queue_all_returned"
	// A fan whose session the site failed waits first at the front
	// (docs/PROTOCOL.md, "Requeue").
	variantRequeued    = "requeued"
	variantSoldOut     = "sold_out"
	variantWaitlist    = "waitlist" // sold out, the fan told their number on the waitlist (docs/waitlist.md)
	variantClosed      = "closed"
	variantNotOpen     = "not_open"
	variantAdmitted    = "admitted"
	variantUnavailable = "unavailable"
	// variantChallenge: a newcomer's browser answers the proof of work
	// (challenge pow) before it is given a place.
	variantChallenge = "challenge"
	// variantCodeRequired: the room gives places to code holders only
	// (codes_required) and the fan sent no code, or one refused: the page
	// asks for one (docs/codes.md); variantCodeRequiredOpens also says
	// when the sale opens to everyone.
	variantCodeRequired      = "code_required"
	variantCodeRequiredOpens = "code_required_opens"
	// variantCodeRetry: a code refused in a room that takes fans without
	// one too: the page asks for it again, or offers the line without.
	variantCodeRetry = "code_retry"
	// variantReconnecting is appended to a variant while the room cannot reach
	// its store.
	variantReconnecting = "+reconnecting"
)

// fanShapes are the variants' shapes; the words of each are the catalog's
// <variant>.headline and <variant>.lead, and its figures' labels the keys
// named here. newLocale words them once per language.
var fanShapes = map[string]fanText{
	variantQueued:            {PositionLabel: "figure.ahead", NoETA: "eta.unknown", Figures: true, Progress: true, Determinate: true, KeepOpen: true, Live: true},
	variantNext:              {PositionLabel: "figure.ahead", NoETA: "eta.unknown", Figures: true, Progress: true, Determinate: true, KeepOpen: true, Live: true},
	variantAwaitingDraw:      {PositionLabel: "figure.ahead", NoETA: "eta.unknown", Figures: true, Progress: true, KeepOpen: true, Live: true},
	variantRegistered:        {PositionLabel: "figure.place_at_start", NoETA: "eta.unknown", Progress: true, KeepOpen: true, Live: true},
	variantPrequeue:          {PositionLabel: "figure.place_at_start", NoETA: "eta.unknown", Figures: true, Progress: true, KeepOpen: true, Live: true},
	variantPaused:            {PositionLabel: "figure.ahead", NoETA: "eta.paused", Figures: true, Progress: true, Determinate: true, KeepOpen: true, Live: true},
	variantQueueAll:          {PositionLabel: "figure.ahead", NoETA: "eta.not_moving", Figures: true, Progress: true, Determinate: true, KeepOpen: true, Live: true},
	variantReturned:          {PositionLabel: "figure.ahead", NoETA: "eta.unknown", Figures: true, Progress: true, Determinate: true, KeepOpen: true},
	variantPausedReturned:    {PositionLabel: "figure.ahead", NoETA: "eta.paused", Figures: true, Progress: true, Determinate: true, KeepOpen: true},
	variantQueueAllReturned:  {PositionLabel: "figure.ahead", NoETA: "eta.not_moving", Figures: true, Progress: true, Determinate: true, KeepOpen: true},
	variantRequeued:          {PositionLabel: "figure.ahead", NoETA: "eta.unknown", Figures: true, Progress: true, Determinate: true, KeepOpen: true},
	variantSoldOut:           {},
	variantWaitlist:          {PositionLabel: "figure.waitlist_number", NoETA: "eta.waitlist", Figures: true, KeepOpen: true, Live: true},
	variantClosed:            {},
	variantNotOpen:           {KeepOpen: true},
	variantChallenge:         {},
	variantCodeRequired:      {},
	variantCodeRequiredOpens: {},
	variantCodeRetry:         {},
	variantAdmitted:          {},
	variantUnavailable:       {},
}

// pageView is what changes on the page as a fan waits: the server renders it,
// and sends it with each live update so that the page shows the same words
// without wording anything itself.
type pageView struct {
	// Variant names the row of fanTexts, with variantReconnecting appended
	// while the store is away. The live page reloads when it changes.
	Variant  string `json:"variant"`
	Headline string `json:"headline"`
	Position string `json:"position"`
	ETA      string `json:"eta"`
	// Progress is the bar's width in percent.
	Progress int `json:"progress"`
	// Once is a notice said with this update only (notice.turn_passed).
	Once string `json:"once,omitempty"`
	// Outcome is what the fan is told of their chance of getting tickets,
	// in plain words (outcometext.go); "" while the room knows no supply.
	Outcome string `json:"outcome,omitempty"`
}

// variantOf says which row of fanTexts a status reads as.
func variantOf(st waitingroom.Status, unavailable bool) string {
	switch {
	case unavailable:
		return variantUnavailable
	case st.State == waitingroom.StateQueued && st.AwaitingDraw:
		return variantAwaitingDraw
	case st.State == waitingroom.StateQueued && st.Requeued:
		return variantRequeued
	case st.State == waitingroom.StateQueued && st.Returned:
		return variantReturned
	case st.State == waitingroom.StatePaused && st.Returned && st.QueueAll:
		return variantQueueAllReturned
	case st.State == waitingroom.StatePaused && st.Returned:
		return variantPausedReturned
	case st.State == waitingroom.StateQueued && st.Position != nil && *st.Position == 0:
		return variantNext
	case st.State == waitingroom.StateQueued:
		return variantQueued
	case st.State == waitingroom.StatePrequeue && st.Position == nil:
		return variantRegistered
	case st.State == waitingroom.StatePrequeue:
		return variantPrequeue
	case st.State == waitingroom.StatePaused && st.QueueAll:
		return variantQueueAll
	case st.State == waitingroom.StatePaused:
		return variantPaused
	case st.State == waitingroom.StateSoldOut:
		return variantSoldOut
	case st.State == waitingroom.StateWaitlist:
		return variantWaitlist
	case st.State == waitingroom.StateClosed && st.OpensAt != nil:
		return variantNotOpen
	case st.State == waitingroom.StateAdmitted:
		return variantAdmitted
	case st.State == waitingroom.StateChallenge:
		return variantChallenge
	case st.State == waitingroom.StateCodeRequired && st.CodeOptional:
		return variantCodeRetry
	case st.State == waitingroom.StateCodeRequired && st.OpensAt != nil:
		return variantCodeRequiredOpens
	case st.State == waitingroom.StateCodeRequired:
		return variantCodeRequired
	}
	return variantClosed
}

// pageViewOf words a status's figures in a language.
func pageViewOf(st waitingroom.Status, unavailable bool, l *locale) (pageView, fanText) {
	variant := variantOf(st, unavailable)
	text := l.texts[variant]
	v := pageView{
		Variant:  variant,
		Headline: text.Headline,
		ETA:      text.NoETA,
		Progress: int(math.Floor(st.Progress * 100)),
	}
	if st.Reconnecting && !unavailable {
		v.Variant += variantReconnecting
	}
	switch {
	case st.AwaitingDraw:
		v.Position = l.T("position.next_draw")
	case st.Position != nil && variant == variantWaitlist:
		// The fan's number on the waitlist: the people ahead, and them.
		v.Position = l.Uint(*st.Position + 1)
	case st.Position != nil:
		v.Position = l.Uint(*st.Position)
	case variant == variantRegistered:
		v.Position = l.T("position.drawn_at_start")
	}
	if st.ETASeconds != nil {
		v.ETA = formatETA(*st.ETASeconds, l)
	}
	if st.TurnPassed {
		v.Once = l.T("notice.turn_passed")
	}
	v.Outcome = outcomeText(st, l)
	return v, text
}

// formatETA words a wait. Under a minute is said only of a line that has
// moved within the last minute: the estimate is never shorter than the time
// the line has stood still (see waitingroom.Pace).
func formatETA(sec int64, l *locale) string {
	if sec < 60 {
		return l.T("eta.under_minute")
	}
	minutes := uint64(math.Round(float64(sec) / 60))
	if minutes < 60 {
		return l.Count("eta.minutes", minutes)
	}
	h, m := minutes/60, minutes%60
	if m == 0 {
		return l.T("eta.hours", "h", l.Uint(h))
	}
	return l.T("eta.hours_minutes", "h", l.Uint(h), "m", l.Uint(m))
}

// leadOf writes a variant's lead, with the time in it as a <time> element.
func leadOf(text fanText, st waitingroom.Status, l *locale) []any {
	before, after, ok := strings.Cut(text.Lead, "{when}")
	if !ok {
		return []any{text.Lead}
	}
	return []any{before, formatWhen(st.OpensAt, l), after}
}
