package gateway

import (
	"net/http"
	"testing"
)

// TestCaddySpentTicketReplayIsJoinLimited: a claimed ticket presented without
// its pass, while its session is live, gets that session's pass again and no
// new place, however often it is sent (docs/ARCHITECTURE.md, "The admission
// state machine"). Once the session is over the ticket is spent: an outsider
// who got in once keeps it, drops the pass and replays it from one address,
// and each replay is a new place, so it weighs on the address's join_limit as
// a cookieless join does.
func TestCaddySpentTicketReplayIsJoinLimited(t *testing.T) {
	clock := useTestClock(t)
	newCaddy(t, caddyConfig(t.TempDir(), `
	http://localhost:9080 {
		waiting_room {
			room spent-replay
			total_active_users   1000
			new_users_per_minute 1000
			session_duration     1m
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
	for i := range 10 {
		a := p.do(http.MethodGet, base+"/", "Accept", "application/json", "Cookie", "foyer_ticket="+ticket.Value)
		if a.code != http.StatusOK || a.body != "origin" || !a.pass || a.ticket {
			t.Fatalf("replay %d of a claimed ticket while its session is live: %d %q (pass %v, ticket %v), want the origin with its session's pass again and no new ticket",
				i, a.code, a.body, a.pass, a.ticket)
		}
	}
	clock.step(t, 61) // the session is over: the ticket is spent
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
	if places != 3 || refused != 7 {
		t.Fatalf("10 replays of a spent ticket from one address: %d new places, %d refused; want a full burst of 3, then 429", places, refused)
	}
}
