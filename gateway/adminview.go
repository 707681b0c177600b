package gateway

import (
	"math"
	"time"

	"github.com/foyer-dev/foyer/waitingroom"
)

// roomView is how the admin API shows a room: what is in force, what the store
// counts, and what this node saw. Durations read like the Caddyfile ("10m"),
// times are RFC 3339.
type roomView struct {
	Room string `json:"room"`
	// Phase is where the schedule stands: not_yet_open, prequeue, live or ended.
	Phase     string `json:"phase"`
	Admitting bool   `json:"admitting"`
	// StoreHealthy is false while this node cannot reach the room's store.
	StoreHealthy bool      `json:"store_healthy"`
	AsOf         time.Time `json:"as_of"`

	Settings         settingsView   `json:"settings"`
	Overrides        map[string]any `json:"overrides"`
	OverridesVersion int64          `json:"overrides_version"`

	Counters  waitingroom.Counters `json:"counters"`
	Active    int                  `json:"active"`
	Pending   int                  `json:"pending"`
	Returning int                  `json:"returning"`
	// Waiting is the live line: the people waiting, ghosts left out.
	// Places is the raw line: every place not yet reached, ghosts included.
	Waiting uint64 `json:"waiting"`
	Places  uint64 `json:"places"`
	// ServingRatePerMinute is the measured admission rate over the last
	// minute; null until the node has watched the line long enough.
	ServingRatePerMinute *float64 `json:"serving_rate_per_minute"`
	// LastInLineETASeconds is the expected wait of whoever joined last; null
	// while the line does not move.
	LastInLineETASeconds *int64 `json:"last_in_line_eta_seconds"`
	// CurrentPhase is the scheduled phase in force, NextPhase the next to
	// start (docs/configuration.md, "Phases"); left out when none.
	CurrentPhase *phaseView `json:"current_phase,omitempty"`
	NextPhase    *phaseView `json:"next_phase,omitempty"`
	// SettlingUntil is set while a room re-created after a loss of its store
	// holds newcomers, the line re-announcing itself.
	SettlingUntil *time.Time `json:"settling_until,omitempty"`

	Node nodeStats `json:"node"`
}

func newRoomView(in waitingroom.Info, node nodeStats) roomView {
	v := roomView{
		Room:             in.Room,
		Phase:            in.Phase.String(),
		Admitting:        in.Admitting,
		StoreHealthy:     in.Healthy,
		AsOf:             in.At.UTC().Truncate(time.Millisecond),
		Settings:         settingsView{in.Settings},
		Overrides:        overridesView(in.Overrides),
		OverridesVersion: in.Version,
		Counters:         in.Snapshot.Counters,
		Active:           in.Snapshot.Active,
		Pending:          in.Snapshot.Pending,
		Returning:        in.Snapshot.Returning,
		Waiting:          in.Waiting,
		Places:           in.Places,
		Node:             node,
	}
	v.CurrentPhase, v.NextPhase = newPhaseView(in.CurrentPhase), newPhaseView(in.NextPhase)
	if until := in.Snapshot.SettleUntil; until.After(in.At) {
		u := until.UTC()
		v.SettlingUntil = &u
	}
	if in.RateMeasured {
		perMin := math.Round(in.ServingRate*60*10) / 10
		v.ServingRatePerMinute = &perMin
	}
	if in.LastETA != nil {
		sec := int64(in.LastETA.Seconds())
		v.LastInLineETASeconds = &sec
	}
	return v
}

// phaseView is a scheduled phase as the admin API shows it: its name and
// times (its settings are in the room's settings, under phases).
type phaseView struct {
	Name  string    `json:"name"`
	Start time.Time `json:"start"`
	End   time.Time `json:"end"`
	// PrequeueStart and ShuffleAtStart are the phase's own pre-queue,
	// when it has one (docs/configuration.md, "Phases").
	PrequeueStart  *time.Time `json:"prequeue_start,omitempty"`
	ShuffleAtStart bool       `json:"shuffle_at_start,omitempty"`
}

func newPhaseView(p *waitingroom.ScheduledPhase) *phaseView {
	if p == nil {
		return nil
	}
	v := &phaseView{Name: p.Name, Start: p.Start.UTC(), End: p.End.UTC(), ShuffleAtStart: p.ShuffleAtStart}
	if !p.PrequeueStart.IsZero() {
		opens := p.PrequeueStart.UTC()
		v.PrequeueStart = &opens
	}
	return v
}

// shortDuration writes d as the Caddyfile would: "10m" rather than "10m0s".
var shortDuration = waitingroom.ShortDuration

func rfc3339(t time.Time) string {
	if t.IsZero() {
		return ""
	}
	return t.UTC().Format(time.RFC3339Nano)
}
