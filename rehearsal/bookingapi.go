package rehearsal

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"time"
)

// eventSpec is the venue: sections of up to 20 rows of 50 seats, sized so
// that together they hold about seats places, and an optional standing zone
// taken out of that total.
func eventSpec(seats, standing int) (map[string]any, int) {
	seated := seats - standing
	var sections []map[string]any
	total := standing
	if seated > 0 {
		n := min(50, max(1, (seated+999)/1000))
		per := (seated + n - 1) / n
		perRow := min(50, per)
		rows := (per + perRow - 1) / perRow
		for i := range n {
			sections = append(sections, map[string]any{
				"id": sectionName(i), "rows": rows, "seats_per_row": perRow, "price": fmt.Sprintf("%d.00", 40+10*(i%8)),
			})
			total += rows * perRow
		}
	}
	spec := map[string]any{
		"name":      "On-sale rehearsal",
		"starts_at": time.Now().Add(30 * 24 * time.Hour).UTC().Format(time.RFC3339),
		"sections":  sections,
		"zones":     []map[string]any{},
	}
	if standing > 0 {
		spec["zones"] = []map[string]any{{"id": "FLOOR", "capacity": standing, "price": "35.00"}}
	}
	return spec, total
}

// sectionName is A, B, ... Z, then AA, AB, ...
func sectionName(i int) string {
	if i < 26 {
		return string(rune('A' + i))
	}
	return sectionName(i/26-1) + string(rune('A'+i%26))
}

// createEvent posts the venue to the booking service's admin API, directly:
// the admin API is the operator's, not the fans'.
func (s *stack) createEvent(client *http.Client, seats, standing int) (id int64, capacity int, err error) {
	spec, _ := eventSpec(seats, standing)
	body, _ := json.Marshal(spec)
	req, _ := http.NewRequest(http.MethodPost, s.bookingURL+"/api/admin/events", bytes.NewReader(body))
	req.Header.Set("Authorization", "Bearer "+s.adminToken)
	req.Header.Set("Content-Type", "application/json")
	resp, err := client.Do(req)
	if err != nil {
		return 0, 0, err
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(io.LimitReader(resp.Body, 1<<20))
	if resp.StatusCode != http.StatusCreated {
		return 0, 0, fmt.Errorf("creating the event: %s: %s", resp.Status, b)
	}
	var out struct {
		ID    int64 `json:"id"`
		Event struct {
			Sections []struct {
				Rows        int `json:"rows"`
				SeatsPerRow int `json:"seats_per_row"`
			} `json:"sections"`
			Zones []struct {
				Capacity int `json:"capacity"`
			} `json:"zones"`
		} `json:"event"`
	}
	if err := json.Unmarshal(b, &out); err != nil {
		return 0, 0, fmt.Errorf("creating the event: %w", err)
	}
	for _, sec := range out.Event.Sections {
		capacity += sec.Rows * sec.SeatsPerRow
	}
	for _, z := range out.Event.Zones {
		capacity += z.Capacity
	}
	return out.ID, capacity, nil
}

// invariants is the booking service's own proof, GET /api/admin/invariants.
type invariants struct {
	OK     bool `json:"ok"`
	Report struct {
		Events     int      `json:"events"`
		Seats      int      `json:"seats"`
		Tickets    int      `json:"tickets"`
		Violations []string `json:"violations"`
	} `json:"report"`
}

func (s *stack) invariants(client *http.Client) (invariants, error) {
	var inv invariants
	req, _ := http.NewRequest(http.MethodGet, s.bookingURL+"/api/admin/invariants", nil)
	req.Header.Set("Authorization", "Bearer "+s.adminToken)
	resp, err := client.Do(req)
	if err != nil {
		return inv, err
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(io.LimitReader(resp.Body, 16<<20))
	// A failed invariant is answered 500 with the report: read it either way.
	if err := json.Unmarshal(b, &inv); err != nil {
		return inv, fmt.Errorf("invariants: %s: %s", resp.Status, b)
	}
	return inv, nil
}

// roomCounters is what the room's store counted, from Caddy's admin API.
type roomCounters struct {
	Counters struct {
		Seq       uint64 `json:"seq"`
		Serving   uint64 `json:"serving"`
		Admitted  uint64 `json:"admitted"`
		Claimed   uint64 `json:"claimed"`
		Abandoned uint64 `json:"abandoned"`
		Skipped   uint64 `json:"skipped"`
		Requeued  uint64 `json:"requeued"`
	} `json:"counters"`
	Places   uint64 `json:"places"`
	Active   int    `json:"active"`
	Pending  int    `json:"pending"`
	Waiting  uint64 `json:"waiting"`
	Settings struct {
		SoldOut bool `json:"sold_out"`
	} `json:"settings"`
	Node struct {
		Joins        uint64 `json:"joins"`
		DirectAdmits uint64 `json:"direct_admits"`
		Polls        uint64 `json:"polls"`
		Claims       uint64 `json:"claims"`
		Rejected     uint64 `json:"passes_rejected"`
		Revokes      uint64 `json:"revokes"`
		StoreErrors  uint64 `json:"store_errors"`
	} `json:"node"`
}

func (s *stack) room(client *http.Client) (roomCounters, error) {
	var rc roomCounters
	return rc, getJSON(client, s.caddyAdmin+"/waiting-room/"+rehearsalRoom, "room counters", 1<<20, &rc)
}

// getJSON reads the JSON answer to a GET of url into v, at most limit
// bytes of it; an answer other than 200 is an error naming what was asked.
func getJSON(client *http.Client, url, what string, limit int64, v any) error {
	req, err := http.NewRequest(http.MethodGet, url, nil)
	if err != nil {
		return err
	}
	req.Header.Set("Accept", "application/json")
	resp, err := client.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		b, _ := io.ReadAll(io.LimitReader(resp.Body, 4<<10))
		return fmt.Errorf("%s: %s: %s", what, resp.Status, b)
	}
	return json.NewDecoder(io.LimitReader(resp.Body, limit)).Decode(v)
}
