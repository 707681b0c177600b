package waitingroom

import (
	"context"
	"encoding/json"
	"errors"
	"math"
	"sync"
	"time"
)

// What a room keeps across a loss of its store, and how a node restores it.
//
// A store that comes back empty is re-seeded by the nodes from the last view
// each holds (reseed, and refresh on seeing a new incarnation): the line's
// counters, held slots, admissions, draws, and also the runtime overrides
// with their version (a node never falls back to its configuration when it
// knows the room was overridden: a lower version in the store means the store
// forgot) and the "forgotten" watermark.
//
// Finished fans are not copied into node memory. Instead a re-created room
// refuses, as finished, claims for places below the watermark: places whose
// admission window had ended before the loss. Their holders either claimed
// (and their session is live, or over) or let their turn lapse; the store no
// longer knows which, so such a ticket rejoins at the back rather than risk a
// second pass. Places in admissions still within their window come back with
// their claim counts, and a fully claimed one refuses further claims too. This
// costs the store a few numbers per room and the poll path nothing.
//
// When every node that knew the room was lost with the store, only the fans
// know where the line was: their tickets carry their order keys and their
// passes the places admitted. A node that ran the room before (Config.Resumed)
// and finds no record of it re-creates it settling: for one poll interval
// nobody is admitted and no key is handed out, while returning tickets raise
// the keys above theirs and passes restore serving and count against the cap
// (announce). Then the line moves on, newcomers behind every returning ticket.
// The overrides survive that too: each node keeps a memo of them outside the
// store (Memo), in force from its start.

// settleWindow is how long a room re-created after a loss holds newcomers: the
// longest a waiting fan leaves between two polls, and two refreshes for the
// nodes to pass on what those polls announced.
func settleWindow(s Settings) time.Duration {
	v := view{settings: s}
	return time.Duration(v.maxRefresh())*time.Second + 2*RefreshInterval
}

// wholeRecall is this node's whole view of the room, to re-create it with, or to
// restore a room that a node knowing less re-created. Call with r.mu held.
func (r *Room) wholeRecall(now time.Time, v *view) Recall {
	seed := Recall{
		Counters:    v.snap.Counters,
		DrawClosed:  v.snap.DrawClosed,
		DrawSize:    v.snap.DrawSize,
		Epochs:      v.snap.Epochs,
		PhaseRanges: v.snap.PhaseRanges,
		Whole:       r.known,
		Lanes:       v.snap.Lanes,
		LaneCredit:  v.snap.LaneCredit,
		LaneSpec:    v.snap.LaneSpec,
	}
	if w := v.snap.Waitlist; w.On() {
		seed.Waitlist = w
		seed.WaitlistOwedUntil = now.Add(v.settings.AdmissionGrace + v.settings.SessionDuration)
	} else {
		seed.WaitlistEnded = w.Ended
	}
	seed.Overrides, seed.OverridesVersion = r.overridesSeed()
	if r.known {
		margin := uint64(math.Ceil(r.flow.joinRate()*(now.Sub(v.at).Seconds()+1))) + reseedMargin
		seed.Seq = max(seed.Seq, r.maxKey)
		if v.settings.QueueingMethod == FIFO && !v.settings.drawn() {
			// Places are keys: the margin's can be judged by their beats.
			seed.MarginFrom = seed.Seq
		}
		seed.Seq += margin
		// Live sessions, and admissions that may have been claimed since this
		// node last looked, keep their slots as anonymous held ones (their
		// passes may be out there); the admissions come back too, so that a
		// fan who had yet to claim still can, within their grace.
		seed.Held = v.snap.Active + v.snap.Pending
		seed.HeldUntil = now.Add(reseedHold(v.settings))
		seed.LostAt = now
		seed.Batches = v.snap.Batches
		seed.Forgotten = max(v.snap.Forgotten, v.snap.Serving)
		if len(v.snap.Batches) > 0 {
			if lane, _ := LaneOfPlace(v.snap.Batches[0].Start); lane == 0 {
				seed.Forgotten = max(v.snap.Forgotten, v.snap.Batches[0].Start)
			}
		}
	}
	return seed
}

// reseedHold is how long the slots a re-seed holds for the sessions the store
// lost stand (Recall.Held): session_idle_timeout, when it is set (a session
// unused for that long would have idled out anyway), else a minute, and never
// past a whole session. Each session still in use is found well within it: the
// first request its pass carries to any node reclaims it (Room.Admit), and
// takes over one of the held slots. Revoking a session the store lost gives one
// up too. What is left when the hold ends stood for sessions nobody used since
// the loss, and frees for the line; should such a holder come back, they are
// let in as a returner, at the front, when a slot is free.
func reseedHold(s Settings) time.Duration {
	hold := time.Minute
	if s.SessionIdleTimeout > 0 {
		hold = s.SessionIdleTimeout
	}
	return min(hold, s.SessionDuration)
}

// overridesSeed encodes the overrides this node holds. Call with r.mu held.
func (r *Room) overridesSeed() ([]byte, int64) {
	if r.version == 0 {
		return nil, 0
	}
	data, err := json.Marshal(r.overrides)
	if err != nil {
		return nil, 0
	}
	return data, r.version
}

// pushOverrides puts back the overrides this node knows, in a store that holds
// an older version of them (it lost them, and a node that knew less re-created
// the room).
func (r *Room) pushOverrides(ctx context.Context) error {
	r.mu.Lock()
	data, version := r.overridesSeed()
	r.mu.Unlock()
	if version == 0 {
		return nil
	}
	r.stats.Reseeds.Add(1)
	err := r.store.Init(ctx, r.id, Recall{Overrides: data, OverridesVersion: version, RaiseOnly: true})
	if errors.Is(err, ErrNoRoom) {
		err = r.reseed(ctx, r.now())
	}
	return err
}

// settling reports whether the room holds newcomers at now.
func (v *view) settling(now time.Time) bool {
	return now.Before(v.snap.SettleUntil)
}

// announcements are what returning fans told this node about a line the
// store lost, waiting to go to the store with the next tick.
type announcements struct {
	mu       sync.Mutex
	seq      uint64 // the next key above every returning ticket's
	serving  uint64 // the next place above every pass seen while settling
	sessions map[string]HeldSession
	sent     map[string]struct{} // visitors already announced
}

// maxAnnounced bounds the sessions a node remembers announcing: passes beyond
// it are announced again at worst, which the store ignores.
const maxAnnounced = 1 << 16

// ticket notes a returning ticket whose key the store has not handed out.
func (a *announcements) ticket(key uint64) {
	a.mu.Lock()
	a.seq = max(a.seq, key+1)
	a.mu.Unlock()
}

// memo notes the counters a node's memo kept from a previous run.
func (a *announcements) memo(serving, seq uint64) {
	a.mu.Lock()
	a.serving = max(a.serving, serving)
	a.seq = max(a.seq, seq)
	a.mu.Unlock()
}

// pass notes a pass seen while the room settles.
func (a *announcements) pass(p Pass, fifo bool, retention time.Duration) {
	a.mu.Lock()
	defer a.mu.Unlock()
	if lane, _ := LaneOfPlace(p.OrderKey); fifo && lane == 0 {
		// Another lane's place says nothing of the general lane's serving
		// (docs/line.md, "Priority lanes").
		a.serving = max(a.serving, p.OrderKey+1)
	}
	if _, ok := a.sent[p.Subject]; ok {
		return
	}
	if a.sessions == nil {
		a.sessions = make(map[string]HeldSession)
	}
	if len(a.sessions) < maxAnnounced {
		a.sessions[p.Subject] = HeldSession{Visitor: p.Subject, Until: p.ExpiresAt, Forget: p.ExpiresAt.Add(retention)}
	}
}

// take returns the seed announcing what was noted since the last call, and
// whether there is anything to send.
func (a *announcements) take(snap Snapshot) (Recall, bool) {
	a.mu.Lock()
	defer a.mu.Unlock()
	var seed Recall
	if a.seq > snap.Seq {
		seed.Seq = a.seq
	}
	if a.serving > snap.Serving {
		seed.Serving, seed.Admitted, seed.Forgotten = a.serving, a.serving, a.serving
	}
	if len(a.sessions) > 0 {
		if a.sent == nil || len(a.sent) >= maxAnnounced {
			a.sent = make(map[string]struct{})
		}
		for v, hs := range a.sessions {
			seed.Sessions = append(seed.Sessions, hs)
			a.sent[v] = struct{}{}
		}
		a.sessions = nil
	}
	return seed, seed.Seq > 0 || seed.Serving > 0 || len(seed.Sessions) > 0
}

// flushAnnouncements sends what returning fans announced to the store.
func (r *Room) flushAnnouncements(ctx context.Context) error {
	seed, ok := r.ann.take(r.view.Load().snap)
	if !ok {
		return nil
	}
	seed.RaiseOnly = true
	err := r.store.Init(ctx, r.id, seed)
	if errors.Is(err, ErrNoRoom) {
		err = r.reseed(ctx, r.now())
	}
	return err
}

// noteTicket is called for a waiting fan's ticket: one whose key the store
// has not reached, though it was issued well before this node's view was
// read, can only come from a line the store lost.
func (r *Room) noteTicket(v *view, t Ticket) {
	if !v.healthy || t.Key < v.snap.Seq || !t.Joined.Before(v.at.Add(-staleView)) {
		return
	}
	if lane, _ := LaneOfPlace(t.Key); lane > 0 {
		// Another lane's place: its keys are that lane's, which nodes
		// re-seed from their views (Recall.Lanes), not the order keys.
		return
	}
	r.ann.ticket(t.Key)
}

// staleView is how old a ticket must be, against a view, before its key
// beyond the view's counters can only mean a loss: younger ones may have been
// handed out by another node since the view was read.
const staleView = 2 * time.Second

// notePass is called for every valid pass: while the room settles after a
// loss, passes tell where serving was and which sessions are live. Otherwise
// it costs the admitted path one load and one test.
func (r *Room) notePass(p Pass) {
	v := r.view.Load()
	if !v.announcing {
		return
	}
	fifo := v.settings.QueueingMethod == FIFO && !v.settings.drawn()
	r.ann.pass(p, fifo, v.settings.TicketLifetime)
}

// Memo is what a node keeps of a room outside the store, where it outlives
// both the node's memory and the store's data (the gateway keeps it in Caddy
// storage): the runtime overrides with their version, the line's counters as
// the node last saw them, and when it was last written. A node that starts
// with one applies its overrides at once, puts them back into a store that
// lost them, and, while it is recent, knows the room ran before
// (Config.Resumed). Waiting says people were in line when it was written (or
// since): a store that dies with its node (the memory store) lost a line only
// then.
//
// Serving and Seq are the admission watermark and the next order key as the
// node last saw them. When every node was lost with the store, the room is
// re-created blank, and no pass may come back while it settles to say how
// far admission had gone: each node that starts resumed announces its memo's
// counters like a returning fan, so the room resumes from the highest any
// node saw, and places already let in are not let in again (places below
// Serving count as forgotten: a claim from one that holds no live session is
// refused as finished).
type Memo struct {
	Overrides json.RawMessage `json:"overrides,omitempty"`
	Version   int64           `json:"version"`
	Waiting   bool            `json:"waiting,omitempty"`
	Serving   uint64          `json:"serving,omitempty"`
	Seq       uint64          `json:"seq,omitempty"`
	At        time.Time       `json:"at"`
}

// memoEvery is how often a running node renews its memo even when nothing
// changed, so that its age says when the room last ran.
const memoEvery = time.Minute

// remember hands the node's memo to Config.Remember when the overrides
// changed, a line formed, serving or the order keys moved, or the last one is
// old. A place is let in only through a node whose view has serving past it,
// and that view is published only after its memo was handed over: a memo that
// lagged would let those places in a second time after a loss of everything.
// Counters are seen only by a refresh, so a moving line costs at most one
// write a refresh (two a second, a few hundred bytes each) per room and node;
// an idle room one a minute. A line that empties is recorded only with the
// renewal, so a line that keeps forming and emptying costs at most two writes
// a renewal. Call with r.mu held; the callback must not block.
func (r *Room) remember(now time.Time, changed bool, waiting bool) {
	if r.rememberFn == nil {
		return
	}
	formed := waiting && !r.memoWaiting
	moved := r.memoLine != r.lineSeen
	if !changed && !formed && !moved && now.Sub(r.memoAt) < memoEvery {
		return
	}
	r.memoAt, r.memoWaiting, r.memoLine = now, waiting, r.lineSeen
	data, version := r.overridesSeed()
	r.rememberFn(Memo{Overrides: data, Version: version, Waiting: waiting, Serving: r.lineSeen.serving, Seq: r.lineSeen.seq, At: now})
}

// lineMark is how far a line had gone: its admission watermark and its next
// order key.
type lineMark struct{ serving, seq uint64 }

// see raises the line's mark to what a snapshot shows, and to the keys this
// node handed out. Call with r.mu held.
func (r *Room) see(snap Snapshot) {
	r.lineSeen.serving = max(r.lineSeen.serving, snap.Serving)
	r.lineSeen.seq = max(r.lineSeen.seq, snap.Seq, r.maxKey)
}

// recall applies the overrides of a memo a previous run left, and, for a room
// that ran before (resumed), announces the line's counters it kept, to raise
// a store that lost them (see Memo).
func (r *Room) recall(m *Memo, resumed bool) {
	if m == nil {
		return
	}
	if resumed {
		r.lineSeen = lineMark{serving: m.Serving, seq: m.Seq}
		r.memoLine = r.lineSeen
		r.ann.memo(m.Serving, m.Seq)
	}
	if m.Version == 0 {
		return
	}
	var o Overrides
	if len(m.Overrides) > 0 && json.Unmarshal(m.Overrides, &o) != nil {
		return // unreadable: the store's, when it has them, will do
	}
	if o.Apply(r.base).Validate() != nil {
		return
	}
	r.overrides, r.version = o, m.Version
}

// mustReclaim reports whether a valid pass must be taken over by the store
// before it goes in: it was issued before the store lost the room (its
// session may be unknown to this incarnation), the store answers, the room is
// not settling (then the pass is announced instead: notePass), and this node
// has not reclaimed its session already. A pass signed after the loss never
// is, so the cost is one store call per session that outlived a loss, on the
// first node its holder reaches: the reclaim signs the pass again.
func (r *Room) mustReclaim(p Pass) bool {
	v := r.view.Load()
	lost := v.snap.LostAt
	if lost.IsZero() || !v.healthy || v.announcing || !p.IssuedAt.Before(lost) {
		return false
	}
	if v.settings.QueueingMethod == Passthrough {
		return false // its passes have no session behind them
	}
	return !r.reclaimed.has(p.Subject, v.snap.Incarnation)
}

// reclaim asks the store to take over the session of a pass issued before a
// loss (Store.Reclaim), and follows the table on its answer: the session goes
// on with its pass signed again (same id and end); or, no slot being free, its
// holder waits at the front as a returner. ok is false when the store says the
// session is over: the pass is refused, and the request goes on as one
// without it.
func (r *Room) reclaim(ctx context.Context, a *arrival, in Arrival, p Pass) (Decision, bool, error) {
	now := r.now()
	v := r.view.Load()
	lim := v.settings.limitsAt(now)
	res, err := r.store.Reclaim(ctx, r.id, p.Subject, p.ExpiresAt, now, lim)
	if errors.Is(err, ErrNoRoom) {
		if err = r.reseed(ctx, now); err == nil {
			res, err = r.store.Reclaim(ctx, r.id, p.Subject, p.ExpiresAt, now, lim)
		}
	}
	if err != nil {
		// Passes are checked locally while the store is away: the next
		// request, once it answers, reclaims.
		r.storeFailed()
		d := Decision{Transition: machine[TicketReclaiming][EventStoreAway], Pass: in.Pass, Admission: p}
		if in.Kind != RequestPage {
			d.Status = r.AdmittedStatus(p)
			d.Status.DrawIndex = r.keyOf(in.Ticket, p)
		}
		return d, true, nil
	}
	tr, err := follow(TicketReclaiming, claimEvents[res.Status])
	if err != nil {
		return Decision{}, true, err
	}
	if tr.Action == ActionRejoin {
		return Decision{}, false, nil
	}
	t, opened := r.reclaimTicket(in.Ticket, p)
	if tr.Action == ActionReissue {
		r.reclaimed.add(p.Subject, v.snap.Incarnation)
		r.stats.Reclaims.Add(1)
	}
	st := Status{Room: r.id, Title: v.settings.Title, State: StateQueued, Waiting: v.waiting()}
	zero := uint64(0)
	st.Position, st.Progress = &zero, 1
	vis, err := r.claimed(ctx, a, v, tr, res, st, t, now)
	if err != nil {
		return Decision{}, true, err
	}
	d := Decision{
		Transition: tr,
		Status:     vis.Status,
		Pass:       vis.Pass,
		Admission:  vis.Admission,
		NewPass:    vis.Pass != "",
		Ticket:     vis.Ticket,
		SetTicket:  !opened,
	}
	return d, true, nil
}

// reclaimTicket is the ticket a reclaimed session goes on with: the one the
// request carried, or, for a client that kept only the pass, one made from the
// pass (its visitor and place). The pass is the session's own word on its
// place, which a pass signed again carries.
func (r *Room) reclaimTicket(cookie string, p Pass) (Ticket, bool) {
	if cookie != "" {
		if t, err := r.OpenTicket(cookie); err == nil && t.Visitor.String() == p.Subject {
			t.Place = p.OrderKey
			return t, true
		}
	}
	t := Ticket{Room: r.id, Key: p.OrderKey, Place: p.OrderKey, Joined: p.IssuedAt, Seen: p.IssuedAt, Claimed: true}
	t.Visitor, _ = ParseVisitorID(p.Subject)
	return t, false
}

// reclaimedSessions are the visitors whose sessions this node reclaimed in
// the room's current incarnation: their old passes go in with no store call
// should their holders keep sending them (a client that does not store the
// pass signed again). Bounded; past the bound, a reclaim is merely asked again.
type reclaimedSessions struct {
	mu          sync.Mutex
	incarnation string
	m           map[string]struct{}
}

// maxReclaimed bounds the visitors a node remembers reclaiming.
const maxReclaimed = 1 << 16

func (s *reclaimedSessions) has(visitor, incarnation string) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	_, ok := s.m[visitor]
	return ok && s.incarnation == incarnation
}

func (s *reclaimedSessions) add(visitor, incarnation string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.incarnation != incarnation || s.m == nil {
		s.incarnation, s.m = incarnation, make(map[string]struct{})
	}
	if len(s.m) < maxReclaimed {
		s.m[visitor] = struct{}{}
	}
}
