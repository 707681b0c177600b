package waitingroom

import (
	"fmt"
	"strings"
)

// The admission state machine (docs/ARCHITECTURE.md, "The admission state
// machine"): every state a ticket and its session can be in, every event that
// moves one, and what the room does for each pair, as one table. Room.Admit
// works out the state of the request's ticket and the event the request (or
// the store's answer to it) is, looks the pair up with next, and does what the
// row's action says; the controller's events (a grace ending, an idle-out, a
// loss) are rows too, carried out by the store's step. A pair with no row is a
// request the room has no answer for: Admit refuses it as an internal error,
// and the model-based test (admission_model_test.go) fails on it.
//
// The table is data so that the documentation is generated from it (a test
// fails when docs/ARCHITECTURE.md is stale) and so that a reader sees every
// door at once: a new feature is a new event or state, and its rows say what
// it does to every other.

// TicketState is where a ticket and its session stand.
type TicketState uint8

// The states. A visitor with no readable ticket is New; the rest are what the
// ticket, the pass and the store say of them.
const (
	TicketNew        TicketState = iota // no ticket yet (or one that does not open)
	TicketChallenged                    // asked for a proof of work before a place is made
	TicketWaiting                       // holds a place the line has not reached
	TicketAtFront                       // reached by the line, within its grace, not yet claimed
	TicketInSession                     // holds a live session, and its pass
	TicketIdledOut                      // the session ended for want of use, with time left on it
	TicketLapsed                        // the grace ended unclaimed
	TicketSkipped                       // passed over as a ghost: unseen for waiting_idle_timeout when the line reached it
	TicketReturned                      // came back in time, held at the front for the next slot
	TicketTurnPassed                    // came back after the return window
	TicketFinished                      // the session ran out (or idled out with no time left)
	TicketRevoked                       // the origin ended the session
	TicketReclaiming                    // holds a pass from before a loss of the store, its session not yet taken over
	TicketRequeued                      // the site failed the session: waits first at the front with the place
	TicketWaitlisted                    // holds a place while the sale is sold out with the waitlist on
	ticketStates
)

var ticketStateNames = [ticketStates]string{
	"new", "challenged", "waiting", "at the front", "in session", "idled out",
	"lapsed", "skipped", "returned", "turn passed", "finished", "revoked", "reclaiming", "requeued",
	"waitlisted",
}

func (s TicketState) String() string { return nameOf(ticketStateNames[:], s, "state") }

// Event is what happens to a ticket: a request and what it carries, the
// store's answer to a claim, or a step of the controller.
type Event uint8

// The events.
const (
	// Requests, as Admit classifies them.
	EventArrive          Event = iota // a request with no usable ticket or pass
	EventAnswer                       // a right answer to the proof of work
	EventPoll                         // the ticket, without a pass (page, status, live connection)
	EventPass                         // a valid pass
	EventTicketAfterPass              // a claimed ticket without its pass: a copy, or a pass cookie lost
	EventOverJoinLimit                // a new place asked from an address over join_limit
	EventRoomShut                     // the room gives no places: not open yet, closed, sold out, rejecting
	EventStoreAway                    // the store does not answer, or the room settles after a loss
	// The store's answers to a claim.
	EventClaimOpened   // a session was opened (or the live one returned)
	EventClaimResumed  // an idled-out session was put back, to the end it had
	EventClaimFull     // back in time, but every slot is taken
	EventClaimHeld     // back in time, but the room admits nobody (paused, queue_all)
	EventClaimFinished // the session is over
	EventClaimPassed   // back after the return window
	EventClaimNotYet   // this node's view ran ahead of the store
	// The controller's steps and the operator's and origin's acts.
	EventGraceEnds    // an admission's grace ends unclaimed
	EventIdleTimeout  // a session goes unused for session_idle_timeout
	EventSessionEnds  // a session reaches its end
	EventRevoke       // the origin answers revoke (or an admin ends the session)
	EventPause        // pause or queue_all
	EventSoldOut      // sold out, by the origin or an admin
	EventStoreLost    // the store lost its data and is re-seeded from the nodes' memos
	EventNodeRestart  // a gateway node restarts (its caches are empty)
	EventReturnWindow // the return window after a lapse or idle-out ends
	EventGhostSkipped // the line reaches a place whose holder was not seen for waiting_idle_timeout
	EventLeave        // the fan leaves the line from the page (POST leave)
	// The origin failing a fan's session through no fault of theirs
	// (docs/PROTOCOL.md, "Requeue"), and the store's answers to a claim of
	// a requeued fan.
	EventRequeue        // the origin answers retry, or, under requeue_on_origin_error, a 5xx or a timeout
	EventRequeueRefused // as requeue, with the ticket's requeues spent (or no session in the store)
	EventClaimRequeued  // the claim of a requeued fan not let in yet
	// Access codes (docs/codes.md): a request carrying a code, and the
	// store's answer to it; a newcomer with none to an invite-only room.
	EventCode         // a request carrying an access code (?code=, the header, the page's form)
	EventCodeAccepted // the store counted a use of the code
	EventCodeRefused  // no such code, or its uses are spent
	EventCodeRequired // a newcomer without a code while codes_required is on
	// A scheduled phase starts or ends (docs/configuration.md, "Phases").
	EventPhaseSwitch // the settings in effect change at a phase's start or end, on every node at once
	// The controller's step letting a requeued fan in again (docs/PROTOCOL.md,
	// "Requeue").
	EventRequeueLetIn // the step lets requeued fans in, first and in the order requeued, before the line
	// The waitlist (docs/waitlist.md).
	EventWaitlistSoldOut // sold out (origin, operator, or a supply of 0) while the waitlist is on
	EventSupplyReturns   // a supply report above what the waitlist owes: units came back
	EventReopen          // the operator turns sold_out off
	EventWaitlistOff     // the operator turns the waitlist off while the sale is sold out
	// A phase's own pre-queue (docs/configuration.md, "Phases").
	EventPhasePrequeueOpens // a phase's prequeue_start comes: its pre-queue opens, the line held before its first key
	EventPhaseDraw          // the phase starts: its pre-queue's range of keys is drawn with the phase's seed
	events
)

var eventNames = [events]string{
	"arrive", "answer", "poll", "pass", "ticket after pass", "over join_limit", "room shut", "store away",
	"claim: opened", "claim: resumed", "claim: full", "claim: held", "claim: finished", "claim: passed", "claim: not yet",
	"grace ends", "idle timeout", "session ends", "revoke", "pause", "sold out", "store lost", "node restart",
	"return window ends", "skipped as a ghost", "leave",
	"requeue", "requeue refused", "claim: requeued",
	"code", "code accepted", "code refused", "code required",
	"phase switch",
	"let in again",
	"sold out, waitlist on", "supply returns", "reopen", "waitlist off",
	"phase pre-queue opens", "phase draw",
}

func (e Event) String() string { return nameOf(eventNames[:], e, "event") }

// Action is what the room does on a transition.
type Action uint8

// The actions. The request path carries out the first group; the second names
// what the store's controller step does, or nothing at all.
const (
	ActionForward   Action = iota + 1 // the request goes on to the origin with the pass
	ActionShowPlace                   // answer the place from this node's view: no store call
	ActionClaim                       // ask the store for a session (one round trip)
	ActionReissue                     // sign the session's pass again: same id, subject and end
	ActionJoin                        // a new place at the back (one round trip)
	ActionChallenge                   // hand out a proof-of-work seed; nothing is stored
	ActionHold                        // tell the fan to stay: first in when a slot frees
	ActionRejoin                      // the old place is over: a new one at the back (challenge and join_limit apply)
	ActionRefuse                      // 429 or 503 with Retry-After; nothing is made
	ActionShowRoom                    // the room's page (not open, closed, sold out); no place
	ActionStore                       // the store's own step does it; no request is involved
	ActionLeave                       // the store gives the place up at once (one round trip); the cookies are cleared
	ActionRequeue                     // the store ends the session and puts the fan first at the front (one round trip); the pass cookie is cleared
	ActionRedeem                      // the store counts a use of the code, join_limit weighed first (one round trip)
	ActionAskCode                     // the invite-only page, with the code form; no place
)

var actionNames = [...]string{
	"", "forward", "show place", "claim", "reissue pass", "join", "challenge", "hold", "rejoin at the back",
	"refuse", "show room", "store step", "give up the place", "requeue",
	"redeem the code", "ask for a code",
}

func (a Action) String() string { return nameOf(actionNames[:], a, "action") }

// nameOf is the name of v in names, or kind(v) for a value with none.
func nameOf[T ~uint8](names []string, v T, kind string) string {
	if int(v) < len(names) && names[v] != "" {
		return names[v]
	}
	return fmt.Sprintf("%s(%d)", kind, v)
}

// Transition is one row of the table.
type Transition struct {
	From   TicketState
	Event  Event
	To     TicketState
	Action Action
	// Why says what the row promises, in the words of the documentation (docs/*.md).
	Why string
}

// Transitions is the admission table, in the order the documentation shows
// it. Each (From, Event) pair appears once.
var Transitions = []Transition{
	// A newcomer.
	{TicketNew, EventArrive, TicketWaiting, ActionJoin, "a place at the back; admitted on the spot when a slot and the rate allow and nobody waits"},
	{TicketNew, EventAnswer, TicketWaiting, ActionJoin, "a right answer makes one place: the seed is spent on every node"},
	{TicketNew, EventOverJoinLimit, TicketNew, ActionRefuse, "429 with Retry-After; no cookie, nothing stored"},
	{TicketNew, EventRoomShut, TicketNew, ActionShowRoom, "there is no line to join"},
	{TicketNew, EventStoreAway, TicketNew, ActionRefuse, "503 with Retry-After: no key now could be placed right"},
	{TicketNew, EventPass, TicketInSession, ActionForward, "a passthrough room (or on_store_failure open while the store is away) signs a pass with no session"},
	{TicketChallenged, EventArrive, TicketChallenged, ActionChallenge, "a seed bound to the client's address; nothing is stored"},
	{TicketChallenged, EventAnswer, TicketWaiting, ActionJoin, "as a newcomer's answer"},

	// Waiting and reaching the front.
	{TicketWaiting, EventPoll, TicketWaiting, ActionShowPlace, "people ahead never rise between two looks"},
	{TicketWaiting, EventArrive, TicketWaiting, ActionShowPlace, "a join sent with a ticket is a poll: no second place"},
	{TicketWaiting, EventAnswer, TicketWaiting, ActionShowPlace, "an answer sent with a ticket is a poll: no second place"},
	{TicketWaiting, EventStoreAway, TicketWaiting, ActionShowPlace, "the place is kept, shown as reconnecting; nobody is admitted"},
	{TicketWaiting, EventPause, TicketWaiting, ActionShowPlace, "paused: places kept, nobody admitted"},
	{TicketWaiting, EventSoldOut, TicketWaiting, ActionShowRoom, "the sold-out page"},
	{TicketWaiting, EventStoreLost, TicketWaiting, ActionStore, "the room settles: the line re-announces itself, nobody joins ahead of a ticket issued before"},
	{TicketWaiting, EventNodeRestart, TicketWaiting, ActionShowPlace, "the ticket holds the place: any node answers it"},
	{TicketWaiting, EventGhostSkipped, TicketSkipped, ActionStore, "passed over without a slot or any budget; the live places admitted in the same step keep their slots"},
	{TicketAtFront, EventPoll, TicketAtFront, ActionClaim, "the line reached the place: claim a session"},
	{TicketAtFront, EventArrive, TicketAtFront, ActionClaim, "as a poll"},
	{TicketAtFront, EventAnswer, TicketAtFront, ActionClaim, "as a poll"},
	{TicketAtFront, EventStoreAway, TicketAtFront, ActionHold, "nobody is admitted while the store is away, even at the front"},
	{TicketAtFront, EventClaimOpened, TicketInSession, ActionReissue, "the pass of the new session"},
	{TicketAtFront, EventClaimNotYet, TicketAtFront, ActionHold, "this node's view ran ahead of the store"},
	{TicketAtFront, EventClaimFull, TicketReturned, ActionHold, "came back in time, with no budget or no slot free: first for the next step's budget and the next slot"},
	{TicketAtFront, EventClaimHeld, TicketReturned, ActionHold, "came back in time, while the room admits nobody"},
	{TicketAtFront, EventClaimFinished, TicketFinished, ActionRejoin, "the place's session was had and is over"},
	{TicketAtFront, EventClaimPassed, TicketTurnPassed, ActionRejoin, "came back after the return window: a new place at the back"},
	{TicketAtFront, EventGraceEnds, TicketLapsed, ActionStore, "the slot goes to the next fan"},
	{TicketLapsed, EventPoll, TicketAtFront, ActionClaim, "the store says whether it is within the return window; in at the front within new_users_per_minute"},
	{TicketLapsed, EventReturnWindow, TicketTurnPassed, ActionStore, "a claim after it is refused as passed"},
	{TicketSkipped, EventPoll, TicketAtFront, ActionClaim, "a ghost comes back: a lapsed admission, in at the front within new_users_per_minute, never into a slot of the live fans admitted with it"},
	{TicketSkipped, EventReturnWindow, TicketTurnPassed, ActionStore, "return_window after the grace of the step that skipped it: a claim is refused as passed"},
	{TicketReturned, EventPoll, TicketReturned, ActionClaim, "returners go first in each step's budget and into the next free slot: never above new_users_per_minute or the cap"},

	// In session.
	{TicketInSession, EventPass, TicketInSession, ActionForward, "checked locally: no store call; once the sale reopened after a waitlist, a pass without the waitlist claim is signed again with it (same id, subject and end)"},
	{TicketInSession, EventTicketAfterPass, TicketInSession, ActionClaim, "the store returns the live session"},
	{TicketInSession, EventClaimOpened, TicketInSession, ActionReissue, "the same session's pass again (same id, subject, end): never a second place or session"},
	{TicketInSession, EventIdleTimeout, TicketIdledOut, ActionStore, "the slot frees; every node refuses the session's passes"},
	{TicketInSession, EventSessionEnds, TicketFinished, ActionStore, "the slot frees"},
	{TicketInSession, EventRevoke, TicketRevoked, ActionStore, "the slot frees; every node refuses the pass within a refresh"},
	{TicketInSession, EventPause, TicketInSession, ActionForward, "sessions run on: a pause holds the line, not the shoppers"},
	{TicketInSession, EventSoldOut, TicketInSession, ActionForward, "sessions run on to check out"},
	{TicketInSession, EventStoreAway, TicketInSession, ActionForward, "passes are checked locally: admitted fans keep flowing"},
	{TicketInSession, EventStoreLost, TicketReclaiming, ActionStore, "the re-seed holds a slot for each session for a short while (a minute, or session_idle_timeout); a revoke gives one up"},
	{TicketInSession, EventNodeRestart, TicketInSession, ActionForward, "the pass verifies on any node"},

	// After a session, or a lapse.
	{TicketReclaiming, EventPass, TicketReclaiming, ActionClaim, "the first request the pass carries, on any node, has the store take the session over (one round trip)"},
	{TicketReclaiming, EventStoreAway, TicketReclaiming, ActionForward, "passes are checked locally while the store is away; the next request reclaims"},
	{TicketReclaiming, EventClaimOpened, TicketInSession, ActionReissue, "into a held slot, or a free one: the same session, its pass signed again (same id and end)"},
	{TicketReclaiming, EventClaimFull, TicketReturned, ActionHold, "its held slot went (the hold ended): first for the next slot, never above the cap"},
	{TicketReclaiming, EventClaimHeld, TicketReturned, ActionHold, "as full, while the room admits nobody"},
	{TicketReclaiming, EventClaimNotYet, TicketReclaiming, ActionHold, "it idled out since the loss: its pass is refused within a refresh"},
	{TicketReclaiming, EventClaimFinished, TicketFinished, ActionRejoin, "the session is over: the pass is refused, and the ticket decides"},
	{TicketIdledOut, EventTicketAfterPass, TicketIdledOut, ActionClaim, "the store says whether it may resume"},
	{TicketIdledOut, EventClaimResumed, TicketInSession, ActionReissue, "resumes the same session to the end it had, once per idle-out, within new_users_per_minute: sessions together never outlast session_duration"},
	{TicketIdledOut, EventClaimFull, TicketReturned, ActionHold, "back in time, with no budget or no slot free: first for the next step's budget and the next slot"},
	{TicketIdledOut, EventClaimHeld, TicketReturned, ActionHold, "back in time, while the room admits nobody"},
	{TicketIdledOut, EventClaimFinished, TicketFinished, ActionRejoin, "no time was left on the session"},
	{TicketIdledOut, EventClaimPassed, TicketTurnPassed, ActionRejoin, "back after the return window"},
	{TicketIdledOut, EventClaimNotYet, TicketIdledOut, ActionHold, "this node's view ran ahead of the store"},
	{TicketIdledOut, EventPass, TicketIdledOut, ActionRejoin, "its passes are refused: the ticket decides"},
	{TicketIdledOut, EventReturnWindow, TicketTurnPassed, ActionStore, "a claim after it is refused as passed"},
	{TicketFinished, EventTicketAfterPass, TicketFinished, ActionClaim, "the store confirms the session is over"},
	{TicketFinished, EventClaimFinished, TicketWaiting, ActionRejoin, "a new place at the back, which asks for the puzzle and weighs on join_limit as any newcomer's"},
	{TicketRevoked, EventTicketAfterPass, TicketRevoked, ActionClaim, "the store confirms the session is over"},
	{TicketRevoked, EventClaimFinished, TicketWaiting, ActionRejoin, "a new place at the back"},
	{TicketTurnPassed, EventClaimPassed, TicketWaiting, ActionRejoin, "a new place at the back"},
	{TicketReturned, EventClaimOpened, TicketInSession, ActionReissue, "let in at the front"},
	{TicketReturned, EventClaimResumed, TicketInSession, ActionReissue, "an idled-out session, resumed to the end it had"},
	{TicketReturned, EventClaimFull, TicketReturned, ActionHold, "still first for the next step's budget and the next slot"},
	{TicketReturned, EventClaimHeld, TicketReturned, ActionHold, "held with everyone while the room admits nobody"},
	{TicketReturned, EventClaimFinished, TicketFinished, ActionRejoin, "the session's time ran out meanwhile"},
	{TicketReturned, EventClaimPassed, TicketTurnPassed, ActionRejoin, "the returner's hold ran out"},
	{TicketReturned, EventClaimNotYet, TicketReturned, ActionHold, "this node's view ran ahead of the store"},
	{TicketInSession, EventClaimFull, TicketReturned, ActionHold, "the session ended meanwhile; back in time, first for the next slot"},
	{TicketInSession, EventClaimHeld, TicketReturned, ActionHold, "the session ended meanwhile, and the room admits nobody"},
	{TicketInSession, EventClaimResumed, TicketInSession, ActionReissue, "the session idled out meanwhile and is resumed to its end"},
	{TicketInSession, EventClaimFinished, TicketFinished, ActionRejoin, "the session ended or was revoked: a new place at the back"},
	{TicketInSession, EventClaimPassed, TicketTurnPassed, ActionRejoin, "idled out and back after the return window"},
	{TicketInSession, EventClaimNotYet, TicketInSession, ActionHold, "the store lost the session's record: wait for it to settle"},

	// Leaving the line: the place is given up at once, and the ticket is
	// spent (a copy of it rejoins at the back).
	{TicketNew, EventLeave, TicketNew, ActionShowRoom, "nothing is held: the cookies are cleared"},
	{TicketWaiting, EventLeave, TicketFinished, ActionLeave, "the line passes the place without a slot, whatever its beats say; positions behind it drop by one once a step counts it, never rise"},
	{TicketAtFront, EventLeave, TicketFinished, ActionLeave, "the pending admission's slot frees at once: the next fan goes in at the next step, not after the grace"},
	{TicketReturned, EventLeave, TicketFinished, ActionLeave, "the slot and the visitor's worth of budget kept at the front go back to the line"},
	{TicketLapsed, EventLeave, TicketFinished, ActionLeave, "the right to come back within return_window is given up"},
	{TicketSkipped, EventLeave, TicketFinished, ActionLeave, "as lapsed"},
	{TicketIdledOut, EventLeave, TicketFinished, ActionLeave, "the session's time left is given up: it never resumes"},
	{TicketInSession, EventLeave, TicketRevoked, ActionLeave, "the session ends as a revoke: the slot frees, every node refuses the pass within a refresh"},

	// Requeue: the site failed the session through no fault of the fan's
	// (docs/PROTOCOL.md, "Requeue"). The fan keeps their turn: first at the
	// front, behind only those requeued before, a bounded number of times.
	{TicketInSession, EventRequeue, TicketRequeued, ActionRequeue, "the session ends and every node refuses its pass within a refresh; its slot and a visitor's worth of budget are kept for the fan, who waits first at the front with their place, behind those requeued before; at most requeue_on_origin_error times a ticket (once while it is 0)"},
	{TicketInSession, EventRequeueRefused, TicketInSession, ActionForward, "the ticket's requeues are spent: the origin's answer goes through and the session runs on"},
	{TicketInSession, EventClaimRequeued, TicketRequeued, ActionHold, "the site failed the session: held first at the front, the page says so; never above new_users_per_minute or the cap"},
	{TicketAtFront, EventClaimRequeued, TicketRequeued, ActionHold, "a copy of a ticket whose session the site failed: held at the front with it"},
	{TicketIdledOut, EventClaimRequeued, TicketRequeued, ActionHold, "resumed, then failed by the site: held first at the front"},
	{TicketReturned, EventClaimRequeued, TicketRequeued, ActionHold, "let in, then failed by the site: held first at the front"},
	{TicketRequeued, EventPoll, TicketRequeued, ActionClaim, "each look is a claim: requeued fans go in before the line and every other returner, in the order they were requeued"},
	{TicketRequeued, EventRequeueLetIn, TicketAtFront, ActionStore, "each step lets the requeued who asked within the returner window in first, in the order requeued, before the line, within new_users_per_minute and the cap: the slot kept for each stays theirs, pending for admission_grace, counted as returned; the next look claims it"},
	{TicketRequeued, EventClaimRequeued, TicketRequeued, ActionHold, "a fan requeued before still waits, or no budget or slot is free, or the room admits nobody: the next step lets them in"},
	{TicketRequeued, EventClaimOpened, TicketInSession, ActionReissue, "let in first (by the step, or by the claim once nobody requeued before waits): a new session of session_duration from the claim, the failed one not counted against it"},
	{TicketRequeued, EventClaimPassed, TicketTurnPassed, ActionRejoin, "stopped asking for the returner window (45 s): the place at the front is lost"},
	{TicketRequeued, EventClaimFinished, TicketFinished, ActionRejoin, "the store no longer holds the place at the front (it went with the returner window, or the step let them in and they did not come within admission_grace: counted as lapsed): a new place at the back"},
	{TicketRequeued, EventLeave, TicketFinished, ActionLeave, "the place at the front, its slot and its budget go back to the line (let in already: the pending slot, the admission counted as lapsed)"},

	// Access codes (docs/codes.md): a code makes a place in its lane, one
	// place per use; a fan who holds a place keeps it and the code is not
	// used.
	{TicketNew, EventCode, TicketNew, ActionRedeem, "the try takes from the client network's join_limit allowance, right or wrong; then one use is counted atomically on every node: no puzzle, the code is the proof"},
	{TicketNew, EventCodeAccepted, TicketWaiting, ActionJoin, "a place in the code's lane, admitted on the spot as any newcomer's; a single-use code raced by two gives one place"},
	{TicketNew, EventCodeRefused, TicketNew, ActionRefuse, "403: no such code or its uses spent, never which lane a code is for; no cookie, no place"},
	{TicketNew, EventCodeRequired, TicketNew, ActionAskCode, "codes_required: no place; the page asks for a code and says when the public sale opens, when that is known"},
	{TicketWaiting, EventCode, TicketWaiting, ActionShowPlace, "a code sent with a ticket is not used: one place per visitor, and the code keeps its use"},
	{TicketAtFront, EventCode, TicketAtFront, ActionClaim, "as a poll; the code is not used"},
	// A phase switch changes the limits the store's steps run with (rate,
	// cap, method, and every other runtime setting the phase names), from
	// the instant of the switch on every node; it moves no order key and no
	// place (docs/configuration.md, "Phases").
	{TicketWaiting, EventPhaseSwitch, TicketWaiting, ActionStore, "the place and its order key are kept; the next step admits at the new phase's rate and cap; people ahead never rise"},
	{TicketAtFront, EventPhaseSwitch, TicketAtFront, ActionStore, "the admission stands, its grace runs on; the new limits bind the next admissions"},
	{TicketInSession, EventPhaseSwitch, TicketInSession, ActionForward, "sessions run on to their end: under a lower cap nobody new is let in until the live sessions fall below it"},
	{TicketReturned, EventPhaseSwitch, TicketReturned, ActionHold, "still first for the next slot, within the new phase's rate and cap"},
	{TicketRequeued, EventPhaseSwitch, TicketRequeued, ActionHold, "still first at the front, in the order requeued, within the new phase's rate and cap"},
	// A phase's own pre-queue: the keys given from its prequeue_start to
	// its start are held, then drawn with the phase's seed at its start;
	// everyone before keeps their place (docs/configuration.md, "Phases").
	{TicketNew, EventPhasePrequeueOpens, TicketWaiting, ActionJoin, "the newcomer registers in the phase's pre-queue: an order key, no position (places are drawn at the phase's start), never let in on the spot or before the start, even with the line ahead empty"},
	{TicketWaiting, EventPhasePrequeueOpens, TicketWaiting, ActionStore, "a place given before the pre-queue opened is kept and goes on being let in, in order, under the phase in force; the line stops before the pre-queue's first key"},
	{TicketAtFront, EventPhasePrequeueOpens, TicketAtFront, ActionStore, "the admission stands, its grace runs on"},
	{TicketWaiting, EventPhaseDraw, TicketWaiting, ActionStore, "the first step at or after the phase's start closes the pre-queue's range and the seed is revealed: its fans take the drawn places and see positions from then on; places outside the range do not move, and later newcomers queue behind it, first come"},

	// The waitlist (docs/waitlist.md): at sold out with the waitlist on, the
	// line keeps its places and goes in, in order, as units come back.
	{TicketWaiting, EventWaitlistSoldOut, TicketWaitlisted, ActionShowPlace, "the place is kept: the page says sold out, the fan's number on the waitlist, and that tickets may come back"},
	{TicketNew, EventWaitlistSoldOut, TicketNew, ActionJoin, "newcomers still get a place, at the back of the waitlist; nobody is let in on the spot"},
	{TicketWaitlisted, EventPoll, TicketWaitlisted, ActionShowPlace, "the position on the waitlist from this node's view, no store call; it never rises between two looks"},
	{TicketWaitlisted, EventArrive, TicketWaitlisted, ActionShowPlace, "a join sent with a ticket is a poll: no second place"},
	{TicketWaitlisted, EventAnswer, TicketWaitlisted, ActionShowPlace, "as a poll"},
	{TicketWaitlisted, EventCode, TicketWaitlisted, ActionShowPlace, "a code sent with a ticket is not used"},
	{TicketWaitlisted, EventStoreAway, TicketWaitlisted, ActionShowPlace, "the place is kept, shown as reconnecting; nobody is let in"},
	{TicketWaitlisted, EventNodeRestart, TicketWaitlisted, ActionShowPlace, "the ticket holds the place: any node answers it"},
	{TicketWaitlisted, EventSupplyReturns, TicketAtFront, ActionStore, "the store's step lets the front of the waitlist in, in order, as many as the units back serve (units a fan from the estimate, one before it is measured), within the rate and the cap; the units are owed until a fall of the supply pays them or the session could have ended, so each unit back reaches one fan; the pass says waitlist"},
	{TicketWaitlisted, EventPause, TicketWaitlisted, ActionShowPlace, "paused or queue_all: the waitlist keeps its places, nobody is let in, whatever comes back"},
	{TicketWaitlisted, EventPhaseSwitch, TicketWaitlisted, ActionStore, "the next step lets in at the new phase's rate and cap, still only as far as the units back serve"},
	{TicketWaitlisted, EventGhostSkipped, TicketSkipped, ActionStore, "a place unseen for waiting_idle_timeout is passed over without a slot or a unit, as in any line"},
	{TicketWaitlisted, EventLeave, TicketFinished, ActionLeave, "the place is given up at once: the units it would have had go to the next fan"},
	{TicketWaitlisted, EventStoreLost, TicketWaitlisted, ActionStore, "the re-seed keeps the place; the waitlist begins again owing nothing, and lets in only on a supply reported after the loss"},
	{TicketWaitlisted, EventReopen, TicketWaiting, ActionStore, "the sale is open again: the line moves at the rate, the waitlist's accounts are closed, and every pass issued from then on carries the waitlist claim (what is left is anyone's)"},
	{TicketWaitlisted, EventWaitlistOff, TicketWaiting, ActionShowRoom, "the sold-out page, as without a waitlist; the store keeps the place, so turning the waitlist on again shows it"},
	{TicketAtFront, EventWaitlistSoldOut, TicketAtFront, ActionClaim, "let in before the sell-out: the admission stands within its grace, without the waitlist claim"},
	{TicketInSession, EventWaitlistSoldOut, TicketInSession, ActionForward, "sessions run on to check out; a session let in from the waitlist carries the waitlist claim"},
	{TicketReturned, EventWaitlistSoldOut, TicketReturned, ActionHold, "held at the front of the waitlist, as when paused: first in when the sale reopens"},
	{TicketRequeued, EventWaitlistSoldOut, TicketRequeued, ActionHold, "held first at the front, as when paused: first in when the sale reopens"},
}

// machine is Transitions indexed by state and event, built once: a look-up on
// the request path is two array indexes.
var machine = func() (m [ticketStates][events]*Transition) {
	for i := range Transitions {
		tr := &Transitions[i]
		if m[tr.From][tr.Event] != nil {
			panic(fmt.Sprintf("waitingroom: two transitions from %s on %s", tr.From, tr.Event))
		}
		m[tr.From][tr.Event] = tr
	}
	return m
}()

// next is the transition from s on e; ok is false when the table has none.
func next(s TicketState, e Event) (*Transition, bool) {
	if s >= ticketStates || e >= events {
		return nil, false
	}
	tr := machine[s][e]
	return tr, tr != nil
}

// TransitionsMarkdown renders the table for docs/ARCHITECTURE.md.
func TransitionsMarkdown() string {
	var b strings.Builder
	b.WriteString("| state | event | next state | the room | why |\n|---|---|---|---|---|\n")
	for _, tr := range Transitions {
		fmt.Fprintf(&b, "| %s | %s | %s | %s | %s |\n", tr.From, tr.Event, tr.To, tr.Action, tr.Why)
	}
	return b.String()
}
