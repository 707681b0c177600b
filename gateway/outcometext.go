package gateway

import (
	"math"

	"github.com/foyer-dev/foyer/waitingroom"
)

// outcomeKeys are the catalog keys of what a fan is told of their chance of
// getting tickets, once the room knows its supply (docs/supply.md).
var outcomeKeys = map[waitingroom.Outcome]string{
	waitingroom.OutcomeLikely:   "outcome.likely",
	waitingroom.OutcomeAtRisk:   "outcome.at_risk",
	waitingroom.OutcomeUnlikely: "outcome.unlikely",
}

// outcomeText words a status's outcome in plain words, with its chance as a
// range of percent and where the supply is estimated to run out; "" when
// the status tells none.
func outcomeText(st waitingroom.Status, l *locale) string {
	key, ok := outcomeKeys[st.Outcome]
	if !ok || st.Chance == nil {
		return ""
	}
	pct := func(p float64) string { return l.Uint(uint64(math.Round(p * 100))) }
	s := l.T(key, "chance", l.T("outcome.chance", "low", pct(st.Chance.Low), "high", pct(st.Chance.High)))
	if e := st.SupplyEnds; e != nil && e.High > 0 {
		s += " " + l.T("outcome.ends", "low", l.Uint(e.Low), "high", l.Uint(e.High))
	}
	return s
}
