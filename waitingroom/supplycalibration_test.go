package waitingroom

import (
	"testing"
	"time"
)

// TestCalibrateSupply: the report refolds the samples and counts, for each
// estimate, the places waiting by the outcome told and how many of them were
// served before the supply ran out.
func TestCalibrateSupply(t *testing.T) {
	at := func(sec int) time.Time { return supplyT0.Add(time.Duration(sec) * time.Second) }
	samples := []SupplySample{
		{N: 1, Units: 100, At: at(0), Claimed: 0, Waiting: 300},
		{N: 2, Units: 0, At: at(60), Claimed: 40, Waiting: 260},
	}
	c := CalibrateSupply(samples, 45)
	if c == nil || len(c.Estimates) != 2 {
		t.Fatalf("calibration %+v", c)
	}
	if c.SoldOutAt == nil || !c.SoldOutAt.Equal(at(60)) || c.ServedUpTo != 40 {
		t.Fatalf("sold out at %v, served up to %d; want at 60 s, 40", c.SoldOutAt, c.ServedUpTo)
	}
	// The prior (1 to 8 units a fan) with 100 units: likely up to claim 12,
	// at risk up to 100, unlikely beyond; the line reached claim 40.
	first := c.Estimates[0]
	want := SupplyTold{Likely: ToldServed{12, 12}, AtRisk: ToldServed{88, 28}, Unlikely: ToldServed{200, 0}}
	if first.Told != want || first.Ends != [2]uint64{12, 100} {
		t.Fatalf("first estimate told %+v, ends %v; want %+v, [12 100]", first.Told, first.Ends, want)
	}
	// Sold out: everyone waiting was told unlikely, and nobody more served.
	second := c.Estimates[1]
	if second.Told != (SupplyTold{Unlikely: ToldServed{260, 0}}) {
		t.Fatalf("second estimate told %+v", second.Told)
	}
	if c.Totals.Unlikely.Told != 460 || c.Totals.AtRisk.Served != 28 {
		t.Fatalf("totals %+v", c.Totals)
	}
	if CalibrateSupply(nil, 10) != nil {
		t.Fatal("a room that never knew its supply publishes a calibration")
	}
}
