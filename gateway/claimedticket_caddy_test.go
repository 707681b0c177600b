package gateway

import (
	"fmt"
	"strings"
	"testing"

	"github.com/foyer-dev/foyer/waitingroom"
)

// A fan has one session (docs/endpoints.md, "What fans, apps and origins see"): a claim
// while it is live returns it, with its end, so whoever holds the fan's ticket
// gets a pass of that session, the same jti and exp. The ticket a fan holds
// once admitted is marked claimed; sent again without the pass (a browser that
// lost the pass cookie, an app that keeps only the ticket, a copy), it must
// still name that one session: not a new place at the back, and not a new
// session beside the first, or a room at 600 a minute hands one client as
// many sessions as it asks for. With the account block the same holds per
// account (docs/configuration.md, "The account block"): one place, and so one session.

// claimedRoomConfig is an open room (600 a minute, 50 at once) in front of an
// origin that echoes the pass it was given; extra adds lines to the
// waiting_room block.
func claimedRoomConfig(storage, room, store, extra string) string {
	return caddyConfig(storage, fmt.Sprintf(`
	http://localhost:9080 {
		waiting_room {
			room %s
			%s
			total_active_users 50
			new_users_per_minute 600
			%s
		}
		reverse_proxy 127.0.0.1:9081
	}
	:9081 {
		bind 127.0.0.1
		respond "origin pass={http.request.header.X-Waiting-Room-Pass}" 200
	}`, room, store, extra))
}

// claimedCap is total_active_users above.
const claimedCap = 50

// ticketOnly lists the one cookie a fan sends in these tests: the latest
// ticket the room set.
var ticketOnly = []string{"foyer_ticket"}

// againWay is one way a fan comes back with their ticket and no pass.
type againWay struct {
	name string
	// pow runs the room with a proof of work for newcomers (a few hundred
	// hashes: challenge pow 8).
	pow bool
	// needsPass says the answer must carry a pass: the page, the status and
	// join hand one to a fan whose session is live. A WebSocket only
	// pushes a status: it may refuse a claimed ticket, or tell the fan
	// they are in, and either way makes no place and no session.
	needsPass bool
	// again sends the ticket alone and says what came back.
	again func(c *fanClient) try
}

// try is what one return of the fan brought: the pass the answer set (or the
// origin was given), what the answer was, for the failure message, the
// position it showed, if it told the fan to wait, and whether the answer is
// wrong whatever pass it carried.
type try struct {
	pass, got string
	position  *uint64
	wrong     bool
}

// statusTry is a try by the status endpoint, sending the cookies named.
func statusTry(c *fanClient, send ...string) try {
	st, rep := c.status(send...)
	tr := try{pass: rep.pass, got: "status " + string(st.State)}
	if st.State != waitingroom.StateAdmitted {
		tr.got += " position " + position(st)
		tr.position = st.Position
	}
	return tr
}

var againWays = []againWay{
	{name: "status", needsPass: true, again: func(c *fanClient) try { return statusTry(c, ticketOnly...) }},
	{name: "page", needsPass: true, again: func(c *fanClient) try {
		rep := c.page("/events/1", ticketOnly...)
		if tok := originPassOf(rep.body); tok != "" {
			return try{pass: tok, got: "the origin"}
		}
		if isWaitingPage(rep.body) {
			return try{pass: rep.pass, got: "the waiting page"}
		}
		return try{pass: rep.pass, got: fmt.Sprintf("%d %.80q", rep.code, rep.body)}
	}},
	{name: "websocket", again: func(c *fanClient) try {
		refused, st := c.liveSocket(ticketOnly...)
		if refused != 0 {
			return try{got: fmt.Sprintf("ws refused %d", refused)}
		}
		return try{got: "ws pushed " + string(st.State), wrong: st.State != waitingroom.StateAdmitted}
	}},
	{name: "status with pow", pow: true, needsPass: true, again: func(c *fanClient) try { return statusTry(c, ticketOnly...) }},
	{name: "join with pow", pow: true, needsPass: true, again: func(c *fanClient) try {
		// The fan answers a puzzle of its address, asked for without any
		// cookie as a newcomer's page would, and posts it with the ticket.
		seed, nonce := c.solveChallenge()
		rep := c.join(seed, nonce, ticketOnly...)
		return try{pass: rep.pass, got: fmt.Sprintf("join %d", rep.code)}
	}},
}

// TestClaimedTicketWithoutPassGetsItsOwnSession: a fan walks into an open
// room and holds a claimed ticket and a pass. They then come back five
// times, one second apart, sending only the latest ticket the room set, by
// each of the room's ways in: the status, the page, the WebSocket, and with a
// proof of work on, the status and POST join with a right answer. Each answer
// must be a pass of the fan's one session (same sub, jti and exp), and the
// room must make no place (seq and waiting stay) and no session (one live).
func TestClaimedTicketWithoutPassGetsItsOwnSession(t *testing.T) {
	for _, store := range admissionStores {
		for _, way := range againWays {
			t.Run(store+"/"+way.name, func(t *testing.T) {
				clock := useTestClock(t)
				room := uniqueRoom(t, "claimed")
				extra := ""
				if way.pow {
					extra = "challenge pow 8"
				}
				newCaddy(t, claimedRoomConfig(t.TempDir(), room, storeLineFor(t, store, room), extra))

				fan := newFanClient(t)
				first := walkInto(t, fan, way.pow)
				if tk := openTicket(t, room, fan.cookies["foyer_ticket"]); !tk.Claimed {
					t.Fatalf("the admitted fan's ticket is not marked claimed: %+v", tk)
				}
				checkOneSessionPerTry(t, clock, room, fan, first, 1, ticketOnly, way)
			})
		}
	}
}

// walkInto lets a fan into an open room with nobody waiting, by the page,
// or by answering the puzzle when pow is on, and returns the pass they were
// given.
func walkInto(t *testing.T, fan *fanClient, pow bool) passSeen {
	t.Helper()
	var rep clientReply
	if pow {
		seed, nonce := fan.solveChallenge()
		rep = fan.join(seed, nonce)
	} else {
		rep = fan.page("/events/1")
	}
	if rep.ticket == "" || rep.pass == "" {
		t.Fatalf("a fan walking into an open room with nobody waiting: %d %.200q, want a ticket and a pass", rep.code, rep.body)
	}
	return readPass(t, rep.pass)
}

// checkOneSessionPerTry has the fan come back five times, one second apart,
// by way, sending only the cookies named in send. Each answer must give the
// pass of the session the fan holds (first), or, for a way that gives none,
// no wrong answer; and the room must neither make a place (seq and the line
// stay where they were) nor open a session (live sessions stay live, the
// fan's one among them).
func checkOneSessionPerTry(t *testing.T, clock *testClock, room string, fan *fanClient, first passSeen, live int, send []string, way againWay) {
	t.Helper()
	start := clock.Now()
	clock.step(t, 1)
	before := figures(t, room)
	if before.Active != live {
		t.Fatalf("before the fan comes back: %d sessions live, want %d", before.Active, live)
	}
	var tries []string
	wrong := false
	var shown *uint64
	for i := 1; i <= 5; i++ {
		tr := way.again(fan)
		if fan.cookies["foyer_ticket"] == "" {
			t.Fatalf("try %d (%s) left the fan without a ticket", i, tr.got)
		}
		clock.step(t, 1)
		now := figures(t, room)
		note := fmt.Sprintf("try %d: %s", i, tr.got)
		switch {
		case tr.pass != "":
			p := readPass(t, tr.pass)
			note += ", pass " + p.describe(start)
			wrong = wrong || !p.sameSession(first)
		case way.needsPass:
			note += ", no pass"
			wrong = true
		}
		note += fmt.Sprintf("; seq %d, waiting %d, sessions live %d", now.Counters.Seq, now.Waiting, now.Active)
		wrong = wrong || tr.wrong || now.Counters.Seq != before.Counters.Seq || now.Waiting > before.Waiting || now.Active != live
		// A fan told to wait is never told a higher position next time.
		if tr.position != nil {
			if shown != nil && *tr.position > *shown {
				t.Errorf("try %d: position %d after %d", i, *tr.position, *shown)
			}
			shown = tr.position
		}
		tries = append(tries, note)
	}
	if wrong {
		t.Errorf("the fan's claimed ticket sent %s without the pass (%s), 5 times: want each time a pass of the session it holds (%s), no new place (seq %d, waiting %d), sessions live: %d; got:\n\t%s",
			strings.Join(send, " and "), way.name, first.describe(start), before.Counters.Seq, before.Waiting, live, strings.Join(tries, "\n\t"))
	}
	if end := figures(t, room); end.Active > claimedCap || end.Active != live {
		t.Errorf("at the end: %d sessions live (cap %d), want %d, the fan's one session among them", end.Active, claimedCap, live)
	}
}

// TestAccountHoldsOneSessionWhateverTicketItSends: with the account block,
// an account holds one place and so one session (docs/configuration.md, "The account
// block"). Three fans without an account walk in; then alice, signed in,
// walks in too. She comes back five times sending her latest ticket and her
// login cookie, and no pass: each time she must get her one session's pass
// (same sub, jti, exp), the room must make no place, and the live sessions
// must stay four. Then a second browser of hers, with only the login
// cookie, must find that same session.
func TestAccountHoldsOneSessionWhateverTicketItSends(t *testing.T) {
	for _, store := range admissionStores {
		t.Run(store, func(t *testing.T) {
			clock := useTestClock(t)
			l := newLogin(t)
			room := uniqueRoom(t, "acct-claimed")
			block := fmt.Sprintf(`account {
				public_key %s
				cookie site_session
				issuer %s
				audience %s
			}`, l.pemPath, loginIssuer, loginAudience)
			newCaddy(t, claimedRoomConfig(t.TempDir(), room, storeLineFor(t, store, room), block))

			// Each walks in a second after the last: a walk-in spends the
			// rate budget the controller grants each second.
			for range 3 {
				walkInto(t, newFanClient(t), false)
				clock.step(t, 1)
			}
			token := l.token(t, "alice", nil)
			alice := newFanClient(t)
			alice.cookies["site_session"] = token
			start := clock.Now()
			first := walkInto(t, alice, false)

			withLogin := []string{"foyer_ticket", "site_session"}
			polls := againWay{name: "status", needsPass: true, again: func(c *fanClient) try { return statusTry(c, withLogin...) }}
			checkOneSessionPerTry(t, clock, room, alice, first, 4, withLogin, polls)

			// Her second browser has her login and nothing of the room's.
			second := newFanClient(t)
			second.cookies["site_session"] = token
			rep := second.page("/events/1")
			tok := originPassOf(rep.body)
			if tok == "" {
				t.Fatalf("alice's second browser: %d %.200q, want the origin with her session's pass", rep.code, rep.body)
			}
			if p := readPass(t, tok); !p.sameSession(first) {
				t.Errorf("alice's second browser was given %s; her session is %s", p.describe(start), first.describe(start))
			}
			clock.step(t, 1)
			if end := figures(t, room); end.Active != 4 {
				t.Errorf("at the end: %d sessions live, want 4: three fans and alice's one", end.Active)
			}
		})
	}
}
