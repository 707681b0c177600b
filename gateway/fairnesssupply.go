package gateway

import "github.com/foyer-dev/foyer/waitingroom"

// The fairness page's account of the supply's estimates (docs/supply.md,
// "Calibration"): each estimate with the places told each outcome and, of
// them, how many were served, worded from the catalogs' fairness.supply.*
// keys.

// SupplyTotals says, over every estimate, how many places told unlikely were
// served and how many told likely were not.
func (d fairnessData) SupplyTotals() string {
	t := d.Supply.Totals
	return d.loc.T("fairness.supply.totals",
		"unlikely_served", d.loc.Uint(t.Unlikely.Served), "unlikely", d.loc.Uint(t.Unlikely.Told),
		"likely_unserved", d.loc.Uint(t.Likely.Told-t.Likely.Served), "likely", d.loc.Uint(t.Likely.Told))
}

// SupplyPlaces writes the count, place by place, of what fans were in fact
// told, and how many of them were let in.
func (d fairnessData) SupplyPlaces(p *waitingroom.PlacesTold) string {
	return d.loc.T("fairness.supply.places", "told", d.loc.Uint(p.Told),
		"unlikely_in", d.loc.Uint(p.Unlikely.LetIn), "unlikely", d.loc.Uint(p.Unlikely.Told),
		"likely_in", d.loc.Uint(p.Likely.LetIn), "likely", d.loc.Uint(p.Likely.Told))
}

// SupplyEnds writes where an estimate said the supply would run out.
func (d fairnessData) SupplyEnds(p waitingroom.SupplyEstimatePoint) string {
	return d.loc.T("fairness.range", "first", d.loc.Uint(p.Ends[0]), "last", d.loc.Uint(p.Ends[1]))
}

// SupplyTold writes an estimate's places told likely, at risk and unlikely,
// each with how many of them were served.
func (d fairnessData) SupplyTold(p waitingroom.SupplyEstimatePoint) string {
	s := ""
	for i, b := range []waitingroom.ToldServed{p.Told.Likely, p.Told.AtRisk, p.Told.Unlikely} {
		if i > 0 {
			s += " / "
		}
		s += d.loc.Uint(b.Told) + " (" + d.loc.Uint(b.Served) + ")"
	}
	return s
}
