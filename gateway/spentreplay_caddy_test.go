package gateway

import (
	"net/http"
	"testing"
)

// TestCaddySpentTicketReplayIsJoinLimited: a ticket is spent once its
// session is claimed, and a spent ticket presented without its pass joins the
// visitor again at the back. An outsider who got in once keeps that ticket,
// drops the pass and replays the ticket from one address: each replay is a
// new place (here a new session, the room having spare slots), so it must
// weigh on the address's join_limit as a cookieless join does.
func TestCaddySpentTicketReplayIsJoinLimited(t *testing.T) {
	useTestClock(t)
	newCaddy(t, caddyConfig(t.TempDir(), `
	http://localhost:9080 {
		waiting_room {
			room spent-replay
			total_active_users   1000
			new_users_per_minute 1000
			join_limit 20/m burst 3
		}
		respond "origin"
	}`))
	p := newPeer(t, "127.0.0.6")
	req, _ := http.NewRequest(http.MethodGet, base+"/", nil)
	resp, err := p.client.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	ticket, pass := findCookie(resp, "foyer_ticket"), findCookie(resp, "foyer_pass")
	if ticket == nil || pass == nil {
		t.Fatalf("first visit: %d, want let straight in with a ticket and a pass", resp.StatusCode)
	}
	places, refused := 0, 0
	for range 10 {
		a := p.do(http.MethodGet, base+"/", "Accept", "application/json", "Cookie", "foyer_ticket="+ticket.Value)
		switch {
		case a.ticket:
			places++
		case a.code == http.StatusTooManyRequests:
			refused++
		}
	}
	if places != 2 || refused != 8 {
		t.Fatalf("10 replays of a spent ticket from one address: %d new places, %d refused; want the 2 left of the burst, then 429", places, refused)
	}
}
