package gateway

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/foyer-dev/foyer/waitingroom"
)

// With session_idle_timeout, an admitted fan who sends nothing for that long
// loses the session and the slot, and session_duration stays the hard limit
// (docs/line.md, "Who is still in line", and the settings table). Coming back within
// return_window lets them resume the session they had, for the time it had
// left: an idle-out must never be a way to open a new, full session at the
// front of the line, again and again. This test plays such an idler against
// eight fans for ten minutes of the room's clock, on a real Caddy, and checks
// those promises from outside, by the passes every client was given.

// The room of the scenario, as its Caddyfile below sets it.
const (
	idleCap          = 2
	idleSessionSecs  = 180 // session_duration 3m
	idleGraceSecs    = int(waitingroom.DefaultAdmissionGrace / time.Second)
	idleHorizonSecs  = 600 // ten minutes of the room's clock
	idleBotSilence   = 65  // the bot's silence after each admission
	idleBotPollSecs  = 5
	idleFanPollSecs  = 3
	idleFanShopSecs  = 80 // a fan checks out this long after being let in
	idleFanCount     = 8
	idleFansBehindAt = 6 // F7 and F8: fans[6:]
)

// idleRoomConfig is the scenario's room, in front of an origin that echoes
// the pass it was given and ends the session at /done.
func idleRoomConfig(storage, room, store string) string {
	return caddyConfig(storage, fmt.Sprintf(`
	http://localhost:9080 {
		waiting_room {
			room %s
			%s
			total_active_users 2
			new_users_per_minute 60
			session_duration 3m
			session_idle_timeout 1m
		}
		reverse_proxy 127.0.0.1:9081
	}
	:9081 {
		bind 127.0.0.1
		@done path /done
		header @done X-Waiting-Room-Command revoke
		respond @done "bye" 200
		respond "origin pass={http.request.header.X-Waiting-Room-Pass}" 200
	}`, room, store))
}

// idleActor is one client of the scenario: the bot, or one of the fans.
type idleActor struct {
	name string
	c    *fanClient
	bot  bool
	next int      // the second of its next request
	in   bool     // its last answer let it in
	pass passSeen // the pass it was last let in with
	// admitted is when it was last let in; letIn whether it ever was.
	admitted int
	letIn    bool
	done     bool // a fan who checked out
	// firstSub is the visitor (a pass's sub) it was first let in as.
	firstSub string
	// key is the order key of the ticket it holds, and shown the last
	// position it was shown on that place.
	key   uint64
	shown *uint64
}

// idleScenario is the room's ten minutes: who is where, and what the
// clients saw.
type idleScenario struct {
	t     *testing.T
	clock *testClock
	room  string
	start time.Time
	bot   *idleActor
	fans  []*idleActor
	// firstAt is when each visitor (a pass's sub) was first let in, and
	// firstPass the pass they were let in with then.
	firstAt   map[string]int
	firstPass map[string]passSeen
	// order lists who was let in, in order, with when.
	order []string
	// resumes counts the bot's returns to a session it had before.
	resumes int
	// lastFanKey is the highest order key among the fans.
	lastFanKey uint64
	// oldPlaceReported is set once the bot was found waiting on its old
	// place after its session's time was spent.
	oldPlaceReported bool
	overCap          bool
}

// TestIdledOutSessionResumesOnlyItsRemainingTime: a bot is let in first and
// then sends nothing for 65 s, so its session idles out (session_idle_timeout
// 1m); then it polls the status every 5 s with its cookies (the ticket and
// the pass that is now void), and goes quiet again for 65 s each time it is
// let in. Eight fans join right after it, poll every 3 s, and once in, shop
// every 3 s for 80 s and check out. Over ten minutes of the room's clock:
//
//   - (a) a visitor's sessions together never outlast session_duration from
//     their first admission plus one admission_grace: every pass's exp is
//     checked against when its sub was first let in;
//   - (b) coming back within return_window after an idle-out resumes the
//     same session (same jti, same exp), at most once per idle-out; once the
//     session's time is spent the visitor has finished, and rejoins at the
//     back, behind the fans who wait;
//   - (c) the bot, once its first session is over, is never let in with a
//     new session ahead of F7 or F8, who waited all along;
//
// and throughout, live sessions never exceed the cap and no position rises
// between two polls of the same place.
func TestIdledOutSessionResumesOnlyItsRemainingTime(t *testing.T) {
	for _, store := range admissionStores {
		t.Run(store, func(t *testing.T) {
			clock := useTestClock(t)
			room := uniqueRoom(t, "idle-resume")
			newCaddy(t, idleRoomConfig(t.TempDir(), room, storeLineFor(t, store, room)))
			newIdleScenario(t, clock, room).run()
		})
	}
}

func newIdleScenario(t *testing.T, clock *testClock, room string) *idleScenario {
	sc := &idleScenario{
		t: t, clock: clock, room: room, start: clock.Now(),
		bot:       &idleActor{name: "BOT", c: newFanClient(t), bot: true},
		firstAt:   map[string]int{},
		firstPass: map[string]passSeen{},
	}
	for i := range idleFanCount {
		sc.fans = append(sc.fans, &idleActor{name: fmt.Sprintf("F%d", i+1), c: newFanClient(t)})
	}
	return sc
}

func (sc *idleScenario) run() {
	t := sc.t
	// The bot comes first, and walks straight in.
	sc.act(sc.bot, 0)
	if !sc.bot.in {
		t.Fatal("the bot, first in an empty room, was not let in")
	}
	actors := append([]*idleActor{sc.bot}, sc.fans...)
	for s := 0; s <= idleHorizonSecs; s++ {
		if s > 0 {
			sc.clock.step(t, 1)
		}
		for _, a := range actors {
			if !a.done && s >= a.next {
				sc.act(a, s)
			}
		}
		if s == 0 {
			for _, f := range sc.fans {
				sc.lastFanKey = max(sc.lastFanKey, openTicket(t, sc.room, f.c.cookies["foyer_ticket"]).Key)
			}
		}
		if live := figures(t, sc.room); live.Active > idleCap && !sc.overCap {
			sc.overCap = true
			t.Errorf("at %ds: %d sessions live, cap %d", s, live.Active, idleCap)
		}
	}
	t.Logf("admission order: %s", strings.Join(sc.order, " "))
	for _, f := range sc.fans {
		if !f.letIn {
			t.Errorf("%s was never let in in %d s", f.name, idleHorizonSecs)
		}
	}
	if live := figures(t, sc.room); live.Active > idleCap {
		t.Errorf("at the end: %d sessions live, cap %d", live.Active, idleCap)
	}
}

// act is one client's request at second s.
func (sc *idleScenario) act(a *idleActor, s int) {
	if a.bot {
		sc.botAct(a, s)
		return
	}
	sc.fanAct(a, s)
}

// botAct: the bot only ever polls the status, with every cookie it holds.
// Once let in it says nothing for idleBotSilence seconds.
func (sc *idleScenario) botAct(a *idleActor, s int) {
	st, _ := a.c.status()
	if st.State == waitingroom.StateAdmitted {
		p := readPass(sc.t, a.c.cookies["foyer_pass"])
		if !a.in || p.JTI != a.pass.JTI {
			sc.admit(a, s, p)
			a.next = s + idleBotSilence
			return
		}
		a.next = s + idleBotPollSecs
		return
	}
	a.in = false
	sc.checkPosition(a, s, st)
	first := sc.firstPass[a.firstSub]
	if st.State == waitingroom.StateQueued && !sc.oldPlaceReported && int64(s) > first.Exp-sc.start.Unix() && a.key <= sc.lastFanKey {
		sc.oldPlaceReported = true
		sc.t.Errorf("(b) at %ds the bot's first session (%s) has no time left, yet it waits on place %d, ahead of the fans' places (up to %d), position %s; a fan whose time is spent rejoins at the back",
			s, first.describe(sc.start), a.key, sc.lastFanKey, position(st))
	}
	a.next = s + idleBotPollSecs
}

// fanAct: a fan polls every few seconds while waiting; once in, it shops
// every few seconds, and checks out after idleFanShopSecs.
func (sc *idleScenario) fanAct(a *idleActor, s int) {
	t := sc.t
	a.next = s + idleFanPollSecs
	if !a.in {
		st, _ := a.c.status()
		if st.State == waitingroom.StateAdmitted {
			sc.admit(a, s, readPass(t, a.c.cookies["foyer_pass"]))
			return
		}
		sc.checkPosition(a, s, st)
		return
	}
	if s >= a.admitted+idleFanShopSecs {
		if rep := a.c.page("/done"); rep.body != "bye" {
			t.Errorf("%s's checkout at %ds: %d %q", a.name, s, rep.code, rep.body)
		}
		a.done, a.in = true, false
		return
	}
	rep := a.c.page("/events/1")
	tok := originPassOf(rep.body)
	if tok == "" {
		t.Errorf("%s lost its session while shopping, at %ds: %d", a.name, s, rep.code)
		a.in = false
		return
	}
	if p := readPass(t, tok); p.JTI != a.pass.JTI {
		t.Errorf("%s reached the origin at %ds with %s, not the pass it was let in with (%s)",
			a.name, s, p.describe(sc.start), a.pass.describe(sc.start))
	}
}

// admit records that a was let in at second s with pass p, and checks the
// promises (a), (b) and (c) against it.
func (sc *idleScenario) admit(a *idleActor, s int, p passSeen) {
	t := sc.t
	sc.order = append(sc.order, fmt.Sprintf("%s@%ds", a.name, s))
	first, seen := sc.firstAt[p.Sub]
	if !seen {
		first = s
		sc.firstAt[p.Sub], sc.firstPass[p.Sub] = s, p
	}
	a.in, a.pass, a.admitted, a.letIn = true, p, s, true
	if a.firstSub == "" {
		a.firstSub = p.Sub
	}

	// (a) Every session of a visitor ends within session_duration of their
	// first admission, plus one admission grace.
	if limit := sc.start.Unix() + int64(first+idleSessionSecs+idleGraceSecs); p.Exp > limit {
		t.Errorf("(a) %s let in at %ds with %s: it ends %ds after this visitor was first let in (at %ds); at most %ds (session_duration + admission_grace)",
			a.name, s, p.describe(sc.start), p.Exp-sc.start.Unix()-int64(first), first, idleSessionSecs+idleGraceSecs)
	}
	// (b) A visitor let in again resumes the session they had: the same
	// jti and the same end. Only an idle-out gives it back, once each.
	if seen {
		if fp := sc.firstPass[p.Sub]; !p.sameSession(fp) {
			t.Errorf("(b) %s let in again at %ds with a new session (%s); it may only resume the one it had (%s) for the time left",
				a.name, s, p.describe(sc.start), fp.describe(sc.start))
		} else if a.bot {
			sc.resumes++
			// Only the bot ever goes quiet: every idle-out is its own.
			if idled := figures(t, sc.room).Counters.IdledOut; uint64(sc.resumes) > idled {
				t.Errorf("(b) at %ds the bot has resumed its session %d times after %d idle-outs; once per idle-out at most",
					s, sc.resumes, idled)
			}
		}
	}
	// (c) Once its first session is over, the bot is never let in with a
	// new one ahead of the fans who waited all along.
	if a.bot && p.JTI != sc.firstPass[a.firstSub].JTI {
		var ahead []string
		for _, f := range sc.fans[idleFansBehindAt:] {
			if !f.letIn {
				ahead = append(ahead, f.name)
			}
		}
		if len(ahead) > 0 {
			t.Errorf("(c) the bot let in again at %ds with a new session (%s), ahead of %s, who waited since 0 s",
				s, p.describe(sc.start), strings.Join(ahead, " and "))
		}
		if p.Sub != a.firstSub && p.OrderKey <= sc.lastFanKey {
			t.Errorf("(c) the bot's new place at %ds has order key %d, not behind the fans' (up to %d)", s, p.OrderKey, sc.lastFanKey)
		}
	}
}

// checkPosition holds a waiting client's position to the promise of docs/line.md:
// it never rises between two looks at the same place.
func (sc *idleScenario) checkPosition(a *idleActor, s int, st waitingroom.Status) {
	tk := openTicket(sc.t, sc.room, a.c.cookies["foyer_ticket"])
	if tk.Key != a.key || a.shown == nil {
		a.key, a.shown = tk.Key, st.Position
		return
	}
	if st.Position != nil && *st.Position > *a.shown {
		sc.t.Errorf("%s at %ds: position %d after %d, on the same place (key %d)", a.name, s, *st.Position, *a.shown, tk.Key)
	}
	if st.Position != nil {
		a.shown = st.Position
	}
}
