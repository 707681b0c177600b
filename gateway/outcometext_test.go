package gateway

import (
	"strings"
	"testing"

	"github.com/foyer-dev/foyer/waitingroom"
)

// TestOutcomeWordedInEveryLanguage: a fan told their outcome reads it in
// plain words in every language, its chance as a range of percent and where
// the supply is estimated to end, with no placeholder left; a status without
// an outcome (the supply unknown) says nothing of it.
func TestOutcomeWordedInEveryLanguage(t *testing.T) {
	ends := &waitingroom.SupplyEnds{Low: 120, High: 480}
	ls := allLanguages(t)
	for _, l := range ls.locales {
		seen := map[string]bool{}
		for _, o := range []waitingroom.Outcome{waitingroom.OutcomeLikely, waitingroom.OutcomeAtRisk, waitingroom.OutcomeUnlikely} {
			st := waitingroom.Status{State: waitingroom.StateQueued, Outcome: o, Chance: &waitingroom.Chance{Low: 0.3, High: 0.5}, SupplyEnds: ends}
			s := outcomeText(st, l)
			if s == "" || strings.ContainsAny(s, "{}") || !strings.Contains(s, l.Uint(30)) || !strings.Contains(s, l.Uint(480)) {
				t.Errorf("%s %s: %q", l.Code, o, s)
			}
			if seen[s] {
				t.Errorf("%s: two outcomes read alike: %q", l.Code, s)
			}
			seen[s] = true
		}
		if s := outcomeText(waitingroom.Status{State: waitingroom.StateQueued}, l); s != "" {
			t.Errorf("%s without a supply: %q", l.Code, s)
		}
	}
	en := ls.locales[0]
	for _, l := range ls.locales {
		if l.Code == "en" {
			en = l
		}
	}
	st := waitingroom.Status{State: waitingroom.StateQueued, Outcome: waitingroom.OutcomeUnlikely, Chance: &waitingroom.Chance{Low: 0, High: 0.1}, SupplyEnds: &waitingroom.SupplyEnds{}}
	if got, want := outcomeText(st, en), "Tickets are unlikely to last until your turn (0–10% chance). You keep your place in line whatever happens."; got != want {
		t.Errorf("sold out, in English: %q, want %q", got, want)
	}
}
