package gateway

import (
	"fmt"
	"math"
	"strings"

	"github.com/foyer-dev/foyer/waitingroom"
)

// What fans read, state by state. The server's render of the waiting page and
// the live page's updates both come from this table and from pageViewOf, so a
// fan who reloads reads what the live page showed them (README, "What fans
// read").

// fanText is the wording and the shape of the page for one variant.
type fanText struct {
	Headline string
	// Lead is the first paragraph; "{when}" stands for the status's
	// OpensAt, written as a <time> element.
	Lead string
	// PositionLabel names the first figure; NoETA is the second figure when
	// there is no estimate.
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
	// A fan back from a lapsed turn waits at the front (see README, "What
	// fans, apps and origins see"); their page polls, each poll a claim.
	variantReturned         = "returned"
	variantPausedReturned   = "paused_returned"
	variantQueueAllReturned = "queue_all_returned"
	variantSoldOut          = "sold_out"
	variantClosed           = "closed"
	variantNotOpen          = "not_open"
	variantAdmitted         = "admitted"
	variantUnavailable      = "unavailable"
	// variantChallenge: a newcomer's browser answers the proof of work
	// (challenge pow) before it is given a place.
	variantChallenge = "challenge"
	// variantReconnecting is appended to a variant while the room cannot reach
	// its store.
	variantReconnecting = "+reconnecting"
)

const cantEstimate = "Can't estimate yet"

var fanTexts = map[string]fanText{
	variantQueued: {
		Headline:      "You're in line",
		Lead:          "Thanks for your patience. We let people in a few at a time so that the site stays fast for everyone.",
		PositionLabel: "People ahead of you", NoETA: cantEstimate,
		Figures: true, Progress: true, Determinate: true, KeepOpen: true, Live: true,
	},
	variantNext: {
		Headline:      "You're next",
		Lead:          "Nobody is ahead of you. You go in as soon as there is room for one more.",
		PositionLabel: "People ahead of you", NoETA: cantEstimate,
		Figures: true, Progress: true, Determinate: true, KeepOpen: true, Live: true,
	},
	variantAwaitingDraw: {
		Headline:      "You're in line",
		Lead:          "Places are given by a fair random draw: when the group ahead is in, everyone waiting, you included, is drawn into the next one. Arriving a moment earlier or later makes no difference.",
		PositionLabel: "People ahead of you", NoETA: cantEstimate,
		Figures: true, Progress: true, KeepOpen: true, Live: true,
	},
	variantRegistered: {
		Headline:      "You're registered",
		Lead:          "The sale starts at {when}. Everyone registered before then gets a place by a fair random draw, so there is no advantage in arriving early. Every tab of this browser shares your one place.",
		PositionLabel: "Place when the sale starts", NoETA: cantEstimate,
		Progress: true, KeepOpen: true, Live: true,
	},
	variantPrequeue: {
		Headline:      "You're registered",
		Lead:          "The sale starts at {when}. You keep your place in line until then.",
		PositionLabel: "Place when the sale starts", NoETA: cantEstimate,
		Figures: true, Progress: true, KeepOpen: true, Live: true,
	},
	variantPaused: {
		Headline:      "The line is paused",
		Lead:          "The sale is paused for a moment. You keep your place, and the line moves again as soon as it resumes.",
		PositionLabel: "People ahead of you", NoETA: "Paused",
		Figures: true, Progress: true, Determinate: true, KeepOpen: true, Live: true,
	},
	variantQueueAll: {
		Headline:      "You're in line",
		Lead:          "Nobody is being let in yet: everyone waits until entry opens, and keeps their place. The line starts moving as soon as it does.",
		PositionLabel: "People ahead of you", NoETA: "Not moving yet",
		Figures: true, Progress: true, Determinate: true, KeepOpen: true, Live: true,
	},
	variantReturned: {
		Headline:      "You're next",
		Lead:          "Your turn came while you were away. You are at the front of the line, and go in as soon as a place frees.",
		PositionLabel: "People ahead of you", NoETA: cantEstimate,
		Figures: true, Progress: true, Determinate: true, KeepOpen: true,
	},
	variantPausedReturned: {
		Headline:      "The line is paused",
		Lead:          "The sale is paused for a moment. Your turn came while you were away: you keep your place at the front, and go in first when it resumes.",
		PositionLabel: "People ahead of you", NoETA: "Paused",
		Figures: true, Progress: true, Determinate: true, KeepOpen: true,
	},
	variantQueueAllReturned: {
		Headline:      "You're next",
		Lead:          "Nobody is being let in yet. Your turn came while you were away: you keep your place at the front, and go in first when entry opens.",
		PositionLabel: "People ahead of you", NoETA: "Not moving yet",
		Figures: true, Progress: true, Determinate: true, KeepOpen: true,
	},
	variantSoldOut: {
		Headline: "Sold out",
		Lead:     "Every ticket has been sold. Thank you for waiting with us.",
	},
	variantClosed: {
		Headline: "This sale is closed",
		Lead:     "The sale is not taking new visitors.",
	},
	variantNotOpen: {
		Headline: "Not open yet",
		Lead:     "The line opens at {when}. This page will let you in when it does.",
		KeepOpen: true,
	},
	variantChallenge: {
		Headline: "One moment",
		Lead:     "Before you join the line, your browser solves a small puzzle that keeps bots out. It takes a second or two, and then you have your place.",
	},
	variantAdmitted: {
		Headline: "It's your turn",
		Lead:     "Taking you to the site…",
	},
	variantUnavailable: {
		Headline: "We're very busy right now",
		Lead:     "So many people are arriving that we could not give you a place in line just yet. This page will try again in a few seconds.",
	},
}

// reconnectingNotice is shown above the lead while the room cannot reach its
// store.
const reconnectingNotice = "Reconnecting… you keep your place in line."

// turnPassedNotice is said once, with the new place at the back given to a
// fan whose turn passed while they were away (the status's turn_passed).
const turnPassedNotice = "Your turn came while you were away and has passed, so you have a new place in line."

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
	// Once is a notice said with this update only (turnPassedNotice).
	Once string `json:"once,omitempty"`
}

// variantOf says which row of fanTexts a status reads as.
func variantOf(st waitingroom.Status, unavailable bool) string {
	switch {
	case unavailable:
		return variantUnavailable
	case st.State == waitingroom.StateQueued && st.AwaitingDraw:
		return variantAwaitingDraw
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
	case st.State == waitingroom.StateClosed && st.OpensAt != nil:
		return variantNotOpen
	case st.State == waitingroom.StateAdmitted:
		return variantAdmitted
	case st.State == waitingroom.StateChallenge:
		return variantChallenge
	}
	return variantClosed
}

// pageViewOf words a status's figures.
func pageViewOf(st waitingroom.Status, unavailable bool) (pageView, fanText) {
	variant := variantOf(st, unavailable)
	text := fanTexts[variant]
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
		v.Position = "in the next draw"
	case st.Position != nil:
		v.Position = formatCount(*st.Position)
	case variant == variantRegistered:
		v.Position = "drawn at start"
	}
	if st.ETASeconds != nil {
		v.ETA = formatETA(*st.ETASeconds)
	}
	if st.TurnPassed {
		v.Once = turnPassedNotice
	}
	return v, text
}

// formatETA words a wait. Under a minute is said only of a line that has
// moved within the last minute: the estimate is never shorter than the time
// the line has stood still (see waitingroom.Pace).
func formatETA(sec int64) string {
	if sec < 60 {
		return "under a minute"
	}
	minutes := int64(math.Round(float64(sec) / 60))
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

// leadOf writes a variant's lead, with the time in it as a <time> element.
func leadOf(text fanText, st waitingroom.Status) []any {
	before, after, ok := strings.Cut(text.Lead, "{when}")
	if !ok {
		return []any{text.Lead}
	}
	return []any{before, formatWhen(st.OpensAt), after}
}
