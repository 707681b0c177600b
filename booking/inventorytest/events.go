package inventorytest

import (
	"testing"
	"time"

	"github.com/foyer-dev/foyer/booking"
)

func testEvents(t *testing.T, f *fixture) {
	later := SmallVenue()
	later.Name = "Later night"
	later.StartsAt = Epoch.Add(96 * time.Hour)
	e2 := f.event(later)
	e1 := f.event(SmallVenue())
	if e1.ID == e2.ID {
		t.Fatalf("two events share id %d", e1.ID)
	}
	got, err := f.s.Event(f.ctx, e1.ID)
	if err != nil {
		t.Fatal(err)
	}
	if got.Name != "Conformance night" || len(got.Sections) != 2 || got.Sections[0].ID != "A" ||
		got.Sections[1].Capacity() != 8 || got.Zones[0].Capacity != 10 || got.Capacity() != 18+8+10 ||
		got.Sections[0].Price != 10000 || !got.StartsAt.Equal(Epoch.Add(48*time.Hour)) || got.Currency != "EUR" {
		t.Fatalf("Event = %+v", got)
	}
	list, err := f.s.Events(f.ctx)
	if err != nil {
		t.Fatal(err)
	}
	if len(list) != 2 || list[0].ID != e1.ID || list[1].ID != e2.ID {
		t.Fatalf("Events not soonest first: %+v", list)
	}
	_, err = f.s.Event(f.ctx, e1.ID+e2.ID+100)
	wantErr(t, err, booking.KindNotFound, booking.CodeEventNotFound)

	m := f.seatMap(e1.ID, Epoch)
	if m.Available != 36 || m.Held != 0 || m.Sold != 0 || m.SoldOut() {
		t.Fatalf("fresh seat map = %+v", m)
	}
	if len(m.Sections[0].Rows) != 3 || m.Sections[0].Rows[2] != "aaaaaa" {
		t.Fatalf("section A rows = %q", m.Sections[0].Rows)
	}
}

func testInvalidVenue(t *testing.T, f *fixture) {
	bad := []func(*booking.EventSpec){
		func(s *booking.EventSpec) { s.Name = "" },
		func(s *booking.EventSpec) { s.StartsAt = time.Time{} },
		func(s *booking.EventSpec) { s.Sections, s.Zones = nil, nil },
		func(s *booking.EventSpec) { s.Sections[0].Rows = 0 },
		func(s *booking.EventSpec) { s.Sections[0].SeatsPerRow = 1000 },
		func(s *booking.EventSpec) { s.Sections[1].ID = "A" },
		func(s *booking.EventSpec) { s.Sections[0].ID = "A-1" },
		func(s *booking.EventSpec) { s.Zones[0].Capacity = 0 },
		func(s *booking.EventSpec) { s.Zones[0].ID = "B" },
		func(s *booking.EventSpec) { s.Currency = "euro" },
	}
	for i, mutate := range bad {
		spec := SmallVenue()
		mutate(&spec)
		_, err := f.s.CreateEvent(f.ctx, spec, Epoch)
		if booking.KindOf(err) != booking.KindInvalid {
			t.Errorf("case %d: CreateEvent error = %v, want invalid", i, err)
		}
	}
	list, err := f.s.Events(f.ctx)
	if err != nil {
		t.Fatal(err)
	}
	if len(list) != 0 {
		t.Fatalf("invalid venues left %d events behind", len(list))
	}
}
