package waitingroom_test

import (
	"context"
	"flag"
	"fmt"
	"os"
	"sync/atomic"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
	"pgregory.net/rapid"

	"github.com/foyer-dev/foyer/internal/redistest"
	"github.com/foyer-dev/foyer/waitingroom"
	"github.com/foyer-dev/foyer/waitingroom/memstore"
	"github.com/foyer-dev/foyer/waitingroom/redisstore"
)

// TestAdmissionModel drives random sequences of what fans, the origin, the
// operator, time and the store do against two nodes of one room sharing one
// store, on the memory store and on Redis: fans join, poll, send their pass,
// a copy of a ticket or their ticket alone, go quiet and come back; the
// origin revokes, or fails a session (requeue); the operator pauses and holds everyone; time passes,
// across the switches of up to two scheduled phases that change the cap and the rate, and of
// those the operator adds as the run goes; and,
// at most twice a sequence, the store loses the room (an empty restart) and
// the nodes' next tick re-seeds it. It checks after every step that:
//
//  1. live sessions never exceed total_active_users, the cap in force (a
//     phase's, or the room's); when a phase lowers it, the slots held at
//     the switch stay held, and their count never rises above it;
//  2. a visitor holds one live session, an account one place in line or one
//     live session, and a ticket sent without its pass while its session is
//     live gets that session's pass back (same id, subject and end);
//  3. no pass a visitor is handed ends later than session_duration plus
//     admission_grace after their first admission;
//  4. a fan who keeps polling is never passed over, and a returner is let in
//     at the front once per lapse;
//  5. the position shown for a place never rises between two polls;
//  6. every pass the room accepts belongs to a live session;
//  7. the room lets fans in within new_users_per_minute (the highest in force
//     over the span, phases included), those coming back
//     at the front (a lapsed admission, a skipped ghost, an idled-out
//     session, a requeued one) included: over any 5 s, five seconds' budget
//     and the one second's worth it may hold banked;
//  8. the origin's failure of a session (retry) requeues a ticket at most
//     requeue_on_origin_error times (once while 0), never refuses one under
//     that bound while the session is live, and the store counts each;
//  9. requeued fans are let in in the order they were requeued, by the
//     controller's step or by their claim: once one comes for the new
//     session, none requeued before them who still asked at the front is
//     told to wait there again (they were let in too). A requeued
//     fan's new session counts session_duration from when they are let in
//     again (invariant 3), and each requeue allows one more return at the
//     front (invariant 4);
//  10. with the room sold out (the operator) and the waitlist on, the line
//     is a waitlist (positions still never rise, invariant 5) let in only as
//     the supply the origin reports comes back: the units owed never exceed
//     the supply last reported, and every step of the history owed at most
//     the supply it went by, reaching places in order;
//  11. a phase's own pre-queue (phases drawn with one) holds the line: while
//     it is open the store's serving stays at or before its first key, none
//     of its fans is handed a pass before the phase's start, and none is
//     shown a position before the draw places them;
//  12. the waitlist claim: while a node sees the line as a waitlist, a pass
//     it hands out carries the claim only for a place at or past where the
//     waitlist began (never one let in before the sell-out; a pass handed
//     out between a reopening and this sell-out keeps it), and once it
//     has seen the waitlist end (the operator reopened the sale) every pass
//     it hands out or sends on to the origin carries it (a session's pass
//     without it is signed again with it, and is otherwise the same), a
//     loss of the store since included.
//
// Across a loss of the store (docs/operations.md, "When Redis comes back empty") the
// invariants hold with these carve-outs, each what docs/operations.md promises then:
// sessions the store lost count against the cap only once reclaimed (the
// store's own count, held slots included, is checked at every step, and a
// pass of a lost session goes in only reclaimed, with its id and end); a
// lost session's ticket alone may rejoin at the back, wait at the front or
// in line, and one claimed again goes on as a new session (invariant 3
// bounds it); a fan holding a pass from before the loss may be let in at the
// front once more per loss; the origin's revocation reaches the other node a
// tick later; the account block binds each era between losses on its own.
// After a loss, besides: serving never goes back behind the nodes' views,
// no place let in before the loss is let in again, every place handed out
// is behind every earlier ticket, and positions still never rise.
//
// The harness and the invariants are in admission_model_harness_test.go.
// Each store runs first the kept regression sequences (failures rapid found
// once, minimised), then new random sequences for a time budget:
// FOYER_MODEL_BUDGET (a Go duration, 60s by default, 10s with -short) split
// between the stores. -rapid.checks=N runs exactly N sequences per store
// instead, and -rapid.seed replays one.
//
// The holes this test found (holeA to holeI in the harness) each keep a
// regression sequence, and the checks that meet one say "hole X". A to D are
// closed, and so is J, found with requeues; E to I, found by the loss of
// the store, are open and tolerated by default (openHoles).
// The store losing the room (a step of its own) is drawn only with
// FOYER_MODEL_LOSSES set, as make chaos does: the holes a loss still opens
// are being closed, and their regressions run every time.
// FOYER_MODEL_KNOWN_HOLES names holes to tolerate (a run that meets one logs
// it and stops checking that sequence), to look past one while it is open.
//
// rapid replays the fail files it wrote under testdata/rapid/ before new
// sequences, on the machine that wrote them; they are a stream of random
// bits that means a sequence only to this version of the generators, so the
// failures worth keeping are kept below as readable steps instead.
func TestAdmissionModel(t *testing.T) {
	budget := modelBudget(t)
	for _, b := range modelBackends {
		t.Run(b.name, func(t *testing.T) {
			open := b.open(t)
			t.Run("regressions", func(t *testing.T) {
				for _, rc := range admissionRegressions {
					t.Run(rc.name, func(t *testing.T) { runAdmissionRegression(t, open, rc) })
				}
			})
			t.Run("explore", func(t *testing.T) { exploreAdmission(t, open, budget/time.Duration(len(modelBackends))) })
		})
	}
}

// admissionRegression is a sequence of steps that once broke an invariant.
type admissionRegression struct {
	name string
	// hole is the known hole the sequence shows, if it is one.
	hole  string
	cfg   modelSettings
	steps []modelStep
}

// admissionRegressions are the failing sequences rapid found and minimised,
// kept as steps so that they run every time, on both stores.
var admissionRegressions = []admissionRegression{
	{
		// Four fans hold the four slots when a phase lowers the cap to
		// one: their sessions run on, nobody new is let in while they are
		// above it, positions in line do not rise; when the phase ends
		// the cap of four is back.
		name: "phase_lowers_the_cap_under_live_sessions",
		cfg: modelSettings{Cap: 4, Rate: 600, ReturnWindow: waitingroom.DefaultReturnWindow, WaitingIdle: waitingroom.DefaultWaitingIdleTimeout,
			Phases: []modelPhase{{From: 20 * time.Second, To: 100 * time.Second, Cap: 1, Rate: 30}}},
		steps: []modelStep{
			{Op: opJoin, Node: 0}, {Op: opJoin, Node: 1}, {Op: opJoin, Node: 0}, {Op: opJoin, Node: 1},
			{Op: opPresentPass, Fan: 0, Node: 0}, {Op: opPresentPass, Fan: 1, Node: 1},
			{Op: opPresentPass, Fan: 2, Node: 0}, {Op: opPresentPass, Fan: 3, Node: 1},
			{Op: opWait, Seconds: 21},
			{Op: opJoin, Node: 0}, {Op: opJoin, Node: 1},
			{Op: opPresentPass, Fan: 0, Node: 1}, {Op: opPoll, Fan: 4, Node: 0}, {Op: opPoll, Fan: 5, Node: 1},
			{Op: opWait, Seconds: 30},
			{Op: opPresentPass, Fan: 1, Node: 0}, {Op: opPoll, Fan: 4, Node: 1}, {Op: opPoll, Fan: 5, Node: 0},
			{Op: opWait, Seconds: 50},
			{Op: opPoll, Fan: 4, Node: 0}, {Op: opPoll, Fan: 5, Node: 1},
			{Op: opWait, Seconds: 5},
			{Op: opPoll, Fan: 4, Node: 1}, {Op: opPoll, Fan: 5, Node: 0},
		},
	},
	{
		// A fan let in at once sends their ticket again without the pass
		// (a second browser holding a copy of the cookie, or a cleared pass
		// cookie): docs/endpoints.md promises the same session; the room gives a new
		// place, here a new session with another sub, beside the live one.
		name: "claimed_ticket_without_pass_gets_a_new_session",
		hole: holeB,
		cfg:  modelSettings{Cap: 2, Rate: 60, ReturnWindow: waitingroom.DefaultReturnWindow, WaitingIdle: waitingroom.DefaultWaitingIdleTimeout},
		steps: []modelStep{
			{Op: opJoin, Node: 0},
			{Op: opLatestTicket, Fan: 0, Node: 0},
		},
	},
	{
		// A fan let in at once sends nothing for a minute, their session
		// idles out, and their next request presents the pass: it is
		// refused, their ticket claims again, and they get a whole new
		// session_duration, where docs/line.md keeps session_duration the hard
		// limit.
		name: "idled_out_session_comes_back_whole",
		hole: holeA,
		cfg:  modelSettings{Cap: 2, Rate: 60, ReturnWindow: waitingroom.DefaultReturnWindow, WaitingIdle: waitingroom.DefaultWaitingIdleTimeout},
		steps: []modelStep{
			{Op: opJoin, Node: 0},
			{Op: opWait, Seconds: 62},
			{Op: opPresentPass, Fan: 0, Node: 0},
		},
	},
	{
		// While the room is paused, fan 1 stops looking and fan 2 keeps
		// polling; fan 0 holds one of the two slots. On resume the
		// controller admits fan 2, skipping fan 1 as a ghost, in one
		// admission that spans both places. Fan 1 comes back within its
		// grace and takes that admission's one slot; fan 2, claiming in
		// time, is told to wait as a returner. Closed: the store records
		// the ghosts a step skips, and fan 1 is a returner.
		name: "ghost_takes_the_slot_of_the_live_fan_admitted_with_it",
		hole: holeC,
		cfg:  modelSettings{Cap: 2, Rate: 120, ReturnWindow: waitingroom.DefaultReturnWindow, WaitingIdle: time.Minute},
		steps: []modelStep{
			{Op: opJoin, Node: 0},
			{Op: opOperator, Node: 0, Setting: "paused", On: true},
			{Op: opJoin, Node: 0},
			{Op: opJoin, Node: 0},
			{Op: opWait, Seconds: 40},
			{Op: opPresentPass, Fan: 0, Node: 0},
			{Op: opPoll, Fan: 2, Node: 0},
			{Op: opWait, Seconds: 40},
			{Op: opPresentPass, Fan: 0, Node: 0},
			{Op: opPoll, Fan: 2, Node: 0},
			{Op: opOperator, Node: 0, Setting: "paused", On: false},
			{Op: opWait, Seconds: 1},
			{Op: opPoll, Fan: 1, Node: 0},
			{Op: opPoll, Fan: 2, Node: 0},
		},
	},
	{
		// Eight fans join a paused room and their pages stop polling (a
		// network outage, say) for longer than waiting_idle_timeout. On
		// resume the controller skips them all as ghosts; their pages come
		// back together, and each was let in at once while a slot was
		// free, whatever new_users_per_minute said: eight in an instant at
		// one a second.
		name: "ghosts_coming_back_together_skip_the_rate",
		cfg:  modelSettings{Cap: 4, Rate: 60, ReturnWindow: waitingroom.DefaultReturnWindow, WaitingIdle: time.Minute},
		steps: func() []modelStep {
			steps := []modelStep{{Op: opOperator, Node: 0, Setting: "paused", On: true}}
			for range 8 {
				steps = append(steps, modelStep{Op: opJoin, Node: 0})
			}
			steps = append(steps,
				modelStep{Op: opWait, Seconds: 80},
				modelStep{Op: opOperator, Node: 1, Setting: "paused", On: false},
				modelStep{Op: opWait, Seconds: 1})
			for fan := range 4 {
				steps = append(steps, modelStep{Op: opPoll, Fan: fan, Node: fan % 2})
			}
			for fan := range 4 {
				steps = append(steps, modelStep{Op: opRevoke, Fan: fan, Node: 0})
			}
			for fan := 4; fan < 8; fan++ {
				steps = append(steps, modelStep{Op: opPoll, Fan: fan, Node: fan % 2})
			}
			return steps
		}(),
	},
	{
		// A copy of a fan's ticket claims the session (a claim is not use
		// of it); a minute later, one second before the session idles out,
		// the fan's own browser claims with its ticket and is handed a pass
		// of that session. Once the session idled out, that pass is still
		// let through, on every node, until the session's end.
		name: "pass_issued_the_second_before_an_idle_out_outlives_it",
		hole: holeD,
		cfg:  modelSettings{Cap: 2, Rate: 60, ReturnWindow: waitingroom.DefaultReturnWindow, WaitingIdle: waitingroom.DefaultWaitingIdleTimeout},
		steps: []modelStep{
			{Op: opOperator, Node: 0, Setting: "paused", On: true},
			{Op: opJoin, Node: 0},
			{Op: opOperator, Node: 0, Setting: "paused", On: false},
			{Op: opWait, Seconds: 1},
			{Op: opOldTicket, Fan: 0, Copy: 0, Node: 0},
			{Op: opWait, Seconds: 59},
			{Op: opPoll, Fan: 0, Node: 0},
			{Op: opWait, Seconds: 2},
			{Op: opPresentPass, Fan: 0, Node: 0},
		},
	},
	{
		// A fan is let in on the spot, and the store loses the room before
		// the nodes' next refresh: their views, which re-seed it, still had
		// serving before the fan's place, and the re-created room lets that
		// place in a second time (a second slot for one visitor).
		name:  "place_let_in_just_before_a_loss_is_let_in_again",
		hole:  holeE,
		cfg:   modelSettings{Cap: 2, Rate: 60, ReturnWindow: waitingroom.DefaultReturnWindow, WaitingIdle: waitingroom.DefaultWaitingIdleTimeout},
		steps: []modelStep{{Op: opJoin, Node: 0}, {Op: opStoreLost}},
	},
	{
		// Two browsers of one account share a session; the origin revokes
		// it through node 1, and the store loses the room before node 0
		// refreshed: node 0's view, which re-seeds it, had the session
		// live, and the other browser's pass reclaims it through node 0,
		// which signs it again.
		name: "session_revoked_just_before_a_loss_is_reclaimed",
		hole: holeF,
		cfg:  modelSettings{Cap: 2, Rate: 60, ReturnWindow: waitingroom.DefaultReturnWindow, WaitingIdle: waitingroom.DefaultWaitingIdleTimeout},
		steps: []modelStep{
			{Op: opJoin, Node: 0, Account: "acct-3"},
			{Op: opWait, Seconds: 1},
			{Op: opJoin, Node: 0, Account: "acct-3"},
			{Op: opRevoke, Fan: 0, Node: 1},
			{Op: opStoreLost},
			{Op: opPresentPass, Fan: 1, Node: 0},
		},
	},
	{
		// Two fans are let in in one admission; fan 0 claims, and the
		// store loses the room. Fan 0's ticket alone (the store no longer
		// knows the session) claims the admission's second slot, and fan
		// 1, polling within their grace, is refused and rejoins at the
		// back.
		name: "claim_again_after_a_loss_takes_another_fans_slot",
		hole: holeG,
		cfg:  modelSettings{Cap: 4, Rate: 120, ReturnWindow: waitingroom.DefaultReturnWindow, WaitingIdle: waitingroom.DefaultWaitingIdleTimeout},
		steps: []modelStep{
			{Op: opOperator, Node: 0, Setting: "paused", On: true},
			{Op: opJoin, Node: 0},
			{Op: opJoin, Node: 0},
			{Op: opOperator, Node: 0, Setting: "paused", On: false},
			{Op: opWait, Seconds: 1},
			{Op: opPoll, Fan: 0, Node: 0},
			{Op: opWait, Seconds: 1},
			{Op: opStoreLost},
			{Op: opLatestTicket, Fan: 0, Node: 0},
			{Op: opPoll, Fan: 1, Node: 0},
		},
	},
	{
		// The operator pauses the room through node 0, and the store
		// loses it before node 1 refreshed: the re-created room lets the
		// fan waiting in line in while paused.
		name:  "loss_just_after_a_pause_lets_fans_in",
		hole:  holeH,
		cfg:   modelSettings{Cap: 2, Rate: 60, ReturnWindow: waitingroom.DefaultReturnWindow, WaitingIdle: waitingroom.DefaultWaitingIdleTimeout},
		steps: []modelStep{{Op: opOperator, Node: 0, Setting: "paused", On: true}, {Op: opJoin, Node: 0}, {Op: opStoreLost}},
	},
	{
		// Fan 1 joins through node 1 and the store loses the room before
		// node 1's next tick: fan 1's place lies in the re-seed's margin,
		// its join's beat is from before the loss, and the line passes it
		// as a ghost; polling half a second later, fan 1 is a returner.
		name: "place_handed_out_just_before_a_loss_is_skipped_as_a_ghost",
		hole: holeI,
		cfg:  modelSettings{Cap: 2, Rate: 120, ReturnWindow: waitingroom.DefaultReturnWindow, WaitingIdle: waitingroom.DefaultWaitingIdleTimeout},
		steps: []modelStep{
			{Op: opOperator, Node: 0, Setting: "queue_all", On: true},
			{Op: opJoin, Node: 0},
			{Op: opJoin, Node: 1},
			{Op: opStoreLost},
			{Op: opPoll, Fan: 1, Node: 1},
		},
	},
	{
		// Fan 0's session idles out and resumes within the nodes' lag
		// before a loss, so the re-seed holds no slot for it; fan 0's pass
		// reclaims the slot held for fan 2's restored admission, a
		// newcomer takes the free one, and fan 2's claim opens a third
		// session at cap 2 (on both stores, a restored admission's claim
		// opens a session whether or not a held slot is left). Not a
		// tolerated hole: invariant 1 fails until it is fixed.
		name: "claim_of_a_restored_admission_exceeds_the_cap",
		cfg:  modelSettings{Cap: 2, Rate: 60, ReturnWindow: waitingroom.DefaultReturnWindow, WaitingIdle: waitingroom.DefaultWaitingIdleTimeout},
		steps: []modelStep{
			{Op: opJoin, Node: 0},
			{Op: opWait, Seconds: 1},
			{Op: opJoin, Node: 0},
			{Op: opJoin, Node: 0},
			{Op: opWait, Seconds: 60},
			{Op: opLatestTicket, Fan: 0, Node: 0},
			{Op: opQuiet, Fan: 2},
			{Op: opStoreLost},
			{Op: opWait, Seconds: 1},
			{Op: opJoin, Node: 0},
			{Op: opRevoke, Fan: 0, Node: 0},
			{Op: opComeBack, Fan: 2, Node: 0},
		},
	},
	{
		// Two browsers of one account share a session. The origin fails
		// it through node 1, and the first browser is let in again at once
		// through node 0, into a new session; node 0, not refreshed since,
		// still honours the second browser's pass of the failed session,
		// and the origin fails and then revokes that one. Both must end
		// nothing of the new session, whose pass the first browser then
		// presents.
		name: "old_pass_of_a_requeued_visitor_ends_their_new_session",
		hole: holeJ,
		cfg:  modelSettings{Cap: 2, Rate: 60, ReturnWindow: waitingroom.DefaultReturnWindow, WaitingIdle: waitingroom.DefaultWaitingIdleTimeout, Requeues: 2},
		steps: []modelStep{
			{Op: opJoin, Node: 0, Account: "acct-1"},
			{Op: opWait, Seconds: 1},
			{Op: opJoin, Node: 0, Account: "acct-1"},
			{Op: opWait, Seconds: 1},
			{Op: opRequeue, Fan: 0, Node: 1},
			{Op: opLatestTicket, Fan: 0, Node: 0},
			{Op: opRequeue, Fan: 1, Node: 0},
			{Op: opRevoke, Fan: 1, Node: 0},
			{Op: opPresentPass, Fan: 0, Node: 0},
			{Op: opWait, Seconds: 1},
			{Op: opPresentPass, Fan: 0, Node: 1},
		},
	},
	{
		// Between two phases of 30/min the room's own 60/min is in force
		// for three seconds. Two fans are let in on the spot and one from
		// the line in that gap; the second walk-in's session fails on the
		// site's side, and once the first phase of 30/min has banked a
		// visitor's worth the step lets it in again: 4 admissions in 5 s,
		// within what 60/min allows over the span. Invariant 7 once read
		// the rate only at the span's ends and at the phases starting in
		// it, 30/min, and failed on it.
		name: "rate_of_the_gap_between_two_phases_is_in_force",
		cfg: modelSettings{Cap: 4, Rate: 60, ReturnWindow: waitingroom.DefaultReturnWindow, WaitingIdle: waitingroom.DefaultWaitingIdleTimeout, Requeues: 1,
			Phases: []modelPhase{{From: 10 * time.Second, To: 20 * time.Second, Rate: 30}, {From: 23 * time.Second, To: 60 * time.Second, Rate: 30}}},
		steps: []modelStep{
			{Op: opWait, Seconds: 20},
			{Op: opJoin, Node: 0},
			{Op: opJoin, Node: 1},
			{Op: opWait, Seconds: 2},
			{Op: opJoin, Node: 0},
			{Op: opRequeue, Fan: 2, Node: 0},
			{Op: opWait, Seconds: 2},
			{Op: opPoll, Fan: 2, Node: 1},
		},
	},
	{
		// Four fans in session at 30/min have their sessions failed by the
		// site at once: their four slots and budget are kept, and the step
		// lets them in again one visitor's worth of budget at a time,
		// every two seconds, never four at once. Invariant 7 counts each
		// one let in again (returned) against the rate: a store that let
		// the requeued in on the kept slots alone, without the budget,
		// fails it here.
		name: "requeued_fans_are_let_in_again_within_the_rate",
		cfg:  modelSettings{Cap: 4, Rate: 30, ReturnWindow: waitingroom.DefaultReturnWindow, WaitingIdle: waitingroom.DefaultWaitingIdleTimeout, Requeues: 1},
		steps: []modelStep{
			{Op: opJoin, Node: 0}, {Op: opJoin, Node: 1}, {Op: opJoin, Node: 0}, {Op: opJoin, Node: 1},
			{Op: opWait, Seconds: 8},
			{Op: opPoll, Fan: 1, Node: 1}, {Op: opPoll, Fan: 2, Node: 0}, {Op: opPoll, Fan: 3, Node: 1},
			{Op: opWait, Seconds: 10},
			{Op: opRequeue, Fan: 0, Node: 0}, {Op: opRequeue, Fan: 1, Node: 1},
			{Op: opRequeue, Fan: 2, Node: 0}, {Op: opRequeue, Fan: 3, Node: 1},
			{Op: opWait, Seconds: 1},
			{Op: opPoll, Fan: 0, Node: 0}, {Op: opPoll, Fan: 1, Node: 1},
			{Op: opWait, Seconds: 8},
			{Op: opPoll, Fan: 0, Node: 0}, {Op: opPoll, Fan: 1, Node: 1}, {Op: opPoll, Fan: 2, Node: 0}, {Op: opPoll, Fan: 3, Node: 1},
		},
	},
	{
		// Code holders (docs/codes.md): the code of many uses makes a
		// place on either node; the single-use code makes one place, and
		// is refused as used up on the other node; a wrong code makes
		// none; a fan who polls with a code keeps their place, and their
		// turn comes as anyone's.
		name: "codes_make_places_and_a_single_use_code_one",
		cfg:  modelSettings{Cap: 2, Rate: 60, ReturnWindow: waitingroom.DefaultReturnWindow, WaitingIdle: waitingroom.DefaultWaitingIdleTimeout},
		steps: []modelStep{
			{Op: opCodeJoin, Node: 0, Code: modelCodeMany},
			{Op: opJoin, Node: 1},
			{Op: opCodeJoin, Node: 0, Code: modelCodeOnce},
			{Op: opCodeJoin, Node: 1, Code: modelCodeOnce},
			{Op: opCodeJoin, Node: 1, Code: modelCodeWrong},
			{Op: opPoll, Fan: 2, Node: 1, Code: modelCodeMany},
			{Op: opRevoke, Fan: 0, Node: 0},
			{Op: opWait, Seconds: 2},
			{Op: opPoll, Fan: 2, Node: 0, Code: modelCodeMany},
			{Op: opCodeJoin, Node: 1, Code: modelCodeMany},
		},
	},
	{
		// The origin reports a supply through node 0, and the store loses
		// the room before node 0's next tick sent it: the report's
		// ErrNoRoom failed every tick before its controller step, the one
		// that re-seeds the room, so the node never recovered.
		name:  "supply_waiting_to_be_sent_when_the_store_loses_the_room",
		cfg:   modelSettings{Cap: 2, Rate: 60, ReturnWindow: waitingroom.DefaultReturnWindow, WaitingIdle: waitingroom.DefaultWaitingIdleTimeout},
		steps: []modelStep{{Op: opSupply, Node: 0, Units: 0}, {Op: opStoreLost}, {Op: opJoin, Node: 0}, {Op: opWait, Seconds: 2}},
	},
	{
		// The operator sells out and reopens the sale, and the store then
		// loses the room: the nodes re-seed it with the end of the
		// waitlist, so a fan let in afterwards still holds the waitlist
		// claim (invariant 12), as one let in before the loss would.
		name: "reopened_sale_keeps_the_waitlist_claim_after_a_loss",
		cfg:  modelSettings{Cap: 2, Rate: 60, ReturnWindow: waitingroom.DefaultReturnWindow, WaitingIdle: waitingroom.DefaultWaitingIdleTimeout},
		steps: []modelStep{
			{Op: opJoin, Node: 0},
			{Op: opOperator, Node: 0, Setting: "sold_out", On: true},
			{Op: opWait, Seconds: 2},
			{Op: opOperator, Node: 1, Setting: "sold_out", On: false},
			{Op: opWait, Seconds: 2},
			{Op: opStoreLost},
			{Op: opJoin, Node: 1},
			{Op: opWait, Seconds: 2},
			{Op: opPoll, Fan: 1, Node: 0},
		},
	},
}

func runAdmissionRegression(t *testing.T, open modelOpener, rc admissionRegression) {
	room := fmt.Sprintf("model-%d", modelRooms.Add(1))
	stores, truth, drop := open(room)
	t.Cleanup(drop)
	m, err := newAdmissionModel(t, rc.cfg, room, stores, truth)
	if err != nil {
		t.Fatal(err)
	}
	m.check()
	for _, s := range rc.steps {
		m.do(s)
		m.check()
	}
	switch {
	case rc.hole != "" && m.sawHoles[rc.hole]:
		t.Logf("known hole %s still shows", rc.hole)
	case rc.hole != "" && m.known[rc.hole]:
		t.Logf("known hole %s no longer shows: take it out of FOYER_MODEL_KNOWN_HOLES", rc.hole)
	}
}

// modelOpener gives the stores of a new room: each node's handle, and one
// the model reads the store's own view through; drop removes the room.
type modelOpener func(room string) (nodes [2]waitingroom.Store, truth waitingroom.Store, drop func())

type modelBackend struct {
	name string
	open func(t *testing.T) modelOpener
}

var modelBackends = []modelBackend{
	{"memory", func(*testing.T) modelOpener {
		return func(string) ([2]waitingroom.Store, waitingroom.Store, func()) {
			s := memstore.New()
			return [2]waitingroom.Store{s, s}, s, func() {}
		}
	}},
	{"redis", func(t *testing.T) modelOpener {
		// The shared Redis, under a prefix of this test's own, with a room
		// of its own for every sequence. Without Redis the test skips,
		// loudly, except with CI=true, where it fails (redistest.Missing).
		shared := redistest.Shared(t)
		prefix := redistest.Prefix(t, shared)
		open := func(c redis.UniversalClient) *redisstore.Store {
			s, err := redisstore.New(c, redisstore.WithPrefix(prefix), redisstore.WithTTL(time.Hour))
			if err != nil {
				t.Fatal(err)
			}
			return s
		}
		var nodes [2]waitingroom.Store
		for i := range nodes {
			opts := *shared.Options()
			c := redis.NewClient(&opts)
			t.Cleanup(func() { c.Close() })
			nodes[i] = open(c)
		}
		truth := open(shared)
		return func(room string) ([2]waitingroom.Store, waitingroom.Store, func()) {
			return nodes, truth, func() { _ = truth.Drop(context.Background(), room) }
		}
	}},
}

// modelRooms numbers the rooms of this process's runs.
var modelRooms atomic.Int64

func modelBudget(t *testing.T) time.Duration {
	if v := os.Getenv("FOYER_MODEL_BUDGET"); v != "" {
		d, err := time.ParseDuration(v)
		if err != nil || d <= 0 {
			t.Fatalf("FOYER_MODEL_BUDGET=%q: want a Go duration such as 60s or 10m", v)
		}
		return d
	}
	if testing.Short() {
		return 10 * time.Second
	}
	return 60 * time.Second
}

// rapidBatch is how many sequences one rapid.Check runs when the budget,
// not -rapid.checks, decides how many there are: small, so that the budget
// is overrun by little.
const rapidBatch = 8

// exploreAdmission runs new random sequences until the budget is spent, or
// exactly -rapid.checks of them (or the one -rapid.seed names) when that is
// given.
func exploreAdmission(t *testing.T, open modelOpener, budget time.Duration) {
	// A count, a seed or a fail file asked for on the command line means
	// one rapid.Check as asked, not a loop over the budget.
	chosen := os.Getenv("RAPID_CHECKS") != "" || os.Getenv("RAPID_SEED") != "" || os.Getenv("RAPID_FAILFILE") != ""
	flag.Visit(func(f *flag.Flag) {
		switch f.Name {
		case "rapid.checks", "rapid.seed", "rapid.failfile":
			chosen = true
		}
	})
	if !chosen {
		f := flag.Lookup("rapid.checks")
		old := f.Value.String()
		if err := f.Value.Set(fmt.Sprint(rapidBatch)); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = f.Value.Set(old) })
	}
	start := time.Now()
	deadline := start.Add(budget)
	var runs, steps int
	for {
		rapid.Check(t, func(rt *rapid.T) {
			m := admissionProperty(rt, open)
			runs++
			steps += m.steps
		})
		if chosen || time.Now().After(deadline) {
			break
		}
	}
	t.Logf("%d sequences, %d steps, in %s", runs, steps, time.Since(start).Round(time.Millisecond))
}

// admissionProperty is one random sequence: the room's settings, then steps.
func admissionProperty(t *rapid.T, open modelOpener) *admissionModel {
	cfg := modelSettings{
		Cap:          rapid.IntRange(2, 4).Draw(t, "cap"),
		Rate:         rapid.SampledFrom([]int{60, 120, 300, 600}).Draw(t, "rate"),
		ReturnWindow: rapid.SampledFrom([]time.Duration{waitingroom.DefaultReturnWindow, 30 * time.Second}).Draw(t, "return_window"),
		WaitingIdle:  rapid.SampledFrom([]time.Duration{waitingroom.DefaultWaitingIdleTimeout, time.Minute}).Draw(t, "waiting_idle_timeout"),
		Requeues:     rapid.SampledFrom([]int{0, 2}).Draw(t, "requeue_on_origin_error"),
		Seeds:        rapid.Uint32().Draw(t, "seeds"),
	}
	// Up to two phases, one after the other, each changing the cap, the
	// rate or both for a while: the waits cross their switches.
	at := time.Duration(0)
	for range rapid.IntRange(0, 2).Draw(t, "phases") {
		gap := rapid.IntRange(5, 120).Draw(t, "phase_gap")
		at += time.Duration(gap) * time.Second
		p := modelPhase{From: at, Cap: rapid.SampledFrom([]int{0, 1, 2, 5}).Draw(t, "phase_cap"),
			Rate: rapid.SampledFrom([]int{0, 30, 60, 600}).Draw(t, "phase_rate")}
		// Its own pre-queue, drawn at its start, opening after the
		// previous phase (docs/configuration.md, "Phases"), or none.
		p.Prequeue = time.Duration(rapid.IntRange(0, gap-1).Draw(t, "phase_prequeue")) * time.Second
		at += time.Duration(rapid.IntRange(5, 180).Draw(t, "phase_length")) * time.Second
		p.To = at
		cfg.Phases = append(cfg.Phases, p)
	}
	room := fmt.Sprintf("model-%d", modelRooms.Add(1))
	stores, truth, drop := open(room)
	t.Cleanup(drop)
	m, err := newAdmissionModel(t, cfg, room, stores, truth)
	if err != nil {
		t.Fatal(err)
	}
	t.Repeat(m.actions())
	return m
}

// maxModelLosses bounds the losses of the store in one sequence.
const maxModelLosses = 2

// steersAround reports whether sending the ticket cookie without its pass
// now would only show hole B again: while B is tolerated, a search goes
// around it rather than ending there, as it is met in most sequences.
func (m *admissionModel) steersAround(cookie string) bool {
	if !m.known[holeB] {
		return false
	}
	c := m.cookies[cookie]
	return c != nil && c.claimed && m.liveSessionOf(c.place.visitor, m.clock.Now()) != nil
}

// actions are rapid's events. Each one that needs a fan in some state
// skips, before drawing anything, when there is none (rapid then picks
// another action).
func (m *admissionModel) actions() map[string]func(*rapid.T) {
	node := func(t *rapid.T) int { return rapid.IntRange(0, len(m.nodes)-1).Draw(t, "node") }
	pick := func(t *rapid.T, fits func(*modelFan) bool) int {
		var idx []int
		for i, f := range m.fans {
			if fits(f) {
				idx = append(idx, i)
			}
		}
		if len(idx) == 0 {
			t.SkipNow()
		}
		return rapid.SampledFrom(idx).Draw(t, "fan")
	}
	active := func(f *modelFan) bool { return !f.quiet && f.ticket != "" }
	holdsPass := func(f *modelFan) bool { return !f.quiet && f.passCookie(m.clock.Now()) != "" }
	return map[string]func(*rapid.T){
		"join": func(t *rapid.T) {
			if len(m.fans) >= maxModelFans {
				t.SkipNow()
			}
			// Three accounts among the fans who sign in, so that two
			// browsers of one account meet often.
			acct := rapid.SampledFrom([]string{"", "acct-1", "acct-2", "acct-3"}).Draw(t, "account")
			m.do(modelStep{Op: opJoin, Node: node(t), Account: acct})
		},
		"poll": func(t *rapid.T) {
			f := pick(t, active)
			m.do(modelStep{Op: opPoll, Fan: f, Node: node(t)})
		},
		"codeJoin": func(t *rapid.T) {
			if len(m.fans) >= maxModelFans {
				t.SkipNow()
			}
			code := rapid.SampledFrom([]string{modelCodeMany, modelCodeOnce, modelCodeWrong}).Draw(t, "code")
			m.do(modelStep{Op: opCodeJoin, Node: node(t), Code: code})
		},
		"pollWithCode": func(t *rapid.T) {
			// A reload of a ?code= link: the fan keeps their place, the
			// code its use.
			f := pick(t, active)
			m.do(modelStep{Op: opPoll, Fan: f, Node: node(t), Code: modelCodeMany})
		},
		"presentPass": func(t *rapid.T) {
			f := pick(t, holdsPass)
			m.do(modelStep{Op: opPresentPass, Fan: f, Node: node(t)})
		},
		"oldTicket": func(t *rapid.T) {
			type held struct{ fan, copy int }
			var copies []held
			for i, f := range m.fans {
				for c, ck := range f.copies {
					if !f.quiet && !m.steersAround(ck) {
						copies = append(copies, held{i, c})
					}
				}
			}
			if len(copies) == 0 {
				t.SkipNow()
			}
			h := rapid.SampledFrom(copies).Draw(t, "copy")
			m.do(modelStep{Op: opOldTicket, Fan: h.fan, Copy: h.copy, Node: node(t)})
		},
		"latestTicket": func(t *rapid.T) {
			f := pick(t, func(f *modelFan) bool { return active(f) && !m.steersAround(f.ticket) })
			m.do(modelStep{Op: opLatestTicket, Fan: f, Node: node(t)})
		},
		"wait": func(t *rapid.T) {
			m.do(modelStep{Op: opWait, Seconds: rapid.IntRange(1, 90).Draw(t, "seconds")})
		},
		"revoke": func(t *rapid.T) {
			f := pick(t, holdsPass)
			m.do(modelStep{Op: opRevoke, Fan: f, Node: node(t)})
		},
		"requeue": func(t *rapid.T) {
			f := pick(t, holdsPass)
			m.do(modelStep{Op: opRequeue, Fan: f, Node: node(t)})
		},
		"operator": func(t *rapid.T) {
			setting := rapid.SampledFrom([]string{"paused", "queue_all", "sold_out"}).Draw(t, "setting")
			m.do(modelStep{Op: opOperator, Setting: setting, On: rapid.Bool().Draw(t, "on"), Node: node(t)})
		},
		"supply": func(t *rapid.T) {
			// The origin reports what is left: units come back (expired
			// holds, releases, refunds) or are taken.
			m.do(modelStep{Op: opSupply, Node: node(t), Units: uint64(rapid.IntRange(0, 6).Draw(t, "units"))})
		},
		"addPhase": func(t *rapid.T) {
			if m.settings.Phases.Len() >= waitingroom.MaxPhases {
				t.SkipNow()
			}
			gap := rapid.IntRange(0, 60).Draw(t, "phase_gap")
			from := time.Duration(gap) * time.Second
			p := modelPhase{From: from, To: from + time.Duration(rapid.IntRange(5, 120).Draw(t, "phase_length"))*time.Second,
				Cap: rapid.SampledFrom([]int{0, 1, 2, 5}).Draw(t, "phase_cap"), Rate: rapid.SampledFrom([]int{0, 30, 60, 600}).Draw(t, "phase_rate")}
			// A pre-queue opening within the gap, after the last phase's
			// start and the operator's change.
			p.Prequeue = time.Duration(rapid.IntRange(0, gap).Draw(t, "phase_prequeue")) * time.Second
			m.do(modelStep{Op: opAddPhase, Node: node(t), Phase: p})
		},
		"quiet": func(t *rapid.T) {
			m.do(modelStep{Op: opQuiet, Fan: pick(t, active)})
		},
		"comeBack": func(t *rapid.T) {
			f := pick(t, func(f *modelFan) bool { return f.quiet })
			m.do(modelStep{Op: opComeBack, Fan: f, Node: node(t)})
		},
		"storeLost": func(t *rapid.T) {
			// Rare: at most twice in a sequence. Drawn only when
			// FOYER_MODEL_LOSSES is set (make chaos sets it): the holes
			// a loss still opens (E to I, and more the exploration
			// finds) are being closed; the regressions run always.
			if len(m.losses) >= maxModelLosses || os.Getenv("FOYER_MODEL_LOSSES") == "" {
				t.SkipNow()
			}
			m.do(modelStep{Op: opStoreLost})
		},
		"": func(*rapid.T) { m.check() },
	}
}
