package booking

import (
	"fmt"
	"strconv"
	"strings"
	"time"
)

// Limits on a venue description. They keep one request from allocating an
// unbounded seat table and keep seat ids short and unambiguous.
const (
	MaxRowsPerSection  = 200
	MaxSeatsPerRow     = 200
	MaxZoneCapacity    = 1_000_000
	MaxSeatsPerEvent   = 200_000
	MaxSectionsOrZones = 100
)

// EventSpec is the venue description an admin posts to create an event.
type EventSpec struct {
	Name     string        `json:"name"`
	StartsAt time.Time     `json:"starts_at"`
	Currency string        `json:"currency,omitempty"`
	Sections []SectionSpec `json:"sections"`
	Zones    []ZoneSpec    `json:"zones"`
}

// SectionSpec describes a block of reserved seats: the fields of the Section
// it becomes.
type SectionSpec Section

// ZoneSpec describes a general-admission area: the fields of the Zone it
// becomes.
type ZoneSpec Zone

// Validate checks the description and fills defaults. It returns a KindInvalid
// error naming the first problem.
func (s *EventSpec) Validate() error {
	bad := func(format string, args ...any) error {
		return Errorf(KindInvalid, CodeInvalidRequest, format, args...)
	}
	s.Name = strings.TrimSpace(s.Name)
	if s.Name == "" || len(s.Name) > 200 {
		return bad("name must be 1 to 200 characters")
	}
	if s.StartsAt.IsZero() {
		return bad("starts_at is required (RFC 3339)")
	}
	if s.Currency == "" {
		s.Currency = "EUR"
	}
	if len(s.Currency) != 3 || strings.ToUpper(s.Currency) != s.Currency || !isAlnum(s.Currency) {
		return bad("currency must be a three-letter ISO 4217 code")
	}
	if len(s.Sections)+len(s.Zones) == 0 {
		return bad("a venue needs at least one section or zone")
	}
	if len(s.Sections)+len(s.Zones) > MaxSectionsOrZones {
		return bad("a venue has at most %d sections and zones", MaxSectionsOrZones)
	}
	// Sections and zones share one space of ids.
	seen := map[string]bool{}
	useID := func(kind, id string) error {
		if err := validID(id); err != nil {
			return bad("%s id: %v", kind, err)
		}
		if seen[id] {
			return bad("id %q is used twice", id)
		}
		seen[id] = true
		return nil
	}
	total := 0
	for _, sec := range s.Sections {
		if err := useID("section", sec.ID); err != nil {
			return err
		}
		if sec.Rows < 1 || sec.Rows > MaxRowsPerSection {
			return bad("section %s: rows must be 1 to %d", sec.ID, MaxRowsPerSection)
		}
		if sec.SeatsPerRow < 1 || sec.SeatsPerRow > MaxSeatsPerRow {
			return bad("section %s: seats_per_row must be 1 to %d", sec.ID, MaxSeatsPerRow)
		}
		if sec.Price < 0 {
			return bad("section %s: price must not be negative", sec.ID)
		}
		total += sec.Rows * sec.SeatsPerRow
	}
	if total > MaxSeatsPerEvent {
		return bad("a venue has at most %d reserved seats", MaxSeatsPerEvent)
	}
	for _, z := range s.Zones {
		if err := useID("zone", z.ID); err != nil {
			return err
		}
		if z.Capacity < 1 || z.Capacity > MaxZoneCapacity {
			return bad("zone %s: capacity must be 1 to %d", z.ID, MaxZoneCapacity)
		}
		if z.Price < 0 {
			return bad("zone %s: price must not be negative", z.ID)
		}
	}
	return nil
}

// validID accepts short upper-case ids without '-', which separates the parts
// of a seat id.
func validID(id string) error {
	if id == "" || len(id) > 16 {
		return fmt.Errorf("%q must be 1 to 16 characters", id)
	}
	if !isAlnum(id) || strings.ToUpper(id) != id {
		return fmt.Errorf("%q must use only A-Z, 0-9 and _", id)
	}
	return nil
}

func isAlnum(s string) bool {
	for _, r := range s {
		if !(r >= 'A' && r <= 'Z' || r >= 'a' && r <= 'z' || r >= '0' && r <= '9' || r == '_') {
			return false
		}
	}
	return true
}

// SeatID names a seat: section, row and number, rows and seats from 1.
func SeatID(section string, row, number int) string {
	return section + "-" + strconv.Itoa(row) + "-" + strconv.Itoa(number)
}

// ParseSeatID splits a seat id. It reports false for anything that is not
// exactly <section>-<row>-<number> with positive decimal numbers.
func ParseSeatID(id string) (section string, row, number int, ok bool) {
	parts := strings.Split(id, "-")
	if len(parts) != 3 || validID(parts[0]) != nil {
		return "", 0, 0, false
	}
	row, err1 := strconv.Atoi(parts[1])
	number, err2 := strconv.Atoi(parts[2])
	if err1 != nil || err2 != nil || row < 1 || number < 1 ||
		strconv.Itoa(row) != parts[1] || strconv.Itoa(number) != parts[2] {
		return "", 0, 0, false
	}
	return parts[0], row, number, true
}

// Event builds the event a spec describes, with the id the store chose.
func (s EventSpec) Event(id int64, createdAt time.Time) Event {
	e := Event{ID: id, Name: s.Name, StartsAt: s.StartsAt.UTC(), Currency: s.Currency, CreatedAt: createdAt.UTC()}
	e.Sections = make([]Section, 0, len(s.Sections))
	for _, sec := range s.Sections {
		e.Sections = append(e.Sections, Section(sec))
	}
	e.Zones = make([]Zone, 0, len(s.Zones))
	for _, z := range s.Zones {
		e.Zones = append(e.Zones, Zone(z))
	}
	return e
}

// DemoEventSpec is the concert `make run` seeds: three seated sections and a
// standing floor.
func DemoEventSpec(now time.Time) EventSpec {
	return EventSpec{
		Name:     "Foyer Live: The Opening Night",
		StartsAt: now.Add(30 * 24 * time.Hour).Truncate(time.Hour),
		Currency: "EUR",
		Sections: []SectionSpec{
			{ID: "A", Rows: 8, SeatsPerRow: 16, Price: 12000},
			{ID: "B", Rows: 10, SeatsPerRow: 20, Price: 8500},
			{ID: "C", Rows: 12, SeatsPerRow: 24, Price: 5500},
		},
		Zones: []ZoneSpec{{ID: "FLOOR", Capacity: 500, Price: 7000}},
	}
}
