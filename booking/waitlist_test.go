package booking_test

import (
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/foyer-dev/foyer/booking"
	"github.com/foyer-dev/foyer/booking/memstore"
	"github.com/foyer-dev/foyer/waitingroom/pass"
)

// TestWaitlistHoldsReturnedPlaces: with Waitlist on, once an event had no
// place left, a place that comes back (a released or expired hold) can be
// held only with a pass that says its holder was let in from the waitlist;
// a pass without the claim gets 409 waitlist_only and the supply, and every
// answer about holds reports the supply, expiries included.
func TestWaitlistHoldsReturnedPlaces(t *testing.T) {
	h := newHarness(t, memstore.New())
	mux := http.NewServeMux()
	mux.Handle("/api/", booking.NewAPI(booking.APIConfig{
		Service: h.svc, AdminToken: adminToken, Waitlist: true,
		Auth: booking.NewStaticPasses(keysOf(h.key), "onsale", h.clock),
	}))
	h.srv = httptest.NewServer(mux)
	t.Cleanup(h.srv.Close)
	id := h.createEvent(map[string]any{
		"name": "Small night", "starts_at": "2026-04-01T20:00:00Z",
		"zones": []map[string]any{{"id": "FLOOR", "capacity": 2, "price": "80.00"}},
	})
	holds := "/api/events/" + itoa(id) + "/holds"
	floor := map[string]any{"zone": "FLOOR", "quantity": 1}

	// Before the sell-out anyone admitted holds.
	r := h.req("POST", holds, "alice", map[string]any{"zone": "FLOOR", "quantity": 2}).want(t, http.StatusCreated)
	if got := r.header.Get(booking.SupplyHeader); got != "0" {
		t.Fatalf("supply after the last places were held: %q, want 0", got)
	}
	var hold struct {
		ID string `json:"id"`
	}
	r.decode(t, &hold)
	r = h.req("DELETE", "/api/holds/"+hold.ID, "alice", nil).want(t, http.StatusOK)
	if got := r.header.Get(booking.SupplyHeader); got != "2" {
		t.Fatalf("supply after a release: %q, want 2", got)
	}

	// A fan let in before the sell-out, or without the claim: refused.
	r = h.req("POST", holds, "bob", floor).want(t, http.StatusConflict)
	if m := r.json(t); m["error"] != booking.CodeWaitlistOnly {
		t.Fatalf("hold without the waitlist claim: %s, want code %s", r.body, booking.CodeWaitlistOnly)
	}
	if got := r.header.Get(booking.SupplyHeader); got != "2" {
		t.Fatalf("supply on the refusal: %q, want 2", got)
	}

	// A fan let in from the waitlist holds a place that came back.
	r = h.waitlistReq("POST", holds, "carol", floor).want(t, http.StatusCreated)
	if got := r.header.Get(booking.SupplyHeader); got != "1" {
		t.Fatalf("supply after the waitlist's hold: %q, want 1", got)
	}
	// The hold expires: the next answer reports the place back.
	h.clock.Advance(6 * time.Minute)
	r = h.waitlistReq("POST", holds, "dave", map[string]any{"zone": "FLOOR", "quantity": 2}).want(t, http.StatusCreated)
	if got := r.header.Get(booking.SupplyHeader); got != "0" {
		t.Fatalf("supply after carol's hold expired and dave held both: %q, want 0", got)
	}
}

// waitlistReq is req with a pass carrying the waitlist claim.
func (h *harness) waitlistReq(method, path, customer string, body any) response {
	h.t.Helper()
	now := h.clock.Now()
	tok, err := h.key.Sign(pass.Claims{Room: "onsale", Subject: customer, IssuedAt: now, ExpiresAt: now.Add(time.Hour), Waitlist: true}, pass.DefaultIssuer)
	if err != nil {
		h.t.Fatal(err)
	}
	return h.req(method, path, "", body, booking.PassHeader, tok)
}
