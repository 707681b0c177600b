package gateway

import (
	"fmt"
	"math"
	"strconv"
	"time"

	"github.com/foyer-dev/foyer/waitingroom"
)

// dashPayload is what the dashboard shows: the page renders it, its JSON
// twin and its live stream send it. Figures are worded here, once, so that
// the page as loaded and the page as updated read the same; the history is
// numbers, for the charts.
type dashPayload struct {
	Node  string     `json:"node"`
	At    time.Time  `json:"at"`
	Rooms []dashRoom `json:"rooms"`
}

// dashRoom is one room: its figures for people, the same as numbers, this
// node's figures, and the samples newer than what the viewer already has.
type dashRoom struct {
	Room    string          `json:"room"`
	Title   string          `json:"title"`
	Healthy bool            `json:"store_healthy"`
	Figures []dashFigure    `json:"figures"`
	NodeFig []dashFigure    `json:"node_figures"`
	Values  dashRoomNumbers `json:"values"`
	History []dashSample    `json:"history"`
}

// dashFigure is one labelled figure as the page shows it.
type dashFigure struct {
	Key   string `json:"key"`
	Label string `json:"label"`
	Text  string `json:"text"`
}

// dashRoomNumbers are the figures as numbers, for scripts that read the
// JSON rather than people.
type dashRoomNumbers struct {
	State                string    `json:"state"`
	Waiting              uint64    `json:"waiting"`
	Places               uint64    `json:"places"`
	Skipped              uint64    `json:"skipped"`
	IdledOut             uint64    `json:"idled_out"`
	Active               int       `json:"active"`
	Pending              int       `json:"pending"`
	Cap                  int       `json:"total_active_users"`
	RatePerMinute        int       `json:"new_users_per_minute"`
	ServingRatePerMinute *float64  `json:"serving_rate_per_minute"`
	LastInLineETASeconds *int64    `json:"last_in_line_eta_seconds"`
	Node                 nodeStats `json:"node"`
	RevocationsUnsent    int       `json:"revocations_unsent"`
	// CurrentPhase and NextPhase are the scheduled phases in force and
	// next (docs/configuration.md, "Phases"), left out when none.
	CurrentPhase *phaseView `json:"current_phase,omitempty"`
	NextPhase    *phaseView `json:"next_phase,omitempty"`
}

// newDashRoom reads a live room from this node's view: no store call.
func newDashRoom(lr liveRoom, at time.Time, history []dashSample) dashRoom {
	_, in := lr.lead()
	n := lr.stats()
	unsent := lr.unsent()
	v := newRoomView(in, n)
	state := roomState(in, at)
	nums := dashRoomNumbers{
		State: state, Waiting: in.Waiting, Places: in.Places, Skipped: in.Snapshot.Skipped, IdledOut: in.Snapshot.IdledOut,
		Active: in.Snapshot.Active, Pending: in.Snapshot.Pending,
		Cap: in.Settings.TotalActiveUsers, RatePerMinute: in.Settings.NewUsersPerMinute,
		ServingRatePerMinute: v.ServingRatePerMinute, LastInLineETASeconds: v.LastInLineETASeconds,
		Node: n, RevocationsUnsent: unsent,
		CurrentPhase: v.CurrentPhase, NextPhase: v.NextPhase,
	}
	if history == nil {
		history = []dashSample{}
	}
	return dashRoom{
		Room:    lr.id,
		Title:   in.Settings.Title,
		Healthy: in.Healthy,
		Values:  nums,
		History: history,
		Figures: []dashFigure{
			{"state", "State", stateText[state]},
			{"waiting", "Waiting", formatCount(in.Waiting)},
			{"places", "Places in line, ghosts included", formatCount(in.Places)},
			{"skipped", "Ghost places skipped", formatCount(in.Snapshot.Skipped)},
			{"idled_out", "Sessions idled out", formatCount(in.Snapshot.IdledOut)},
			{"active", "Active", formatCount(uint64(in.Snapshot.Active)) + " of " + formatCount(uint64(in.Settings.TotalActiveUsers))},
			{"pending", "Admitted, not yet in", formatCount(uint64(in.Snapshot.Pending))},
			{"rate", "Admission rate", rateText(v.ServingRatePerMinute, in.Settings.NewUsersPerMinute)},
			{"eta", "Wait of the last in line", lastInLineText(in.Places, v.LastInLineETASeconds)},
			{"store", "Store", storeText(in, at)},
			{"phase", "Phase", phaseText(v.CurrentPhase, v.NextPhase)},
		},
		NodeFig: []dashFigure{
			{"joins", "Joins", formatCount(n.Joins)},
			{"direct_admits", "Let straight in", formatCount(n.DirectAdmits)},
			{"polls", "Status answers", formatCount(n.Polls)},
			{"claims", "Sessions opened", formatCount(n.Claims)},
			{"revokes", "Sessions ended by the origin", formatCount(n.Revokes)},
			{"passes_rejected", "Passes refused", formatCount(n.PassesRejected)},
			{"store_errors", "Store errors", formatCount(n.StoreErrors)},
			{"reseeds", "Store re-seeded", formatCount(n.Reseeds)},
			{"revocations_unsent", "Revocations not yet stored", strconv.Itoa(unsent)},
		},
	}
}

// roomState names what the room is doing, the way an operator thinks of it:
// the runtime switches first, then the schedule.
func roomState(in waitingroom.Info, at time.Time) string {
	s := in.Settings
	switch {
	case in.Snapshot.SettleUntil.After(at):
		return "settling"
	case s.SoldOut && s.Waitlist:
		return "waitlist"
	case s.SoldOut:
		return "sold_out"
	case s.QueueingMethod == waitingroom.Reject:
		return "closed"
	case in.Phase == waitingroom.Ended:
		return "ended"
	case in.Phase == waitingroom.NotYetOpen:
		return "not_yet_open"
	case in.Phase == waitingroom.Prequeue:
		return "prequeue"
	case s.Paused:
		return "paused"
	case s.QueueAll:
		return "queue_all"
	case s.QueueingMethod == waitingroom.Passthrough:
		return "passthrough"
	}
	return "admitting"
}

var stateText = map[string]string{
	"settling":     "settling after a loss of the store",
	"sold_out":     "sold out",
	"waitlist":     "sold out, the line a waitlist",
	"closed":       "closed (reject)",
	"ended":        "ended",
	"not_yet_open": "not open yet",
	"prequeue":     "pre-queue",
	"paused":       "paused",
	"queue_all":    "queue all: nobody admitted",
	"passthrough":  "passthrough: everyone let in",
	"admitting":    "admitting",
}

// phaseText words the scheduled phase in force and the next one.
func phaseText(cur, next *phaseView) string {
	if cur == nil && next == nil {
		return "none scheduled"
	}
	return describePhases(cur, next)
}

func rateText(measured *float64, set int) string {
	if measured == nil {
		return "measuring (set " + formatCount(uint64(set)) + " / min)"
	}
	return formatCount(uint64(math.Round(*measured))) + " / min (set " + formatCount(uint64(set)) + ")"
}

// lastInLineText words the wait of the last in line; an empty line has
// nobody last in it, and its wait of 0 s is not shown as one.
func lastInLineText(places uint64, sec *int64) string {
	if places == 0 {
		return "nobody is waiting"
	}
	return etaText(sec)
}

// etaText words a wait for an operator: precise, unlike the fan's page.
func etaText(sec *int64) string {
	if sec == nil {
		return "not moving"
	}
	d := time.Duration(*sec) * time.Second
	switch {
	case d < time.Minute:
		return fmt.Sprintf("%d s", *sec)
	case d < time.Hour:
		return fmt.Sprintf("%d min %d s", *sec/60, *sec%60)
	}
	return fmt.Sprintf("%d h %d min", *sec/3600, *sec%3600/60)
}

func storeText(in waitingroom.Info, at time.Time) string {
	if in.At.IsZero() {
		return "UNREACHABLE (never answered this node)"
	}
	age := max(0, at.Sub(in.At)).Round(100 * time.Millisecond)
	if in.Healthy {
		return "reachable (view " + age.String() + " old)"
	}
	return "UNREACHABLE (last view " + age.String() + " old)"
}
