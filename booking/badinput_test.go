package booking_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"reflect"
	"strings"
	"testing"

	"github.com/foyer-dev/foyer/booking"
)

// TestBadInput says what every kind of bad input gets, endpoint by endpoint,
// and that none of it changes anything.
func TestBadInput(t *testing.T) {
	backends(t, func(t *testing.T, newStore func(*testing.T) booking.Store) {
		h := newHarness(t, newStore(t))
		id := h.createEvent(smallVenue())
		holds := fmt.Sprintf("/api/events/%d/holds", id)
		bigSeats := `{"seats":["` + strings.Repeat("A-1-1", 5000) + `"]}`
		auth := []string{"Authorization", "Bearer " + adminToken}
		cases := []struct {
			name     string
			method   string
			path     string
			customer string // "" sends no pass
			body     string
			headers  []string
			status   int
			code     string
		}{
			{"no pass", "POST", holds, "", `{"seats":["A-1-1"]}`, nil, 401, booking.CodeUnauthorized},
			{"garbage pass", "GET", "/api/events", "", "", []string{booking.PassHeader, "not.a.jwt"}, 401, booking.CodeUnauthorized},
			{"unknown event", "POST", fmt.Sprintf("/api/events/%d/holds", id+99), "fan", `{"seats":["A-1-1"]}`, nil, 404, booking.CodeEventNotFound},
			{"event id not a number", "POST", "/api/events/abc/holds", "fan", `{"seats":["A-1-1"]}`, nil, 404, booking.CodeEventNotFound},
			{"negative event id", "GET", "/api/events/-1", "fan", "", nil, 404, booking.CodeEventNotFound},
			{"unknown seat", "POST", holds, "fan", `{"seats":["A-9-9"]}`, nil, 404, booking.CodeSeatNotFound},
			{"unknown section in seat id", "POST", holds, "fan", `{"seats":["Q-1-1"]}`, nil, 404, booking.CodeSeatNotFound},
			{"malformed seat id", "POST", holds, "fan", `{"seats":["A-1"]}`, nil, 404, booking.CodeSeatNotFound},
			{"one unknown seat among good ones", "POST", holds, "fan", `{"seats":["A-1-1","A-1-99"]}`, nil, 404, booking.CodeSeatNotFound},
			{"seat listed twice", "POST", holds, "fan", `{"seats":["A-1-1","A-1-1"]}`, nil, 400, booking.CodeInvalidRequest},
			{"five seats", "POST", holds, "fan", `{"seats":["A-1-1","A-1-2","A-1-3","A-1-4","A-1-5"]}`, nil, 422, booking.CodeOverLimit},
			{"quantity 0", "POST", holds, "fan", `{"section":"A","quantity":0}`, nil, 400, booking.CodeInvalidRequest},
			{"quantity negative", "POST", holds, "fan", `{"zone":"FLOOR","quantity":-2}`, nil, 400, booking.CodeInvalidRequest},
			{"quantity 50", "POST", holds, "fan", `{"section":"A","quantity":50}`, nil, 422, booking.CodeOverLimit},
			{"quantity 50 in a zone", "POST", holds, "fan", `{"zone":"FLOOR","quantity":50}`, nil, 422, booking.CodeOverLimit},
			{"unknown section", "POST", holds, "fan", `{"section":"Q","quantity":1}`, nil, 404, booking.CodeSectionNotFound},
			{"unknown zone", "POST", holds, "fan", `{"zone":"ROOF","quantity":1}`, nil, 404, booking.CodeZoneNotFound},
			{"section and zone", "POST", holds, "fan", `{"section":"A","zone":"FLOOR","quantity":1}`, nil, 400, booking.CodeInvalidRequest},
			{"nothing asked", "POST", holds, "fan", `{}`, nil, 400, booking.CodeInvalidRequest},
			{"malformed JSON", "POST", holds, "fan", `{"seats":[`, nil, 400, booking.CodeInvalidJSON},
			{"not JSON", "POST", holds, "fan", `seats=A-1-1`, nil, 400, booking.CodeInvalidJSON},
			{"empty body", "POST", holds, "fan", ``, nil, 400, booking.CodeInvalidJSON},
			{"array body", "POST", holds, "fan", `[]`, nil, 400, booking.CodeInvalidJSON},
			{"two objects", "POST", holds, "fan", `{"section":"A","quantity":1}{}`, nil, 400, booking.CodeInvalidJSON},
			{"quantity as string", "POST", holds, "fan", `{"section":"A","quantity":"2"}`, nil, 400, booking.CodeInvalidJSON},
			{"quantity as float", "POST", holds, "fan", `{"section":"A","quantity":1.5}`, nil, 400, booking.CodeInvalidJSON},
			{"seats as string", "POST", holds, "fan", `{"seats":"A-1-1"}`, nil, 400, booking.CodeInvalidJSON},
			{"seat as number", "POST", holds, "fan", `{"seats":[11]}`, nil, 400, booking.CodeInvalidJSON},
			{"unknown field", "POST", holds, "fan", `{"seat":["A-1-1"]}`, nil, 400, booking.CodeInvalidJSON},
			{"customer in body", "POST", holds, "fan", `{"seats":["A-1-1"],"customer_id":"someone"}`, nil, 400, booking.CodeInvalidJSON},
			{"oversized body", "POST", holds, "fan", bigSeats, nil, 413, booking.CodeBodyTooLarge},
			{"idempotency key too long", "POST", holds, "fan", `{"seats":["A-1-1"]}`, []string{booking.IdempotencyHeader, strings.Repeat("k", 256)}, 400, booking.CodeInvalidRequest},
			{"unknown hold", "GET", "/api/holds/hold_aaaaaaaaaaaaaaaaaaaaaaaa", "fan", "", nil, 404, booking.CodeHoldNotFound},
			{"garbage hold id", "DELETE", "/api/holds/..%2f..%2fetc", "fan", "", nil, 404, booking.CodeHoldNotFound},
			{"checkout unknown hold", "POST", "/api/holds/hold_x/checkout", "fan", "", nil, 404, booking.CodeHoldNotFound},
			{"unknown order", "GET", "/api/orders/ord_aaaaaaaaaaaaaaaaaaaaaaaa", "fan", "", nil, 404, booking.CodeOrderNotFound},
			{"order link with no signature", "GET", "/api/tickets/ord_aaaaaaaaaaaaaaaaaaaaaaaa", "", "", nil, 404, booking.CodeInvalidOrderLink},
			{"order link with a forged signature", "GET", "/api/tickets/ord_aaaaaaaaaaaaaaaaaaaaaaaa.AAAAAAAAAAAAAAAAAAAAAA", "", "", nil, 404, booking.CodeInvalidOrderLink},
			{"order link of no order id", "GET", "/api/tickets/hold_aaaaaaaaaaaaaaaaaaaaaaaa.AAAAAAAAAAAAAAAAAAAAAA", "", "", nil, 404, booking.CodeInvalidOrderLink},
			{"order link of garbage", "GET", "/api/tickets/..%2f..%2fetc", "", "", nil, 404, booking.CodeInvalidOrderLink},
			{"seat map of unknown event", "GET", fmt.Sprintf("/api/events/%d/seats", id+99), "fan", "", nil, 404, booking.CodeEventNotFound},
			{"admin without token", "POST", "/api/admin/events", "", `{}`, nil, 401, booking.CodeUnauthorized},
			{"admin with a pass, not a token", "POST", "/api/admin/events", "fan", `{}`, nil, 401, booking.CodeUnauthorized},
			{"admin wrong token", "POST", "/api/admin/events", "", `{}`, []string{"Authorization", "Bearer guess"}, 401, booking.CodeUnauthorized},
			{"venue without rows", "POST", "/api/admin/events", "", `{"name":"x","starts_at":"2026-04-01T20:00:00Z","sections":[{"id":"A","rows":0,"seats_per_row":5,"price":"1.00"}]}`, auth, 400, booking.CodeInvalidRequest},
			{"venue price as number", "POST", "/api/admin/events", "", `{"name":"x","starts_at":"2026-04-01T20:00:00Z","zones":[{"id":"F","capacity":5,"price":80}]}`, auth, 400, booking.CodeInvalidJSON},
			{"venue bad date", "POST", "/api/admin/events", "", `{"name":"x","starts_at":"tomorrow","zones":[{"id":"F","capacity":5,"price":"8.00"}]}`, auth, 400, booking.CodeInvalidJSON},
			{"venue too big", "POST", "/api/admin/events", "", `{"name":"x","starts_at":"2026-04-01T20:00:00Z","sections":[{"id":"A","rows":200,"seats_per_row":200,"price":"1.00"},{"id":"B","rows":200,"seats_per_row":200,"price":"1.00"},{"id":"C","rows":200,"seats_per_row":200,"price":"1.00"},{"id":"D","rows":200,"seats_per_row":200,"price":"1.00"},{"id":"E","rows":200,"seats_per_row":200,"price":"1.00"},{"id":"F","rows":200,"seats_per_row":200,"price":"1.00"}]}`, auth, 400, booking.CodeInvalidRequest},
			{"venue body over 1 MiB", "POST", "/api/admin/events", "", `{"name":"` + strings.Repeat("x", 1<<20) + `"}`, auth, 413, booking.CodeBodyTooLarge},
			{"unsigned webhook", "POST", "/api/payments/webhook", "", `{"id":"evt_1","type":"payment_intent.succeeded"}`, nil, 400, booking.CodeInvalidSignature},
			{"oversized webhook", "POST", "/api/payments/webhook", "", strings.Repeat(" ", 70<<10), nil, 413, booking.CodeBodyTooLarge},
			{"unknown endpoint", "GET", "/api/nope", "fan", "", nil, 404, booking.CodeNotFound},
			{"wrong method", "PUT", "/api/events", "fan", "", nil, 405, "method_not_allowed"},
		}
		before := snapshot(t, h, id)
		for _, c := range cases {
			t.Run(c.name, func(t *testing.T) {
				r := h.req(c.method, c.path, c.customer, c.body, c.headers...)
				if r.status != c.status {
					t.Fatalf("status %d, want %d: %s", r.status, c.status, r.body)
				}
				if ct := r.header.Get("Content-Type"); ct != "application/json" {
					t.Fatalf("Content-Type %q: %s", ct, r.body)
				}
				var body struct {
					Error   string `json:"error"`
					Message string `json:"message"`
				}
				if err := json.Unmarshal(r.body, &body); err != nil || body.Error != c.code || body.Message == "" {
					t.Fatalf("body %s, want error %q with a message", r.body, c.code)
				}
			})
		}
		if after := snapshot(t, h, id); !reflect.DeepEqual(before, after) {
			t.Fatalf("bad input changed state:\nbefore %+v\nafter  %+v", before, after)
		}
		// The customer's cap is untouched: four seats are still theirs to take.
		h.req("POST", holds, "fan", map[string]any{"section": "A", "quantity": 4}).want(t, http.StatusCreated)
		h.checkInvariants()
	})
}

type state struct {
	events  int
	rows    []string
	zones   []booking.ZoneMap
	outbox  int
	tickets int
}

func snapshot(t *testing.T, h *harness, id int64) state {
	t.Helper()
	ctx := context.Background()
	evs, err := h.store.Events(ctx)
	if err != nil {
		t.Fatal(err)
	}
	e, _ := h.store.Event(ctx, id)
	seats, zones, err := h.store.Inventory(ctx, id, h.clock.Now())
	if err != nil {
		t.Fatal(err)
	}
	m := booking.BuildSeatMap(e, seats, zones, h.clock.Now())
	out, _ := h.store.PendingOutbox(ctx, 100)
	rep, _ := h.store.CheckInvariants(ctx)
	return state{events: len(evs), rows: m.Sections[0].Rows, zones: m.Zones, outbox: len(out), tickets: rep.Tickets}
}
