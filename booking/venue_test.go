package booking_test

import (
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/foyer-dev/foyer/booking"
)

// TestVenueIDs says what a venue whose section and zone ids are bad or shared
// gets: an invalid_request naming the id at fault. Sections and zones share
// one space of ids, so a zone cannot take a section's.
func TestVenueIDs(t *testing.T) {
	section := func(id string) booking.SectionSpec {
		return booking.SectionSpec{ID: id, Rows: 1, SeatsPerRow: 1, Price: 100}
	}
	zone := func(id string) booking.ZoneSpec { return booking.ZoneSpec{ID: id, Capacity: 10, Price: 100} }
	cases := []struct {
		name     string
		sections []booking.SectionSpec
		zones    []booking.ZoneSpec
		want     string // "" is valid
	}{
		{"distinct ids", []booking.SectionSpec{section("A"), section("B")}, []booking.ZoneSpec{zone("FLOOR")}, ""},
		{"bad section id", []booking.SectionSpec{section("a")}, nil, "section id: "},
		{"bad zone id", nil, []booking.ZoneSpec{zone("floor-1")}, "zone id: "},
		{"two sections", []booking.SectionSpec{section("A"), section("A")}, nil, `id "A" is used twice`},
		{"two zones", nil, []booking.ZoneSpec{zone("F"), zone("F")}, `id "F" is used twice`},
		{"a zone with a section's id", []booking.SectionSpec{section("A")}, []booking.ZoneSpec{zone("A")}, `id "A" is used twice`},
	}
	for _, tc := range cases {
		spec := booking.EventSpec{Name: "Show", StartsAt: time.Date(2026, 12, 1, 20, 0, 0, 0, time.UTC), Sections: tc.sections, Zones: tc.zones}
		err := spec.Validate()
		if tc.want == "" {
			if err != nil {
				t.Errorf("%s: %v, want valid", tc.name, err)
			}
			continue
		}
		var be *booking.Error
		if !errors.As(err, &be) || be.Kind != booking.KindInvalid || be.Code != booking.CodeInvalidRequest || !strings.Contains(be.Message, tc.want) {
			t.Errorf("%s: %v, want an invalid_request saying %q", tc.name, err, tc.want)
		}
	}
}
