package booking

import (
	"strings"
	"time"
)

// SeatState is one seat as the map shows it: Status is already effective, so a
// HELD seat whose hold has expired is reported AVAILABLE.
type SeatState struct {
	Section string
	Row     int
	Number  int
	Status  SeatStatus
}

// ZoneState is the occupancy of a general-admission zone.
type ZoneState struct {
	ID   string
	Held int
	Sold int
}

// Seat map row codes: one character per seat, so a 50,000-seat venue is a
// compact document a browser can draw without a second request.
const (
	rowCodeAvailable = 'a'
	rowCodeHeld      = 'h'
	rowCodeSold      = 's'
)

// SeatMap is the public picture of an event's inventory. It may be a second
// stale; it never decides anything.
type SeatMap struct {
	EventID     int64        `json:"event_id"`
	Capacity    int          `json:"capacity"`
	Available   int          `json:"available"`
	Held        int          `json:"held"`
	Sold        int          `json:"sold"`
	Sections    []SectionMap `json:"sections"`
	Zones       []ZoneMap    `json:"zones"`
	GeneratedAt time.Time    `json:"generated_at"`
}

// SectionMap is one section: Rows[i] describes row i+1, one character per
// seat from number 1: "a" available, "h" held, "s" sold.
type SectionMap struct {
	ID          string   `json:"id"`
	Price       Money    `json:"price"`
	SeatsPerRow int      `json:"seats_per_row"`
	Available   int      `json:"available"`
	Held        int      `json:"held"`
	Sold        int      `json:"sold"`
	Rows        []string `json:"rows"`
}

// ZoneMap is one general-admission zone.
type ZoneMap struct {
	ID        string `json:"id"`
	Price     Money  `json:"price"`
	Capacity  int    `json:"capacity"`
	Available int    `json:"available"`
	Held      int    `json:"held"`
	Sold      int    `json:"sold"`
}

// SoldOut reports whether every place is sold. Held places may still come
// back, so an event whose last seats are only held is not sold out.
func (m SeatMap) SoldOut() bool { return m.Capacity > 0 && m.Sold >= m.Capacity }

// BuildSeatMap assembles the public map from the store's raw states. Seats not
// listed are shown available.
func BuildSeatMap(e Event, seats []SeatState, zones []ZoneState, now time.Time) SeatMap {
	m := SeatMap{EventID: e.ID, Capacity: e.Capacity(), GeneratedAt: now.UTC()}
	index := map[string]int{}
	grid := make([][][]byte, len(e.Sections))
	for i, s := range e.Sections {
		index[s.ID] = i
		grid[i] = make([][]byte, s.Rows)
		for r := range grid[i] {
			grid[i][r] = []byte(strings.Repeat(string(rune(rowCodeAvailable)), s.SeatsPerRow))
		}
		m.Sections = append(m.Sections, SectionMap{ID: s.ID, Price: s.Price, SeatsPerRow: s.SeatsPerRow})
	}
	for _, st := range seats {
		i, ok := index[st.Section]
		if !ok || st.Row < 1 || st.Row > len(grid[i]) || st.Number < 1 || st.Number > len(grid[i][st.Row-1]) {
			continue
		}
		switch st.Status {
		case SeatHeld:
			grid[i][st.Row-1][st.Number-1] = rowCodeHeld
		case SeatSold:
			grid[i][st.Row-1][st.Number-1] = rowCodeSold
		}
	}
	for i := range m.Sections {
		sm := &m.Sections[i]
		for _, row := range grid[i] {
			for _, c := range row {
				switch c {
				case rowCodeHeld:
					sm.Held++
				case rowCodeSold:
					sm.Sold++
				default:
					sm.Available++
				}
			}
			sm.Rows = append(sm.Rows, string(row))
		}
		m.Available += sm.Available
		m.Held += sm.Held
		m.Sold += sm.Sold
	}
	byZone := map[string]ZoneState{}
	for _, z := range zones {
		byZone[z.ID] = z
	}
	for _, z := range e.Zones {
		st := byZone[z.ID]
		zm := ZoneMap{ID: z.ID, Price: z.Price, Capacity: z.Capacity, Held: st.Held, Sold: st.Sold}
		zm.Available = max(0, z.Capacity-st.Held-st.Sold)
		m.Zones = append(m.Zones, zm)
		m.Available += zm.Available
		m.Held += zm.Held
		m.Sold += zm.Sold
	}
	if m.Sections == nil {
		m.Sections = []SectionMap{}
	}
	if m.Zones == nil {
		m.Zones = []ZoneMap{}
	}
	return m
}
