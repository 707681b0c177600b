package gateway

import (
	"html/template"
	"strings"
	"testing"
	"time"

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

// TestFairnessPageShowsTheSupplysCalibration: the fairness page of a room
// that knew its supply lists its estimates beside what happened, worded in
// every language; a room that never knew one shows no such section.
func TestFairnessPageShowsTheSupplysCalibration(t *testing.T) {
	at := supplyPreviewTime
	samples := []waitingroom.SupplySample{
		{N: 1, Units: 100, At: at, Claimed: 0, Waiting: 300},
		{N: 2, Units: 0, At: at.Add(time.Minute), Claimed: 40, Waiting: 260},
	}
	withPlaces := func() *waitingroom.SupplyCalibration {
		c := waitingroom.CalibrateSupply(samples, 45)
		c.Places = &waitingroom.PlacesTold{Told: 310, LetIn: 45, Likely: waitingroom.ToldLetIn{Told: 12, LetIn: 11},
			AtRisk: waitingroom.ToldLetIn{Told: 90, LetIn: 33}, Unlikely: waitingroom.ToldLetIn{Told: 273, LetIn: 1}}
		return c
	}
	rep := waitingroom.FairnessReport{Room: "concert", Reason: "sold_out", Supply: withPlaces()}
	for _, l := range allLanguages(t).locales {
		var b strings.Builder
		if err := fairnessPage.Execute(&b, newFairnessData(rep, l, nil)); err != nil {
			t.Fatalf("%s: %v", l.Code, err)
		}
		page := b.String()
		heading := template.HTMLEscapeString(l.T("fairness.supply"))
		if !strings.Contains(page, heading) || !strings.Contains(page, l.Uint(88)+" ("+l.Uint(28)+")") || strings.Contains(page, "{unlikely") {
			t.Errorf("%s: the page lacks the supply's estimates", l.Code)
		}
		// The count place by place, every figure in the language's digits.
		places := template.HTMLEscapeString(l.T("fairness.supply.places", "told", l.Uint(310), "unlikely_in", l.Uint(1),
			"unlikely", l.Uint(273), "likely_in", l.Uint(11), "likely", l.Uint(12)))
		if !strings.Contains(page, places) || strings.Contains(page, "{likely_in}") {
			t.Errorf("%s: the page lacks the count of places told", l.Code)
		}
		b.Reset()
		rep.Supply = nil
		if err := fairnessPage.Execute(&b, newFairnessData(rep, l, nil)); err != nil || strings.Contains(b.String(), heading+"</h2>") {
			t.Errorf("%s: a room without a supply shows its section (%v)", l.Code, err)
		}
		rep.Supply = withPlaces()
	}
}

var supplyPreviewTime = time.Date(2026, 6, 1, 20, 0, 0, 0, time.UTC)
