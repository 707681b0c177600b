package waitingroom

import (
	"context"
	"errors"
	"fmt"
	"net/netip"
	"time"
)

// RequestKind says what a fan's request asks for.
type RequestKind uint8

// The kinds of request on a fan's path.
const (
	// RequestPage is a request for the site: it goes on to the origin when
	// the visitor is in, and gets the waiting page (or the status as JSON)
	// otherwise.
	RequestPage RequestKind = iota
	// RequestStatus is the status endpoint: the visitor's status, and their
	// pass when their turn has come.
	RequestStatus
	// RequestJoin is POST join: an answer to the proof of work. A visitor
	// who holds a place or a session already is answered as a status poll.
	RequestJoin
)

// Arrival is everything the room needs to know of a fan's request, read by
// the gateway from the connection, its cookies and its headers. The room reads
// nothing else of the request: the same facts give the same decision on any
// node.
type Arrival struct {
	Kind RequestKind
	// Client is the client's address as the server determined it (behind
	// trusted proxies, the address they forwarded for). It binds proof-of-work
	// seeds and counts against join_limit, both by the client's network
	// (ClientNetwork).
	Client netip.Addr
	// Account is the account the site's own login vouched for, when
	// HasAccount: the room keeps each account to one place and one session.
	Account    AccountKey
	HasAccount bool
	// Ticket and Pass are the values of the room's cookies as sent, "" for
	// none. A ticket or pass that does not open (forged, expired, another
	// room's) is as good as none: never an error.
	Ticket string
	Pass   string
	// Answer is the answer to the proof of work, for RequestJoin.
	Answer Answer
	// Code is the access code the fan sent (?code=, the page's form, the
	// X-Waiting-Room-Code header), as typed; "" for none. It is used only
	// when it makes a place (docs/codes.md).
	Code string
	// Lane is the lane a newcomer joins (Joiner.Lane; docs/line.md,
	// "Priority lanes"), as a redeemed code gives it; "": the general lane.
	Lane string
}

// Answer is a newcomer's answer to a proof-of-work seed.
type Answer struct {
	Seed, Nonce string
}

// Decision is what the room decided for an arrival: what to answer, and which
// cookies to set. The gateway writes it and decides nothing itself.
type Decision struct {
	// Transition is the row of the admission table (Transitions) the
	// decision followed last.
	Transition *Transition
	// Status is the visitor's status. It is left empty for a RequestPage that
	// goes on to the origin with a pass it came with: nobody reads it.
	Status Status
	// Pass is the pass the visitor holds, when they are in: the request goes
	// on to the origin with it. NewPass says it was signed now and its cookie
	// must be set.
	Pass      string
	Admission Pass
	NewPass   bool
	// Ticket is the visitor's ticket; SetTicket says its cookie must be set
	// (it is new, or changed, or due for renewal).
	Ticket    Ticket
	SetTicket bool
	// Rejoined is set when the visitor's old ticket was spent and they were
	// given a new place at the back (or, while the room asks for a proof of
	// work, the puzzle to earn one).
	Rejoined bool
}

// In reports whether the visitor is in: the request may go on to the origin
// with Decision.Pass.
func (d Decision) In() bool { return d.Pass != "" }

// Admit decides a fan's request: the one call on a fan's path (docs/endpoints.md, "What
// fans, apps and origins see"). A valid pass goes in with no store call; a
// ticket gets its place from this node's view with no store call, unless the
// line reached it (one call, to claim) or it was claimed already (one call,
// for the store to say whether its session is live); a newcomer joins (one
// call) or is given the puzzle. Refusals are errors: a *JoinLimitedError (429),
// ErrStoreUnavailable (503), and for an answer the Err* of pow.go (4xx); none
// of them makes a place.
func (r *Room) Admit(ctx context.Context, a Arrival) (Decision, error) {
	in := arrival{client: a.Client, account: a.Account, hasAccount: a.HasAccount, code: a.Code, lane: a.Lane}
	if a.Pass != "" {
		if p, err := r.CheckPass(a.Pass); err == nil {
			if !r.mustReclaim(p) {
				d := Decision{Transition: machine[TicketInSession][EventPass], Pass: a.Pass, Admission: p}
				if tok, q, ok := r.claimReturns(p); ok {
					d.Pass, d.Admission, d.NewPass = tok, q, true
				}
				if a.Kind != RequestPage {
					d.Status = r.AdmittedStatus(p)
					d.Status.DrawIndex = r.keyOf(a.Ticket, p)
				}
				return d, nil
			}
			if d, ok, err := r.reclaim(ctx, &in, a, p); ok || err != nil {
				return d, err
			}
			// The store says the session is over: the pass is refused,
			// and the ticket decides.
		}
	}
	if r.settings().QueueingMethod == Passthrough || (r.openOnFailure && !r.Healthy()) {
		return r.passThrough()
	}
	var was TicketCookie
	opened := false
	if a.Ticket != "" {
		if c, err := r.OpenTicketCookie(a.Ticket); err == nil {
			was, opened = c, true
		}
	}
	var vis Visit
	var err error
	switch {
	case opened:
		vis, err = r.poll(ctx, &in, was.Ticket)
		if err == nil && a.Kind == RequestJoin && vis.Rejoined && vis.Status.State == StateChallenge {
			// The ticket was spent and its rejoin asks for the puzzle,
			// which this request answers: the answer makes the new place.
			vis, err = r.answer(ctx, &in, a.Answer)
			vis.Rejoined = true
		}
	case a.Kind == RequestJoin:
		vis, err = r.answer(ctx, &in, a.Answer)
	default:
		vis, err = r.arrive(ctx, &in)
	}
	if err != nil {
		if r.openOnFailure && errors.Is(err, ErrStoreUnavailable) && !errors.Is(err, ErrSettling) {
			// The store failed just now, and the operator chose to let
			// everyone through rather than hold anyone. A room settling
			// after a loss has a store: it holds newcomers whatever the
			// failure mode.
			return r.passThrough()
		}
		return Decision{}, err
	}
	d := Decision{
		Transition: vis.transition,
		Status:     vis.Status,
		Pass:       vis.Pass,
		Admission:  vis.Admission,
		NewPass:    vis.Pass != "",
		Ticket:     vis.Ticket,
		Rejoined:   vis.Rejoined,
	}
	d.SetTicket = vis.Ticket.Room != "" && (!opened || r.MustReseal(was, vis.Ticket))
	return d, nil
}

// passThrough signs a pass with no session behind it: a passthrough room, or
// a store away with on_store_failure open.
func (r *Room) passThrough() (Decision, error) {
	tok, p, err := r.IssuePassthrough()
	if err != nil {
		return Decision{}, err
	}
	return Decision{Transition: machine[TicketNew][EventPass], Pass: tok, Admission: p, NewPass: true, Status: r.AdmittedStatus(p)}, nil
}

// arrival is what the request path knows of a request as it goes: the facts
// of the Arrival, and what it learned on the way.
type arrival struct {
	client     netip.Addr
	account    AccountKey
	hasAccount bool
	// spent, when hasSpent, is the place the request's ticket held: should
	// the visitor rejoin, that place is over (an account's recorded place is
	// replaced, not kept).
	spent    uint64
	hasSpent bool
	// polled is set once this request polled a place its account held: a
	// rejoin from that poll must not poll another found place in turn (the
	// store never hands back a spent place, so this only bounds the
	// recursion should that ever break).
	polled bool
	// network, once this node's join_limit let the join through, is the
	// client network the store counts the place against for every node
	// (Joiner.Client); "" while nothing weighed it.
	network string
	// seed and seedUntil name the proof-of-work seed the join answered: the
	// store makes one place per seed (Joiner.Seed).
	seed      string
	seedUntil time.Time
	// code is the access code the request carried, as typed; lane is the
	// lane the newcomer joins (Arrival.Lane, or, once the store accepted
	// the code, the code's lane: Joiner.Lane).
	code string
	lane string
}

// joiner is who the store is asked to make a place for: the new ticket's
// visitor, weighed as the arrival says.
func (a *arrival) joiner(visitor VisitorID) Joiner {
	return Joiner{Visitor: visitor.String(), Client: a.network, Seed: a.seed, SeedUntil: a.seedUntil, Lane: a.lane}
}

// follow looks up the transition from s on e. A pair the table lacks is a
// defect: ErrNoTransition, which the gateway answers with a 500 and the
// model-based test fails on.
func follow(s TicketState, e Event) (*Transition, error) {
	tr, ok := next(s, e)
	if !ok {
		return nil, fmt.Errorf("%w: %s on %s", ErrNoTransition, s, e)
	}
	return tr, nil
}

// arrive answers a newcomer: the room's page when it gives no places, the
// puzzle while it asks for one, else a place (join_limit allowing).
func (r *Room) arrive(ctx context.Context, a *arrival) (Visit, error) {
	if !r.settings().placesOpen(r.now()) {
		return r.join(ctx, a) // shows the room: no place is made
	}
	if a.code != "" {
		return r.redeem(ctx, a)
	}
	if now := r.now(); r.settings().At(now).CodesRequired {
		return r.askCode(now), nil
	}
	if st, ok := r.newChallenge(a.client); ok {
		return Visit{Status: st, transition: machine[TicketChallenged][EventArrive]}, nil
	}
	if err := r.allowJoin(a); err != nil {
		return Visit{transition: machine[TicketNew][EventOverJoinLimit]}, err
	}
	vis, err := r.join(ctx, a)
	if err != nil {
		r.ReturnJoin(a.client) // no place was made
	}
	return vis, err
}

// allowJoin is AllowJoin for an arrival about to join: past this node's own
// table, the store weighs the place again for every node (arrival.network).
func (r *Room) allowJoin(a *arrival) error {
	if err := r.AllowJoin(a.client); err != nil {
		return err
	}
	if !r.settings().JoinLimit.IsZero() {
		a.network = ClientNetwork(a.client)
	}
	return nil
}

// Poll answers a visitor holding a ticket, as Admit does for a ticket with no
// pass, no account and no client address: their place, from this node's
// view, with no store call, unless they have reached the front; then it
// claims their session (one store call) and returns the pass.
func (r *Room) Poll(ctx context.Context, t Ticket) (Visit, error) {
	return r.poll(ctx, &arrival{}, t)
}

// join makes a place at the back.
func (r *Room) join(ctx context.Context, a *arrival) (Visit, error) {
	now := r.now()
	v := r.view.Load()
	s := v.settings
	t := Ticket{Room: r.id, Visitor: NewVisitorID(), Joined: now, Seen: now}
	// Visitors who come before the pre-queue opens, after the room closed, or to a
	// sold-out or rejecting room get no place: there is no line to join.
	if !s.placesOpen(now) {
		st, _ := v.status(t, now)
		st.DrawIndex = nil // no place, so no key
		return Visit{Status: st, transition: machine[TicketNew][EventRoomShut]}, nil
	}
	if s.At(now).CodesRequired && a.lane == "" {
		// Invite-only: a place is for a code's holder (an answer to the
		// puzzle is no code).
		return r.askCode(now), nil
	}
	if v.settling(now) {
		// The store lost the line and the fans are telling it again where
		// they stood: no key now could be placed right.
		return Visit{transition: machine[TicketNew][EventStoreAway]}, fmt.Errorf("%w: %w", ErrStoreUnavailable, ErrSettling)
	}
	if err := r.joinable(v); err != nil {
		return Visit{transition: machine[TicketNew][EventStoreAway]}, err
	}
	lim := s.limitsAt(now)
	if a.hasAccount {
		return r.joinAccount(ctx, a, v, t, now, lim)
	}
	res, err := r.joins.join(ctx, a.joiner(t.Visitor), func(ctx context.Context, joiners []Joiner) ([]JoinResult, error) {
		res, err := r.store.JoinMany(ctx, r.id, joiners, now, lim)
		if errors.Is(err, ErrNoRoom) {
			if err = r.reseed(ctx, now); err == nil {
				res, err = r.store.JoinMany(ctx, r.id, joiners, now, lim)
			}
		}
		return res, err
	})
	if err != nil {
		return Visit{transition: machine[TicketNew][EventStoreAway]}, r.joinFailed(ctx, err)
	}
	if res.Refused != NotRefused {
		return r.refused(res)
	}
	r.stats.Joins.Add(1)
	r.mu.Lock()
	r.raiseMaxKey(res.Key)
	r.mu.Unlock()
	return r.placed(v, t, res, now)
}

// refused answers a joiner the store made no place for: over join_limit
// counted across every node sharing the store, or answering a seed that
// bought a place already, on any of them.
func (r *Room) refused(res JoinResult) (Visit, error) {
	if res.Refused == RefusedJoinLimit {
		r.stats.JoinsLimited.Add(1)
		return Visit{transition: machine[TicketNew][EventOverJoinLimit]}, &JoinLimitedError{RetryAfter: res.RetryAfter}
	}
	r.stats.AnswersRefused.Add(1)
	return Visit{}, ErrSeedSpent
}

// placed answers a visitor given a new place with key res.Key: in at once
// when the store admitted them on the spot.
func (r *Room) placed(v *view, t Ticket, res JoinResult, now time.Time) (Visit, error) {
	t.Key = res.Key
	if res.Admitted {
		r.stats.DirectAdmits.Add(1)
		t.Place = res.Key
		vis, err := r.admitted(t, res.Expires, now)
		vis.transition = machine[TicketNew][EventArrive]
		return vis, err
	}
	st, t := v.status(t, now)
	r.noteTold(t, st)
	return Visit{Status: st, Ticket: t, transition: machine[TicketNew][EventArrive]}, nil
}

// poll answers a ticket presented without a valid pass.
func (r *Room) poll(ctx context.Context, a *arrival, t Ticket) (Visit, error) {
	if a.hasAccount {
		// Should this visitor have to rejoin, the place this ticket holds
		// is over.
		a.spent, a.hasSpent = t.Key, true
	}
	if t.Claimed {
		return r.afterPass(ctx, a, t)
	}
	now := r.now()
	v := r.view.Load()
	r.stats.Polls.Add(1)
	r.noteTicket(v, t)
	st, t := v.status(t, now)
	r.markWaiting(t, st)
	if st.Reconnecting && st.State == StateQueued {
		// This node's view is stale: other nodes may have moved the line
		// past this fan already. Ask again soon (the next poll may reach a
		// node that knows) rather than for as long as the stale view says.
		st.RefreshSeconds = min(st.RefreshSeconds, minRefresh)
	}
	from, ev := TicketWaiting, EventPoll
	if st.State == StateAdmitted {
		from = TicketAtFront
		if !v.healthy {
			// Nobody is admitted while the store is away, even those
			// whose turn came: the store may not have them down as
			// admitted.
			ev = EventStoreAway
		}
	} else if st.Reconnecting {
		ev = EventStoreAway
	}
	if st.State == StateWaitlist {
		from = TicketWaitlisted
	}
	if ev == EventPoll && a.code != "" {
		// A code sent with a ticket is not used: the fan keeps the place
		// they hold (docs/codes.md).
		ev = EventCode
	}
	tr, err := follow(from, ev)
	if err != nil {
		return Visit{}, err
	}
	switch tr.Action {
	case ActionShowPlace:
		return Visit{Status: st, Ticket: t, transition: tr}, nil
	case ActionHold:
		vis := r.holding(st, t)
		vis.transition = tr
		return vis, nil
	}
	return r.claim(ctx, a, v, from, st, t, now)
}

// afterPass answers a claimed ticket presented without a valid pass: a copy of
// it, a fan whose pass cookie was lost, or one whose session ended, idled out
// or was revoked. Only the store knows which, so it is asked (one round
// trip): a live session gives its own pass again, never a second place or
// session; an idled-out one resumes, to the end it had; an ended one is over.
func (r *Room) afterPass(ctx context.Context, a *arrival, t Ticket) (Visit, error) {
	now := r.now()
	v := r.view.Load()
	st := v.frontStatus(r.id)
	from := TicketInSession
	if r.idled.has(t.Visitor.String()) {
		from = TicketIdledOut
	}
	if !v.healthy {
		st.Reconnecting = true
		return r.holding(st, t), nil
	}
	return r.claim(ctx, a, v, from, st, t, now)
}

// claim asks the store for the visitor's session and follows the table on
// its answer.
func (r *Room) claim(ctx context.Context, a *arrival, v *view, from TicketState, st Status, t Ticket, now time.Time) (Visit, error) {
	lim := v.settings.limitsAt(now)
	res, err := r.store.Claim(ctx, r.id, t.Visitor.String(), t.Place, now, lim)
	if errors.Is(err, ErrNoRoom) {
		if err = r.reseed(ctx, now); err == nil {
			res, err = r.store.Claim(ctx, r.id, t.Visitor.String(), t.Place, now, lim)
		}
	}
	if err != nil {
		r.storeFailed()
		st.Reconnecting = true
		return r.holding(st, t), nil
	}
	ev := claimEvents[res.Status]
	if res.Status == Claimed && from == TicketIdledOut {
		ev = EventClaimResumed
	}
	tr, err := follow(from, ev)
	if err != nil {
		return Visit{}, err
	}
	return r.claimed(ctx, a, v, tr, res, st, t, now)
}

// claimed carries out the transition the store's answer to a claim (or a
// reclaim) led to.
func (r *Room) claimed(ctx context.Context, a *arrival, v *view, tr *Transition, res ClaimResult, st Status, t Ticket, now time.Time) (Visit, error) {
	switch tr.Action {
	case ActionReissue:
		if tr.From != TicketInSession && tr.From != TicketReclaiming {
			r.stats.Claims.Add(1)
		}
		vis, err := r.admitted(t, res.Expires, now)
		vis.transition = tr
		return vis, err
	case ActionHold:
		vis := r.holding(st, t)
		if tr.To == TicketRequeued {
			// The page says the site had a problem and the fan keeps
			// their turn (docs/PROTOCOL.md, "Requeue").
			vis.Status.Requeued = true
		}
		if tr.To == TicketReturned {
			vis.Status.Returned = true
			if res.Status == Held {
				// Held with everyone, and first in when it admits again.
				vis.Status.State = StatePaused
				if v.settings.SoldOut {
					// Sold out with the waitlist on: held at the
					// front of the waitlist until the sale reopens.
					vis.Status.State = StateWaitlist
				}
				vis.Status.RefreshSeconds = v.maxRefresh()
			}
		}
		vis.transition = tr
		return vis, nil
	case ActionRejoin:
		vis, err := r.rejoin(ctx, a)
		vis.Status.TurnPassed = tr.To == TicketTurnPassed
		if vis.transition == nil {
			vis.transition = tr
		}
		return vis, err
	}
	return Visit{}, fmt.Errorf("%w: %s on %s does %s", ErrNoTransition, tr.From, tr.Event, tr.Action)
}

// claimEvents are the events the store's answers to a claim are.
var claimEvents = [...]Event{
	Claimed:  EventClaimOpened,
	NotYet:   EventClaimNotYet,
	Full:     EventClaimFull,
	Finished: EventClaimFinished,
	Held:     EventClaimHeld,
	Passed:   EventClaimPassed,
	Requeued: EventClaimRequeued,
}

// holding tells a visitor at the front to stay on the page a moment longer.
func (r *Room) holding(st Status, t Ticket) Visit {
	st.State = StateQueued
	st.RefreshSeconds = minRefresh
	return Visit{Status: st, Ticket: t}
}

// rejoin gives a visitor whose ticket is spent (their session ended, or
// their turn passed) a new place at the back, as a newcomer: while the room
// asks newcomers for a proof of work it gives them the puzzle instead (a
// spent ticket, which anyone may copy, is no free pass to new places), and
// the new place weighs on the address's join_limit.
func (r *Room) rejoin(ctx context.Context, a *arrival) (Visit, error) {
	vis, err := r.arrive(ctx, a)
	vis.Rejoined = true
	return vis, err
}

// answer checks a newcomer's answer to a seed and, when it is right and the
// seed bought no place before, joins them. This node's spent set refuses a
// seed answered here for free; the store refuses one answered on any node
// sharing it (or here before a restart), in the join's own round trip.
func (r *Room) answer(ctx context.Context, a *arrival, ans Answer) (Visit, error) {
	now := r.now()
	id, expires, err := r.checkAnswer(ClientNetwork(a.client), ans.Seed, ans.Nonce, now)
	if err != nil {
		r.stats.AnswersRefused.Add(1)
		return Visit{}, err
	}
	if err := r.spent.spend(id, expires, now); err != nil {
		r.stats.AnswersRefused.Add(1)
		return Visit{}, err
	}
	// A right answer makes a place, so it spends the address's join_limit
	// allowance; over it, the seed stays good for a try after Retry-After.
	if err := r.allowJoin(a); err != nil {
		r.spent.forget(id)
		return Visit{}, err
	}
	// Another node may take an answer until the seed expires by its clock,
	// which may run behind this one's by up to seedSkew.
	a.seed, a.seedUntil = seedEncoding.EncodeToString(id[:]), expires.Add(seedSkew)
	vis, err := r.join(ctx, a)
	if err != nil {
		// No place was made: the fan keeps the allowance and, unless the
		// store says the seed bought a place already, may try the same
		// answer again (after Retry-After, or once the store answers)
		// rather than solve a new seed.
		if !errors.Is(err, ErrSeedSpent) {
			r.spent.forget(id)
		}
		r.ReturnJoin(a.client)
	}
	if vis.transition == machine[TicketNew][EventArrive] {
		vis.transition = machine[TicketNew][EventAnswer]
	}
	return vis, err
}
