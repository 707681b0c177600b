package gateway

import (
	"testing"

	"github.com/foyer-dev/foyer/waitingroom"
)

// TestPollSetsTheTicketOnlyWhenItChanged: a fan whose place has not moved
// gets their status with no Set-Cookie, and keeps the ticket they hold; a
// newcomer gets one, and so does a garbled cookie's holder.
func TestPollSetsTheTicketOnlyWhenItChanged(t *testing.T) {
	h := testHandler(t, Handler{Settings: waitingroom.Settings{QueueAll: true}}, nil)
	first := serve(h, &origin{}, get("/_waiting-room/status"))
	ticket := cookieFrom(first, "foyer_ticket")
	if ticket == nil {
		t.Fatal("a newcomer got no ticket")
	}
	// The first poll shows a position for the first time: sealed again.
	second := serve(h, &origin{}, get("/_waiting-room/status", ticket))
	if c := cookieFrom(second, "foyer_ticket"); c != nil {
		ticket = c
	}
	for i := range 3 {
		rec := serve(h, &origin{}, get("/_waiting-room/status", ticket))
		if rec.Code != 200 {
			t.Fatalf("poll %d: %d %s", i, rec.Code, rec.Body)
		}
		if c := cookieFrom(rec, "foyer_ticket"); c != nil {
			t.Fatalf("poll %d of a fan who has not moved set the ticket again: %s", i, c.Value)
		}
	}
	garbled := *ticket
	garbled.Value = "x" + garbled.Value[1:]
	if c := cookieFrom(serve(h, &origin{}, get("/_waiting-room/status", &garbled)), "foyer_ticket"); c == nil {
		t.Fatal("a garbled ticket's holder, joined afresh, got no ticket")
	}
}
