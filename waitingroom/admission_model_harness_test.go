package waitingroom_test

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"net/netip"
	"os"
	"slices"
	"sort"
	"strings"
	"time"

	"github.com/foyer-dev/foyer/internal/clock"
	"github.com/foyer-dev/foyer/waitingroom"
	"github.com/foyer-dev/foyer/waitingroom/memstore"
	"github.com/foyer-dev/foyer/waitingroom/redisstore"
)

// The harness of the model-based test of admission (admission_model_test.go):
// the adapter through which fans, the origin and the operator reach the real
// rooms, the model of what every fan was handed, and the invariants checked
// against it.

// ---------------------------------------------------------------------------
// The adapter.
//
// Every call that a fan's request makes into a Room goes through
// modelNode.admit, which does what the gateway's handler does with a request
// (docs/endpoints.md, "What fans, apps and origins see"): a good pass lets the request
// through; otherwise the ticket cookie is polled; otherwise the visitor
// joins. When the room gets one entry point for a fan's request, only the
// body of admit changes: arrival and decision already carry what such an
// entry point takes and gives.

// arrivalKind says what a fan's request asks for.
type arrivalKind int

const (
	// kindPage is a request for a page of the site: with a good pass it
	// goes on to the origin (and counts as use of the session).
	kindPage arrivalKind = iota
	// kindStatus is the waiting page's status poll.
	kindStatus
)

func (k arrivalKind) String() string {
	if k == kindStatus {
		return "status"
	}
	return "page"
}

// arrival is one request of a fan, as the gateway hands it to the room.
type arrival struct {
	Client  netip.Addr
	Account string // the account the site's login vouched for; "" for none
	Ticket  string // the ticket cookie, sealed; "" for none
	Pass    string // the pass cookie; "" for none
	Kind    arrivalKind
	Code    string // an access code the request carries; "" for none
}

// decision is the room's answer to an arrival.
type decision struct {
	// Accepted is set when the pass cookie was good: the request goes on
	// to the origin with Pass.
	Accepted bool
	// Pass is the accepted pass (as forwarded: with Resigned, the claims
	// it carries), or the admission NewPass carries.
	Pass waitingroom.Pass
	// Resigned is the accepted pass signed again, with the waitlist claim
	// added (the sale reopened after a waitlist); "" when it went as it
	// came.
	Resigned string
	// NewPass is a pass handed out with this answer.
	NewPass string
	Status  waitingroom.Status
	// Ticket is the place the answer is about (zero when it gave none).
	Ticket waitingroom.Ticket
	// SetTicket is the ticket cookie the answer sets; "" leaves the
	// browser's cookie as it was.
	SetTicket string
	// Rejoined is set when the presented ticket was spent and the fan was
	// given a new place (or the puzzle to earn one).
	Rejoined bool
}

// modelNode is one gateway node's handle on the room.
type modelNode struct {
	index int
	room  *waitingroom.Room
	// sawReopen: this node's view showed the waitlist ended (the sale
	// reopened) and no waitlist since. It outlives a loss of the store,
	// as the node's knowledge does (invariant 12).
	sawReopen bool
}

// noteWaitlist updates sawReopen from the node's view.
func (n *modelNode) noteWaitlist() {
	switch w := n.room.Snapshot().Waitlist; {
	case w.On():
		n.sawReopen = false
	case !w.Ended.IsZero():
		n.sawReopen = true
	}
}

// admit answers one request of a fan through Room.Admit, the one call the
// gateway's handler makes.
func (n *modelNode) admit(ctx context.Context, a arrival) (decision, error) {
	in := waitingroom.Arrival{Client: a.Client, Ticket: a.Ticket, Pass: a.Pass, Kind: waitingroom.RequestPage, Code: a.Code}
	if a.Kind == kindStatus {
		in.Kind = waitingroom.RequestStatus
	}
	if a.Account != "" {
		in.Account, in.HasAccount = waitingroom.NewAccountKey(n.room.ID(), a.Account), true
	}
	d, err := n.room.Admit(ctx, in)
	if err != nil {
		return decision{}, err
	}
	if d.Pass != "" && !d.NewPass {
		return decision{Accepted: true, Pass: d.Admission, Status: n.room.AdmittedStatus(d.Admission)}, nil
	}
	if tr := d.Transition; d.NewPass && tr != nil && tr.From == waitingroom.TicketInSession && tr.Event == waitingroom.EventPass {
		return decision{Accepted: true, Pass: d.Admission, Resigned: d.Pass, Status: n.room.AdmittedStatus(d.Admission)}, nil
	}
	out := decision{Status: d.Status, Ticket: d.Ticket, Rejoined: d.Rejoined}
	if d.NewPass {
		out.Pass, out.NewPass = d.Admission, d.Pass
	}
	if d.SetTicket {
		out.SetTicket = n.room.SealTicket(d.Ticket)
	}
	return out, nil
}

// revoke is the origin's command to end the session of a pass it was sent.
func (n *modelNode) revoke(ctx context.Context, p waitingroom.Pass) error {
	return n.room.Revoke(ctx, p)
}

// requeue is the origin failing the session of a pass it was sent, through
// no fault of the fan's (docs/PROTOCOL.md, "Requeue").
func (n *modelNode) requeue(ctx context.Context, p waitingroom.Pass) (*waitingroom.Transition, error) {
	return n.room.Requeue(ctx, p)
}

// patch is the operator's change of a boolean runtime setting.
func (n *modelNode) patch(ctx context.Context, setting string, on bool) error {
	var s waitingroom.Settings
	switch setting {
	case "paused":
		s.Paused = on
	case "queue_all":
		s.QueueAll = on
	case "sold_out":
		// The room runs with the waitlist on: sold out, the line becomes
		// the waitlist (docs/waitlist.md).
		s.SoldOut = on
	default:
		return fmt.Errorf("the model does not patch %q", setting)
	}
	_, err := n.room.Patch(ctx, waitingroom.OverridesOf(s, setting))
	return err
}

// tick is one pass of the node's controller loop.
func (n *modelNode) tick(ctx context.Context) error { return n.room.Tick(ctx) }

// ---------------------------------------------------------------------------
// Steps: what happens to the room, as data, so that rapid's sequences and the
// kept regression sequences run through the same code.

type modelOp int

const (
	opJoin         modelOp = iota // a new fan arrives
	opPoll                        // a fan's page polls its status, with the cookies its browser holds
	opPresentPass                 // a fan's browser asks for a page of the site, pass and ticket
	opOldTicket                   // a fan sends a copy of a ticket it was handed earlier, without its pass
	opLatestTicket                // a fan sends its latest ticket without its pass
	opWait                        // time passes; both nodes' controller loops run
	opRevoke                      // the origin ends a fan's session
	opOperator                    // the operator pauses, resumes, holds everyone or lets them go
	opQuiet                       // a fan stops sending anything
	opComeBack                    // a quiet fan's page polls again
	opStoreLost                   // the store loses the room (an empty restart); each node's next tick re-seeds it
	opRequeue                     // the origin fails a fan's session (retry): the fan goes back to the front
	opAddPhase                    // the operator adds a phase after the others, starting at least 2 s from now (admin API)
	opCodeJoin                    // a new fan arrives with an access code (docs/codes.md)
	opSupply                      // the origin reports the supply (X-Waiting-Room-Supply) through a node (docs/waitlist.md)
)

// The model room's access codes (docs/codes.md): one of many uses, one of a
// single use, and one never added.
const (
	modelCodeMany  = "MODEL-MANY"
	modelCodeOnce  = "MODEL-ONCE"
	modelCodeWrong = "MODEL-WRONG"
)

// modelStep is one event. Fan is the index of a fan in the order the fans
// joined; Copy the index of a ticket among those handed to that fan.
type modelStep struct {
	Op      modelOp
	Node    int
	Fan     int
	Account string // opJoin: "" for none
	Copy    int
	Seconds int
	Setting string // opOperator: "paused", "queue_all" or "sold_out"
	Units   uint64 // opSupply: the units left
	On      bool
	Code    string // opCodeJoin, opPoll: the access code sent; "" for none
	// Phase is opAddPhase's phase, its From and To counted from the end of
	// the last phase (or now, when later).
	Phase modelPhase
}

func (s modelStep) String() string {
	switch s.Op {
	case opJoin:
		if s.Account == "" {
			return fmt.Sprintf("join node=%d", s.Node)
		}
		return fmt.Sprintf("join node=%d account=%s", s.Node, s.Account)
	case opPoll:
		if s.Code != "" {
			return fmt.Sprintf("poll fan=%d node=%d code=%s", s.Fan, s.Node, s.Code)
		}
		return fmt.Sprintf("poll fan=%d node=%d", s.Fan, s.Node)
	case opCodeJoin:
		return fmt.Sprintf("code-join node=%d code=%s", s.Node, s.Code)
	case opPresentPass:
		return fmt.Sprintf("present-pass fan=%d node=%d", s.Fan, s.Node)
	case opOldTicket:
		return fmt.Sprintf("old-ticket fan=%d copy=%d node=%d", s.Fan, s.Copy, s.Node)
	case opLatestTicket:
		return fmt.Sprintf("latest-ticket fan=%d node=%d", s.Fan, s.Node)
	case opWait:
		return fmt.Sprintf("wait %ds", s.Seconds)
	case opRevoke:
		return fmt.Sprintf("revoke fan=%d node=%d", s.Fan, s.Node)
	case opOperator:
		return fmt.Sprintf("operator node=%d %s=%v", s.Node, s.Setting, s.On)
	case opQuiet:
		return fmt.Sprintf("quiet fan=%d", s.Fan)
	case opComeBack:
		return fmt.Sprintf("come-back fan=%d node=%d", s.Fan, s.Node)
	case opStoreLost:
		return "store-lost"
	case opSupply:
		return fmt.Sprintf("supply node=%d units=%d", s.Node, s.Units)
	case opRequeue:
		return fmt.Sprintf("requeue fan=%d node=%d", s.Fan, s.Node)
	case opAddPhase:
		return fmt.Sprintf("add-phase node=%d [+%s,+%s) after the last, cap=%d rate=%d prequeue=%s", s.Node, s.Phase.From, s.Phase.To, s.Phase.Cap, s.Phase.Rate, s.Phase.Prequeue)
	}
	return fmt.Sprintf("op%d", int(s.Op))
}

// modelSettings are the room's settings that a run draws.
type modelSettings struct {
	Cap          int
	Rate         int
	ReturnWindow time.Duration
	WaitingIdle  time.Duration
	// Requeues is requeue_on_origin_error: a ticket is requeued at most
	// this many times (once while 0).
	Requeues int
	// Phases are scheduled phases (docs/configuration.md, "Phases") that
	// change the cap and the rate as time passes: the runs' waits cross
	// their switches.
	Phases []modelPhase
	// Seeds picks the draw seeds the nodes propose (a phase's draw orders
	// its pre-queue by the one the store keeps): drawn with the sequence,
	// so that a failing one replays exactly.
	Seeds uint32
}

// modelPhase is a scheduled phase from From to To after the run's start,
// setting the cap and the rate where not 0, with its own pre-queue, drawn
// at its start, opening Prequeue before it (0: none).
type modelPhase struct {
	From, To  time.Duration
	Cap, Rate int
	Prequeue  time.Duration
}

// seedSource is where node i's draw seeds come from.
func (c modelSettings) seedSource(i int) io.Reader {
	var key [32]byte
	key[0] = byte(i)
	binary.LittleEndian.PutUint32(key[8:], c.Seeds)
	return rand.NewChaCha8(key)
}

func (c modelSettings) String() string {
	s := fmt.Sprintf("cap=%d rate=%d/min return_window=%s waiting_idle_timeout=%s requeue_on_origin_error=%d", c.Cap, c.Rate, c.ReturnWindow, c.WaitingIdle, c.Requeues)
	for i, p := range c.Phases {
		s += fmt.Sprintf(" phase%d=[+%s,+%s) cap=%d rate=%d prequeue=%s", i, p.From, p.To, p.Cap, p.Rate, p.Prequeue)
	}
	return s
}

// phases are the room's phases, from the start of every run's clock.
func (c modelSettings) phases() waitingroom.Phases {
	start := newClock().Now()
	var list []waitingroom.ScheduledPhase
	for i, p := range c.Phases {
		list = append(list, p.scheduled(fmt.Sprintf("p%d", i), start))
	}
	return waitingroom.NewPhases(list...)
}

// scheduled is the phase, named name, counted from at.
func (p modelPhase) scheduled(name string, at time.Time) waitingroom.ScheduledPhase {
	var names []string
	if p.Cap > 0 {
		names = append(names, "total_active_users")
	}
	if p.Rate > 0 {
		names = append(names, "new_users_per_minute")
	}
	ph := waitingroom.ScheduledPhase{
		Name: name, Start: at.Add(p.From), End: at.Add(p.To),
		Settings: waitingroom.OverridesOf(waitingroom.Settings{TotalActiveUsers: p.Cap, NewUsersPerMinute: p.Rate}, names...),
	}
	if p.Prequeue > 0 {
		ph.PrequeueStart, ph.ShuffleAtStart = ph.Start.Add(-p.Prequeue), true
	}
	return ph
}

// room is the settings of the room a run drives: a small cap, so that the
// cap binds; sessions short and idle sessions ended, so that a run of a few
// minutes sees sessions end in every way; the rest as the documented defaults
// unless drawn.
func (c modelSettings) room() waitingroom.Settings {
	return waitingroom.Settings{
		Title:                "model",
		TotalActiveUsers:     c.Cap,
		NewUsersPerMinute:    c.Rate,
		SessionDuration:      3 * time.Minute,
		SessionIdleTimeout:   time.Minute,
		ReturnWindow:         c.ReturnWindow,
		WaitingIdleTimeout:   c.WaitingIdle,
		RequeueOnOriginError: c.Requeues,
		Phases:               c.phases(),
		// Off until the operator sets sold_out: then the line is a
		// waitlist, let in as the supply the origin reports comes back.
		Waitlist: true,
	}
}

// ---------------------------------------------------------------------------
// The model.

// modelTB is what the model needs of *testing.T and *rapid.T alike.
type modelTB interface {
	Helper()
	Logf(format string, args ...any)
	Fatalf(format string, args ...any)
}

// Holes the model knows the current code to have. FOYER_MODEL_KNOWN_HOLES
// (e.g. "A,B") names those to tolerate: when one shows, the run logs it and
// stops checking, so that a run can look past it for other violations.
const (
	// holeA: a session that idled out comes back, on its ticket, with a new
	// session of a full session_duration, once per idle-out for ever, where
	// docs/line.md ("Who is still in line") keeps session_duration the hard limit.
	holeA = "A"
	// holeB: a claimed ticket sent without its pass while its session is
	// live makes a new place (and a new session) each time, where docs/endpoints.md
	// ("Tickets and passes are bearer tokens") promises the same session.
	holeB = "B"
	// holeC: a place the controller skipped as a ghost, in an admission
	// that let in a live place beyond it, claimed that admission's slot when
	// its holder came back within the grace; the live fan, claiming in
	// time, was then a returner (docs/line.md, "Who is still in line": a skipped
	// fan who comes back is a lapsed admission, let in at the front within
	// the rate, not into another fan's slot).
	holeC = "C"
	// holeD: a pass handed out a second or less before its session idled
	// out (a claim with a copy of the ticket, which is not use of the
	// session) is let through after the idle-out, on every node, where
	// docs/line.md ("Who is still in line") refuses an idled-out session's passes
	// from then on.
	holeD = "D"
)

// holeE: a place let in on the spot within the nodes' lag before the store
// lost the room (their views, which the re-seed restores, still had it in
// line, among the margin's places) is let in a second time by the re-created
// room, its holder's beat making it live: a second slot for one visitor, and
// a claim of it (a copy of the ticket, or the ticket alone) opens the
// session anew, a whole session_duration from then, past session_duration
// plus admission_grace after the first admission (docs/operations.md, "When Redis comes
// back empty": serving does not jump back, no place already let in is let in
// again).
const holeE = "E"

// holeF: a session the origin revoked just before the store lost the room,
// before the nodes refreshed, is opened again: reclaimed through a node
// whose view, which re-seeded the room, still had it live (its slot held),
// or claimed again by its ticket in an admission that view still had
// unclaimed. A pass of the revoked session is handed out again (with the
// same id, which nodes refuse once they know the revocation, or, a second
// later, another), and the store holds its slot again (docs/endpoints.md: the origin
// ends a session; revoked passes stay refused through a loss).
const holeF = "F"

// holeG: after a loss, an admission still within its grace comes back with
// its counts, not who claimed nor which places it skipped as ghosts: a holder
// who had claimed sends their ticket alone (the store no longer knows their
// session) and claims again, or a skipped ghost comes back and claims as a
// live place, and takes the slot of a fan of that admission yet to claim,
// who, claiming within their grace, is refused and rejoins at the back
// (docs/operations.md, "When Redis comes back empty": a fan admitted just before the loss
// can still claim within their grace; hole C, closed before a loss, opens
// again after one). A claim again also makes the store hold two slots for
// one visitor (the new session's and the held one of the lost session) until
// the hold ends. A holder whose session the origin revoked before the loss
// claims again the same way, and is let in again. A session claimed again
// (here, or within the nodes' lag: hole E) has a new pass id, and revoking
// it leaves the passes from before the loss going in.
const holeG = "G"

// holeH: the operator pauses the room through one node, and the store loses
// the room before the other node refreshed: the re-created room lets people
// in while paused (docs/waiting-page.md: a paused room admits nobody).
const holeH = "H"

// holeI: a place handed out within the nodes' lag before the store lost the
// room lies in the re-seed's margin, whose places are judged by their beats
// since the loss: its holder's beats from before (the join's, sent after
// the loss) do not count, and the line passes it as a ghost although its
// holder keeps polling; they come back at the front as a returner (docs/operations.md,
// "When Redis comes back empty": nobody is judged a ghost for one
// waiting_idle_timeout, and no fan who keeps polling is skipped).
const holeI = "I"

// openHoles are the holes still open in the code, tolerated when
// FOYER_MODEL_KNOWN_HOLES is not set: none. A, B and D are closed by the
// admission table (an idled-out session resumes to its end, a claimed ticket
// gets its live session's pass, a claim of a live session is a use of it),
// and C by the stores recording the ghosts a step skips among the live
// places it admits (a ghost comes back as a lapsed admission).
//
// J is closed by the store ending only the session a pass names (by its
// end) on a release or a requeue.
//
// E to I are open: the re-seed starts from views up to a refresh old (E, F,
// H, I), and restores admissions by their counts of claims (G).
const openHoles = "E,F,G,H,I"

// holeJ: a visitor requeued and let in again holds a new session with a new
// pass id, while a node that has not refreshed since still honours the
// failed session's pass (held by a copy of the ticket, or another browser of
// the account); the origin revoking or failing that old pass ended the
// visitor's new session in the store, whose own pass stayed honoured until
// it expired (docs/PROTOCOL.md, "Requeue").
const holeJ = "J"

func knownHoles() map[string]bool {
	out := map[string]bool{}
	list, set := os.LookupEnv("FOYER_MODEL_KNOWN_HOLES")
	if !set {
		list = openHoles
	}
	for _, h := range strings.Split(list, ",") {
		if h = strings.ToUpper(strings.TrimSpace(h)); h != "" {
			out[h] = true
		}
	}
	return out
}

// rateSpan is the span over which invariant 7 counts admissions.
const rateSpan = 5 * time.Second

// admissionCount is the store's count of admissions at a time, and whether
// the controller's step of that second had run by then.
type admissionCount struct {
	at      time.Time
	n       uint64
	stepped bool
}

// passLeeway is how far past its end the room still honours a pass: the
// verifier forgives that much clock skew between nodes.
const passLeeway = 5 * time.Second

// maxModelFans bounds the fans of one run: enough for the cap to bind and
// for a line to form, few enough that a failing sequence stays readable.
const maxModelFans = 10

type placeID struct {
	visitor string
	key     uint64
}

// cookieRec is what a ticket cookie the room handed out stands for.
type cookieRec struct {
	place   placeID
	claimed bool
}

// placeRec is a place in line some fan was handed.
type placeRec struct {
	id      placeID
	account string
	order   int // places handed out before it
	era     int // losses of the store before it was handed out
	event   int // the model's event count when it was handed out
	// spent is set once a request carrying a ticket of this place was
	// answered with another place (or the puzzle to earn one).
	spent bool
	// lastMark is the last answer that saw the place's holder waiting, and
	// waiting whether that answer had them in line (not as a returner).
	lastMark time.Time
	waiting  bool
}

type sessionKey struct {
	id string
	// epoch counts the idle-outs of the subject before the session began:
	// a session resumed after an idle-out may keep its end, hence its pass
	// id, and is still a session of its own.
	epoch int
}

// sessionRec is a session as the passes handed out tell it, and how the
// store says it ended.
type sessionRec struct {
	key     sessionKey
	subject string
	exp     time.Time
	started time.Time
	// startEvent is the event that handed out its first pass: a node that
	// has not ticked since sees the room as it was before.
	startEvent int
	ended      bool
	endedAt    time.Time
	endIdle    bool // ended by an idle-out, which every node learns in the tick that made it
	// A revocation ends the session in the store at once; the node that
	// carried it out refuses its passes at once, the other from its next
	// tick on (docs/endpoints.md, "Tickets and passes are bearer tokens").
	endNode  int
	endEvent int
	// lost is set while the store lost the session and nobody reclaimed it
	// since (no pass of it was handed out after the loss); holdUntil is when
	// the slot the re-seed held for it ends.
	lost      bool
	holdUntil time.Time
	era       int // losses of the store before it began
	// next is the session it goes on as, when it was lost and claimed
	// again by its ticket after the loss (see judge); its passes are that
	// session's.
	next *sessionRec
}

func (s *sessionRec) live(now time.Time) bool { return !s.ended && s.next == nil && now.Before(s.exp) }

// current is the session s goes on as.
func (s *sessionRec) current() *sessionRec {
	for range 64 { // a chain is a loss or two long; never a cycle
		if s.next == nil || s.next == s {
			break
		}
		s = s.next
	}
	return s
}

type passRec struct {
	pass     waitingroom.Pass
	handedAt time.Time
	fan      *modelFan
	session  *sessionRec
}

// subjectRec is what the model knows of one visitor (a pass's sub).
type subjectRec struct {
	first    time.Time // the first pass handed out
	hadPass  bool
	returns  int         // sessions opened as a returner (Counters.Returned moved)
	idleOuts []time.Time // from the store's record of revocations
	// losses counts the losses of the store that found the visitor with a
	// live session: each may send them to the front once more (a pass
	// from before the loss whose held slot is gone waits there).
	losses int
	// requeues counts the requeues of the visitor's sessions; requeuedAt,
	// while requeuedOrder is set, when the last one was made, and lastAsked
	// when the fan last asked (was told to wait at the front) since.
	requeues      int
	requeuedOrder int
	requeuedAt    time.Time
	lastAsked     time.Time
	// passedBy, while set, is a visitor requeued after this one and let in
	// again while this one still asked: the controller's step lets the
	// requeued in in order, so this one was let in at that step or before,
	// and is never told to wait at the front again (invariant 9).
	passedBy string
}

// modelFan is one fan's browser.
type modelFan struct {
	index   int
	client  netip.Addr
	account string
	quiet   bool
	ticket  string // the ticket cookie the browser holds
	pass    string // the pass cookie, until passExp
	passExp time.Time
	copies  []string // every ticket cookie handed to this fan, oldest first
	// The place of the ticket the browser holds, and the last position it
	// was shown for it.
	chain   placeID
	lastPos uint64
	hasPos  bool
}

func (f *modelFan) passCookie(now time.Time) string {
	if f.pass != "" && now.Before(f.passExp) {
		return f.pass
	}
	return ""
}

// errTainted unwinds a step once a tolerated hole showed.
var errTainted = errors.New("a tolerated hole showed")

// admissionModel drives two nodes of one room and checks every answer.
type admissionModel struct {
	tb       modelTB
	ctx      context.Context
	clock    *clock.Manual
	start    time.Time
	truth    waitingroom.Store
	roomID   string
	nodes    []*modelNode
	cfg      modelSettings
	settings waitingroom.Settings // with defaults
	lookback time.Duration

	fans []*modelFan
	// onceUsed is set once the single-use code made a place: it never
	// makes another, on either node.
	onceUsed bool
	cookies  map[string]*cookieRec
	places   map[placeID]*placeRec
	passes   map[string]*passRec
	sessions map[sessionKey]*sessionRec
	subjects map[string]*subjectRec
	idleSeen map[string]bool // visitor and time of each idle-out already applied
	labels   map[string]string
	counts   map[string]int

	// admissions are the store's admissions (the line, newcomers let in on
	// the spot, returners) as observed over the last rateSpan, oldest first.
	admissions []admissionCount

	// losses are the losses of the store so far, oldest first; countBase
	// carries invariant 7's count of admissions across them (a re-seed
	// starts from a node's view, which may lag the store it lost).
	losses    []modelLoss
	countBase uint64
	// claimedAgain counts the lost sessions claimed again after a loss by
	// their tickets, which go on with a later end (see judge).
	claimedAgain  int
	claimingAgain bool // while handPass records such a claim
	// requeueSeq counts the requeues made: the order they were made in.
	requeueSeq int
	handNode   int  // the node whose answer handPass records
	paused     bool // the operator's last word on paused
	// stepped is the second (Unix) of the nodes' last ticks: its
	// controller step has run (invariant 7).
	stepped int64
	// tickServing is serving as the store had it after the nodes' last
	// ticks: as far as their views go.
	tickServing uint64
	// storeHeld is the store's count of slots held (live sessions and
	// admissions not yet claimed) that invariant 1 last saw: above a cap a
	// phase lowered, it may not rise.
	storeHeld int

	event    int    // counts requests, revocations and ticks
	tickSeq  [2]int // the event of each node's last tick
	snap     waitingroom.Snapshot
	steps    int
	known    map[string]bool
	tainted  string
	sawHoles map[string]bool
}

// modelLoss is one loss of the store: when, and how far the line had gone as
// the model saw it just before.
type modelLoss struct {
	at time.Time
	// maxKey is the highest order key handed out before the loss: every
	// place handed out after it has a higher one (docs/operations.md, "nobody who joins
	// after the loss is placed ahead of an earlier ticket").
	maxKey  uint64
	serving uint64
	// event is the model's event count when the store lost the room, and
	// ticked when the nodes' ticks that re-seeded it were over.
	event, ticked int
	// tickSeq is each node's last tick before the loss.
	tickSeq [2]int
}

// newAdmissionModel starts two nodes of room on their stores, reading the
// store's own view of the room through truth.
func newAdmissionModel(tb modelTB, cfg modelSettings, roomID string, stores [2]waitingroom.Store, truth waitingroom.Store) (*admissionModel, error) {
	m := &admissionModel{
		tb:       tb,
		ctx:      context.Background(),
		clock:    newClock(),
		truth:    truth,
		roomID:   roomID,
		cfg:      cfg,
		settings: cfg.room().WithDefaults(),
		cookies:  map[string]*cookieRec{},
		places:   map[placeID]*placeRec{},
		passes:   map[string]*passRec{},
		sessions: map[sessionKey]*sessionRec{},
		subjects: map[string]*subjectRec{},
		idleSeen: map[string]bool{},
		labels:   map[string]string{},
		counts:   map[string]int{},
		known:    knownHoles(),
		sawHoles: map[string]bool{},
	}
	m.start = m.clock.Now()
	// A fan whose page polled within this long is still there: it was seen
	// within waiting_idle_timeout, so it is no ghost (docs/line.md, "Who is still
	// in line"), and it comes back within admission_grace of its turn. The
	// three seconds cover a node's view being half a second old and beats
	// reaching the store up to a second late.
	m.lookback = min(m.settings.AdmissionGrace, m.settings.WaitingIdleTimeout) - 3*time.Second
	key, err := waitingroom.GenerateSigningKey()
	if err != nil {
		return nil, err
	}
	for i, s := range stores {
		r, err := waitingroom.NewRoom(waitingroom.Config{ID: roomID, Settings: cfg.room(), Store: s, Key: key, Now: m.clock.Now, SeedSource: cfg.seedSource(i)})
		if err != nil {
			return nil, err
		}
		if err := r.Start(m.ctx); err != nil {
			return nil, err
		}
		m.nodes = append(m.nodes, &modelNode{index: i, room: r})
	}
	codes := []waitingroom.NewCode{{Code: modelCodeMany, Lane: waitingroom.GeneralLane, MaxUses: 1000}, {Code: modelCodeOnce, Lane: waitingroom.GeneralLane, MaxUses: 1}}
	if _, err := m.nodes[0].room.AddCodes(m.ctx, codes, 1); err != nil {
		return nil, err
	}
	tb.Logf("room %s: %s", roomID, cfg)
	return m, nil
}

func (m *admissionModel) fatalf(format string, args ...any) {
	m.tb.Helper()
	m.tb.Fatalf("step %d: "+format, append([]any{m.steps}, args...)...)
}

// hole reports a violation that is one of the known holes.
func (m *admissionModel) hole(h, format string, args ...any) {
	m.tb.Helper()
	msg := fmt.Sprintf(format, args...)
	if m.known[h] {
		m.tb.Logf("step %d: known hole %s seen (tolerated by FOYER_MODEL_KNOWN_HOLES): %s", m.steps, h, msg)
		m.sawHoles[h] = true
		m.tainted = h
		panic(errTainted)
	}
	m.fatalf("hole %s: %s", h, msg)
}

// do runs one step and checks what it can check on the spot.
func (m *admissionModel) do(s modelStep) {
	m.tb.Helper()
	if m.tainted != "" {
		return
	}
	m.steps++
	defer func() {
		if r := recover(); r != nil && r != errTainted {
			panic(r)
		}
	}()
	now := m.clock.Now()
	fan := func() *modelFan {
		if s.Fan < 0 || s.Fan >= len(m.fans) {
			m.fatalf("%s: no such fan", s)
		}
		return m.fans[s.Fan]
	}
	switch s.Op {
	case opJoin:
		f := &modelFan{index: len(m.fans), client: netip.AddrFrom4([4]byte{192, 0, 2, byte(len(m.fans) + 1)}), account: s.Account}
		m.fans = append(m.fans, f)
		m.request(s, f, arrival{Client: f.client, Account: f.account, Kind: kindPage}, true)
	case opPoll:
		f := fan()
		m.request(s, f, arrival{Client: f.client, Account: f.account, Ticket: f.ticket, Pass: f.passCookie(now), Kind: kindStatus, Code: s.Code}, true)
	case opCodeJoin:
		f := &modelFan{index: len(m.fans), client: netip.AddrFrom4([4]byte{192, 0, 2, byte(len(m.fans) + 1)})}
		m.codeJoin(s, f)
	case opPresentPass:
		f := fan()
		m.request(s, f, arrival{Client: f.client, Account: f.account, Ticket: f.ticket, Pass: f.passCookie(now), Kind: kindPage}, true)
	case opOldTicket:
		f := fan()
		if s.Copy < 0 || s.Copy >= len(f.copies) {
			m.fatalf("%s: fan %d holds %d tickets", s, f.index, len(f.copies))
		}
		m.request(s, f, arrival{Client: f.client, Account: f.account, Ticket: f.copies[s.Copy], Kind: kindStatus}, false)
	case opLatestTicket:
		f := fan()
		m.request(s, f, arrival{Client: f.client, Account: f.account, Ticket: f.ticket, Kind: kindStatus}, true)
	case opWait:
		m.tb.Logf("step %d: %s (until +%s)", m.steps, s, m.until(now.Add(time.Duration(s.Seconds)*time.Second)))
		m.wait(s.Seconds)
	case opRevoke:
		f := fan()
		a := arrival{Client: f.client, Account: f.account, Ticket: f.ticket, Pass: f.passCookie(now), Kind: kindPage}
		d := m.request(s, f, a, true)
		if d.Accepted {
			// The origin is done with the fan: it answers revoke, and the
			// gateway clears the pass cookie.
			m.event++
			if err := m.nodes[s.Node].revoke(m.ctx, d.Pass); err != nil {
				m.fatalf("%s: %v", s, err)
			}
			m.revoked(d.Pass, s.Node)
			f.pass = ""
			m.observe()
		}
	case opRequeue:
		f := fan()
		a := arrival{Client: f.client, Account: f.account, Ticket: f.ticket, Pass: f.passCookie(now), Kind: kindPage}
		if d := m.request(s, f, a, true); d.Accepted {
			m.requeue(f, d.Pass, s.Node)
		}
	case opOperator:
		if err := m.nodes[s.Node].patch(m.ctx, s.Setting, s.On); err != nil {
			m.fatalf("%s: %v", s, err)
		}
		if s.Setting == "paused" {
			m.paused = s.On
		}
		m.tb.Logf("step %d: %s", m.steps, s)
	case opQuiet:
		fan().quiet = true
		m.tb.Logf("step %d: %s", m.steps, s)
	case opComeBack:
		f := fan()
		f.quiet = false
		m.request(s, f, arrival{Client: f.client, Account: f.account, Ticket: f.ticket, Pass: f.passCookie(now), Kind: kindStatus}, true)
	case opStoreLost:
		m.storeLost()
	case opSupply:
		m.nodes[s.Node].room.NoteSupply(s.Units)
		m.tb.Logf("step %d: %s", m.steps, s)
	case opAddPhase:
		m.addPhase(s, now)
	default:
		m.fatalf("unknown step %v", s)
	}
}

// addPhase has the operator add a phase through a node's admin API, after
// every phase the room has and at least 2 s from now: the other node reads
// it on its next tick, before it starts, as every node does within a
// second (docs/configuration.md, "Phases").
func (m *admissionModel) addPhase(s modelStep, now time.Time) {
	list := m.settings.Phases.List()
	if len(list) >= waitingroom.MaxPhases {
		m.fatalf("%s: the room has %d phases already", s, len(list))
	}
	from := now.Add(2 * time.Second)
	if n := len(list); n > 0 && list[n-1].End.After(from) {
		from = list[n-1].End
	}
	ph := s.Phase.scheduled(fmt.Sprintf("op%d", len(list)), from)
	phases := waitingroom.NewPhases(append(list, ph)...)
	if _, err := m.nodes[s.Node].room.Patch(m.ctx, waitingroom.OverridesOf(waitingroom.Settings{Phases: phases}, "phases")); err != nil {
		m.fatalf("%s: %v", s, err)
	}
	m.settings.Phases = phases
	m.tb.Logf("step %d: %s: %s", m.steps, s, waitingroom.PhaseSummary(&ph))
}

// storeLost has the store lose the room, as a store restarted empty does, and
// lets each node tick once (half a second later, as Room.Run does), which
// re-seeds the room from the nodes' views (docs/operations.md, "When Redis comes back
// empty").
func (m *admissionModel) storeLost() {
	m.tb.Helper()
	now := m.clock.Now()
	loss := modelLoss{at: now, serving: m.snap.Serving, event: m.event, tickSeq: m.tickSeq}
	for q := range m.places {
		loss.maxKey = max(loss.maxKey, q.key)
	}
	m.losses = append(m.losses, loss)
	switch s := m.truth.(type) {
	case *memstore.Store:
		s.Drop(m.roomID)
	case *redisstore.Store:
		if err := s.Drop(m.ctx, m.roomID); err != nil {
			m.fatalf("store-lost: %v", err)
		}
	default:
		m.fatalf("store-lost: the model cannot empty a %T", m.truth)
	}
	// The sessions live now are the store's no more: the re-seed holds a
	// slot for each, for a minute, until the first request its pass
	// carries reclaims it.
	hold := min(m.settings.SessionDuration, time.Minute)
	if m.settings.SessionIdleTimeout > 0 {
		hold = min(m.settings.SessionDuration, m.settings.SessionIdleTimeout)
	}
	for _, s := range m.sessions {
		// One the store lost before, past its hold and not reclaimed
		// since, holds no slot in the nodes' views: it gets none now.
		if s.live(now) && !(s.lost && !now.Before(s.holdUntil)) {
			s.lost, s.holdUntil = true, now.Add(hold)
			m.subject(s.subject).losses++
		}
	}
	// The re-seed holds a slot for each session and admission pending in
	// the view of the node that makes it, which may lag the store by a
	// refresh (a session the origin requeued since, whose slot the store
	// kept for its fan as a returner): as many as any view had may be held,
	// above a cap a phase lowered since, until the hold ends.
	for _, n := range m.nodes {
		v := n.room.Snapshot()
		m.storeHeld = max(m.storeHeld, v.Active+v.Pending)
	}
	m.tb.Logf("step %d: store-lost at +%s (keys up to %d handed out, serving %d)", m.steps, m.until(now), loss.maxKey, loss.serving)
	m.tickAll()
	m.losses[len(m.losses)-1].ticked = m.event
	m.observe()
	m.tickServing = m.snap.Serving
}

// knowsRevocation reports whether node refuses the passes of session s, which
// the origin revoked: the node that carried the revocation out at once, the
// other from its next tick on. A loss of the store before that tick costs the
// other node one more: it re-seeds an empty room, and learns the revocation
// from the node that writes it back, at its next tick after that.
func (m *admissionModel) knowsRevocation(node int, s *sessionRec) bool {
	if s.endNode == node {
		return true
	}
	for _, l := range m.losses {
		if l.tickSeq[node] < s.endEvent && s.endEvent <= l.event && m.tickSeq[node] <= l.ticked {
			return false
		}
	}
	return m.tickSeq[node] > s.endEvent
}

// revokedBeforeSeeing reports whether session s was revoked and the store
// then lost the room before the nodes ticked: their views, which re-seeded it,
// still had the session live, or its admission unclaimed (hole F).
func (m *admissionModel) revokedBeforeSeeing(s *sessionRec) bool {
	if !s.ended || s.endIdle {
		return false
	}
	for _, l := range m.losses {
		if min(l.tickSeq[0], l.tickSeq[1]) < s.endEvent && s.endEvent <= l.event {
			return true
		}
	}
	return false
}

// wait lets seconds pass: every half second each node runs its controller
// loop once, as Room.Run does, and the model reads the store.
func (m *admissionModel) wait(seconds int) {
	m.tb.Helper()
	for range 2 * seconds {
		m.tickAll()
		m.observe()
		m.tickServing = m.snap.Serving
	}
}

// tickAll lets half a second pass, and each node run its controller loop
// once.
func (m *admissionModel) tickAll() {
	m.tb.Helper()
	m.clock.Advance(waitingroom.RefreshInterval)
	for _, n := range m.nodes {
		m.event++
		if err := n.tick(m.ctx); err != nil {
			m.fatalf("node %d tick: %v", n.index, err)
		}
		m.tickSeq[n.index] = m.event
	}
	m.stepped = m.clock.Now().Unix()
}

// request sends one arrival through a node and judges the answer. own says
// the fan's own browser sent it, whose cookies the answer replaces.
func (m *admissionModel) request(s modelStep, f *modelFan, a arrival, own bool) decision {
	m.tb.Helper()
	m.event++
	before := m.snap
	d, err := m.nodes[s.Node].admit(m.ctx, a)
	if err != nil {
		m.fatalf("%s: %v", s, err)
	}
	m.tb.Logf("step %d: %s → %s", m.steps, s, m.describe(d))
	m.observe()
	m.judge(f, s.Node, a, d, own, before)
	return d
}

// codeJoin is a newcomer's request with an access code: the code of many
// uses always makes a place, the single-use one makes one place in the
// whole run (whichever node answers), and the wrong one none.
func (m *admissionModel) codeJoin(s modelStep, f *modelFan) {
	m.tb.Helper()
	m.event++
	before := m.snap
	a := arrival{Client: f.client, Kind: kindPage, Code: s.Code}
	d, err := m.nodes[s.Node].admit(m.ctx, a)
	if ce, ok := errors.AsType[*waitingroom.CodeRefusedError](err); ok {
		if s.Code == modelCodeMany || s.Code == modelCodeOnce && !m.onceUsed {
			m.fatalf("%s: a code with uses left refused: %v", s, err)
		}
		m.tb.Logf("step %d: %s → refused (%s)", m.steps, s, ce.Status)
		m.observe()
		return
	}
	if err != nil {
		m.fatalf("%s: %v", s, err)
	}
	switch {
	case s.Code == modelCodeWrong:
		m.fatalf("%s: a code never added made a place", s)
	case s.Code == modelCodeOnce && m.onceUsed:
		m.fatalf("%s: the single-use code made a second place", s)
	case s.Code == modelCodeOnce:
		m.onceUsed = true
	}
	m.fans = append(m.fans, f)
	m.tb.Logf("step %d: %s → %s", m.steps, s, m.describe(d))
	m.observe()
	m.judge(f, s.Node, a, d, true, before)
}

func (m *admissionModel) describe(d decision) string {
	if d.Accepted {
		return fmt.Sprintf("pass accepted (sub %s, jti %s, exp +%s)", m.who(d.Pass.Subject), m.jti(d.Pass.ID), m.until(d.Pass.ExpiresAt))
	}
	var b strings.Builder
	b.WriteString(string(d.Status.State))
	if d.Status.Position != nil {
		fmt.Fprintf(&b, " position %d", *d.Status.Position)
	}
	if d.Status.Returned {
		b.WriteString(" returned")
	}
	if d.Status.TurnPassed {
		b.WriteString(" turn-passed")
	}
	if d.Rejoined {
		b.WriteString(" rejoined")
	}
	if d.Ticket.Room != "" {
		fmt.Fprintf(&b, ", place %d (visitor %s", d.Ticket.Key, m.who(d.Ticket.Visitor.String()))
		if d.Ticket.Claimed {
			b.WriteString(", claimed")
		}
		b.WriteString(")")
	}
	if d.NewPass != "" {
		fmt.Fprintf(&b, ", new pass (sub %s, jti %s, exp +%s)", m.who(d.Pass.Subject), m.jti(d.Pass.ID), m.until(d.Pass.ExpiresAt))
	}
	return b.String()
}

// until is how far t lies after the run's start, for logs.
func (m *admissionModel) until(t time.Time) time.Duration { return t.Sub(m.start) }

// who names a visitor by the order the model first met them (v1, v2, ...),
// and jti a session's pass id likewise (s1, s2, ...): the same sequence gives
// the same words, which rapid needs to tell one failure from another while
// it shrinks a sequence.
func (m *admissionModel) who(visitor string) string { return m.label(visitor, "v") }

func (m *admissionModel) jti(id string) string { return m.label("jti:"+id, "s") }

func (m *admissionModel) label(id, prefix string) string {
	l, ok := m.labels[id]
	if !ok {
		m.counts[prefix]++
		l = fmt.Sprintf("%s%d", prefix, m.counts[prefix])
		m.labels[id] = l
	}
	return l
}

// observe reads the store's own view of the room: the cap holds (invariant
// 1), and the idle-outs it recorded end the sessions they name.
func (m *admissionModel) observe() {
	m.tb.Helper()
	now := m.clock.Now()
	snap, err := m.truth.Snapshot(m.ctx, m.roomID, now, 0)
	if err != nil {
		m.fatalf("reading the store: %v", err)
	}
	// Invariant 1: the slots held, live sessions and admissions pending,
	// are within the cap in force; above a cap a phase lowered, they do
	// not rise (an admission made before the switch is claimed into its
	// slot).
	held := snap.Active + snap.Pending
	if limit := m.capAt(now); held > limit && held > m.storeHeld {
		m.fatalf("invariant 1: the store holds %d live sessions and %d admissions pending, cap %d in force at +%s (%d held before)",
			snap.Active, snap.Pending, limit, m.until(now), m.storeHeld)
	}
	m.storeHeld = held
	// Invariant 11, as the store tells it: while a phase's pre-queue is
	// open, the line stops before its first key.
	for _, pr := range snap.PhaseRanges {
		if !pr.Closed && snap.Serving > pr.Start {
			m.fatalf("invariant 11: serving %d at +%s, past key %d, the first of phase %s's pre-queue, open until +%s",
				snap.Serving, m.until(now), pr.Start, pr.Phase, m.until(pr.Starts))
		}
	}
	for _, rv := range snap.Revocations {
		if rv.Visitor == "" {
			continue
		}
		id := rv.Visitor + "@" + rv.IdledAt.Format(time.RFC3339Nano)
		if m.idleSeen[id] {
			continue
		}
		m.idleSeen[id] = true
		sr := m.subject(rv.Visitor)
		sr.idleOuts = append(sr.idleOuts, rv.IdledAt)
		for _, s := range m.sessions {
			if s.subject == rv.Visitor && !s.ended && !s.started.After(rv.IdledAt) && s.exp.After(rv.IdledAt) {
				s.ended, s.endedAt, s.endIdle = true, rv.IdledAt, true
			}
		}
		m.tb.Logf("  the store idled out visitor %s at +%s", m.who(rv.Visitor), m.until(rv.IdledAt))
	}
	if prev := m.snap; prev.Incarnation != "" && snap.Incarnation != prev.Incarnation {
		// The room was re-created, from the nodes' views: serving does not
		// go back behind where the nodes saw it at their last tick (docs/operations.md,
		// "When Redis comes back empty"). Places let in on the spot since
		// (under half a second) are not in those views: their sessions are
		// reclaimed through their passes. The count of admissions starts from a node's view,
		// which may lag the store's: invariant 7 counts on from where it
		// was.
		if snap.Serving < m.tickServing {
			m.fatalf("after the store lost the room, serving went back from %d, as the nodes last saw it, to %d", m.tickServing, snap.Serving)
		}
		if was, is := prev.Admitted+prev.Returned, snap.Admitted+snap.Returned; is < was {
			m.countBase += was - is
		}
		var batches []string
		for _, b := range snap.Batches {
			batches = append(batches, fmt.Sprintf("places %d-%d let in at +%s, %d of %d claimed", b.Start, b.End()-1, m.until(b.At), b.Claimed, b.Count))
		}
		m.tb.Logf("  the room was re-created: serving %d, next key %d, %d live, %d pending, forgotten below %d, admissions restored: %v",
			snap.Serving, snap.Seq, snap.Active, snap.Pending, snap.Forgotten, batches)
	}
	m.snap = snap
	m.checkAdmittedOnce(snap)
	m.checkRate(now, snap)
	m.checkWaitlist(snap)
}

// resigned records an accepted pass signed again: the same session's, with
// the waitlist claim added, which the browser keeps from then on. Invariant
// 12 holds for what went to the origin.
func (m *admissionModel) resigned(f *modelFan, node int, token string, d decision, own bool) {
	m.tb.Helper()
	if d.Resigned == "" {
		m.checkWaitlistClaim(node, d.Pass, false)
		return
	}
	rec := m.passes[token]
	was := rec.pass
	if !d.Pass.Waitlist || was.Waitlist || d.Pass.ID != was.ID || d.Pass.Subject != was.Subject || d.Pass.OrderKey != was.OrderKey || !sameEnd(d.Pass.ExpiresAt, was.ExpiresAt) {
		m.fatalf("invariant 12: node %d signed the pass of %s (jti %s) again as %+v; want the same pass with the waitlist claim added", node, m.who(was.Subject), m.jti(was.ID), d.Pass)
	}
	m.tb.Logf("  the pass of %s (jti %s) was signed again with the waitlist claim", m.who(was.Subject), m.jti(was.ID))
	m.checkWaitlistClaim(node, d.Pass, false)
	m.passes[d.Resigned] = &passRec{pass: d.Pass, handedAt: m.clock.Now(), fan: f, session: rec.session}
	if own {
		f.pass, f.passExp = d.Resigned, d.Pass.ExpiresAt
	}
}

// checkWaitlistClaim is invariant 12, for a pass node handed out (handed) or
// sent on to the origin: against the view it answered from, which no tick
// has refreshed since. A pass sent on keeps a claim it was given between a
// reopening and the next sell-out (docs/waitlist.md, "Limits").
func (m *admissionModel) checkWaitlistClaim(node int, p waitingroom.Pass, handed bool) {
	m.tb.Helper()
	n := m.nodes[node]
	n.noteWaitlist()
	switch w := n.room.Snapshot().Waitlist; {
	case handed && w.On() && p.Waitlist && p.OrderKey < w.From:
		m.fatalf("invariant 12: node %d handed %s a pass with the waitlist claim for place %d, let in before the waitlist began at %d",
			node, m.who(p.Subject), p.OrderKey, w.From)
	case !w.On() && n.sawReopen && !p.Waitlist:
		// Ended may be zero here only if a loss of the store forgot it.
		m.fatalf("invariant 12: node %d handed %s a pass without the waitlist claim after it saw the waitlist end (the sale reopened; ended %+v now)",
			node, m.who(p.Subject), w.Ended)
	}
}

// checkWaitlist is invariant 10: while the line is a waitlist, the units
// the room let fans in for and still owes never exceed the supply last
// reported, so that no unit that came back reaches two fans; and every
// step of the history that let fans in from it owed at most the supply it
// went by, reaching places in order (docs/waitlist.md).
func (m *admissionModel) checkWaitlist(snap waitingroom.Snapshot) {
	w := snap.Waitlist
	if !w.On() {
		return
	}
	var supply uint64
	if n := len(snap.Supply); n > 0 {
		supply = snap.Supply[n-1].Units
	}
	// A room re-created after a loss takes up the waitlist's debt before any
	// supply is reported again, when it lets nobody in; the first report
	// caps the debt.
	if w.Owed > supply && len(snap.Supply) > 0 {
		m.fatalf("invariant 10: the waitlist owes %d units, %d reported left", w.Owed, supply)
	}
	hist, err := m.truth.History(m.ctx, m.roomID, 0, waitingroom.MaxHistoryPage)
	if err != nil {
		m.fatalf("reading the history: %v", err)
	}
	next := uint64(0)
	for _, e := range hist {
		if e.Kind != waitingroom.HistoryWaitlist || e.Waitlist == nil {
			continue
		}
		if e.Waitlist.Owed > e.Waitlist.Supply || e.Start < next {
			m.fatalf("invariant 10: a waitlist step at +%s let places %d-%d in owing %d units of %d, after places up to %d",
				m.until(e.At), e.Start, e.Start+e.Count-1, e.Waitlist.Owed, e.Waitlist.Supply, next)
		}
		next = e.Start + e.Count
	}
}

// checkAdmittedOnce holds that a re-created room lets in no place again
// whose holder was let in before the loss (docs/operations.md, "When Redis comes back
// empty": serving does not jump back): an admission made after the loss that
// spans such a place is hole E.
func (m *admissionModel) checkAdmittedOnce(snap waitingroom.Snapshot) {
	m.tb.Helper()
	if len(m.losses) == 0 {
		return
	}
	loss := m.losses[len(m.losses)-1]
	for q := range m.places {
		sr := m.subjects[q.visitor]
		if m.lineOrder(q.key) >= snap.Serving && sr != nil && sr.hadPass && !sr.first.After(loss.at) {
			m.hole(holeE, "after the loss at +%s serving is %d, behind place %d, whose holder (visitor %s) was let in at +%s",
				m.until(loss.at), snap.Serving, q.key, m.who(q.visitor), m.until(sr.first))
		}
	}
	for _, b := range snap.Batches {
		if !b.At.After(loss.at) {
			continue
		}
		if m.paused {
			m.hole(holeH, "the room re-created after the loss at +%s let in places %d to %d at +%s while paused", m.until(loss.at), b.Start, b.End()-1, m.until(b.At))
		}
		for q := range m.places {
			sr := m.subjects[q.visitor]
			if q.key < b.Start || q.key >= b.End() || sr == nil || !sr.hadPass || sr.first.After(loss.at) {
				continue
			}
			m.hole(holeE, "the room re-created after the loss at +%s let in places %d to %d at +%s, among them place %d, whose holder (visitor %s) was let in at +%s",
				m.until(loss.at), b.Start, b.End()-1, m.until(b.At), q.key, m.who(q.visitor), m.until(sr.first))
		}
	}
}

// checkRate holds invariant 7: the room lets fans in within
// new_users_per_minute, whether they come from the line, walk in on the spot
// or come back at the front (a lapsed admission, a skipped ghost, an
// idled-out session). Over any rateSpan a step earns that span's worth of
// budget, and the room holds at most one second's worth (one visitor's at
// least) banked before it: MaxCatchUpTicks never makes a burst beyond that.
// The budget is granted a second at a time, at the second's first step: a
// span that begins in a second before its step (a request came first) holds
// that second's grant too, on top of what was banked, which a walk-in or a
// returner may have taken in the moment before the step (docs/line.md).
func (m *admissionModel) checkRate(now time.Time, snap waitingroom.Snapshot) {
	m.tb.Helper()
	n := snap.Admitted + snap.Returned + m.countBase
	for len(m.admissions) > 0 && now.Sub(m.admissions[0].at) > rateSpan {
		m.admissions = m.admissions[1:]
	}
	if len(m.admissions) > 0 {
		// The highest rate in force over the span, and over the second
		// before it, whose budget may be banked.
		first := m.admissions[0]
		rate := m.maxRate(first.at.Add(-time.Second), now)
		perSecond := float64(rate) / 60
		span := rateSpan.Seconds()
		if !first.stepped {
			span++
		}
		limit := uint64(max(perSecond, 1) + perSecond*span)
		if n-first.n > limit {
			m.fatalf("invariant 7: %d fans let in from +%s to +%s (%d of them back at the front in all), over %d at %d/min",
				n-first.n, m.until(first.at), m.until(now), snap.Returned, limit, rate)
		}
	}
	m.admissions = append(m.admissions, admissionCount{at: now, n: n, stepped: m.stepped >= now.Unix()})
}

// capAt is the cap in force at now, a phase's (docs/configuration.md,
// "Phases") or the room's. A phase that lowers it ends no session and takes
// back no admission: the slots held at the switch stay held, so invariant 1
// allows their count above the new cap, but never a rise (nobody is let in
// until it falls below).
func (m *admissionModel) capAt(now time.Time) int { return m.settings.At(now).TotalActiveUsers }

// maxRate is the highest new_users_per_minute in force from from to to,
// phases included. The rate changes only where a phase starts or ends, so
// it is read at the span's ends and at every switch within it: a phase's
// end as much as a start, for where a slower phase ends the room's own
// rate (or the next phase's, after a gap) is back, and the store's step
// accrues at it (docs/configuration.md, "Phases").
func (m *admissionModel) maxRate(from, to time.Time) int {
	rate := max(m.settings.At(from).NewUsersPerMinute, m.settings.At(to).NewUsersPerMinute)
	for _, p := range m.settings.Phases.List() {
		for _, at := range []time.Time{p.Start, p.End} {
			if at.After(from) && !at.After(to) {
				rate = max(rate, m.settings.At(at).NewUsersPerMinute)
			}
		}
	}
	return rate
}

// revoked records that the origin ended the session of p through node: the
// store ends the visitor's live session.
func (m *admissionModel) revoked(p waitingroom.Pass, node int) {
	now := m.clock.Now()
	for _, s := range m.sessions {
		// Only the pass's own session ends (Store.Release): one named by
		// its end, as the pass id is. A pass of a session requeued before
		// ends nothing of the one the visitor holds now.
		if s.subject == p.Subject && s.live(now) && s.exp.Unix() == p.ExpiresAt.Unix() {
			s.ended, s.endedAt, s.endNode, s.endEvent = true, now, node, m.event
		}
	}
	m.tb.Logf("  the origin revoked the session of %s through node %d", m.who(p.Subject), node)
}

func (m *admissionModel) subject(v string) *subjectRec {
	sr := m.subjects[v]
	if sr == nil {
		sr = &subjectRec{}
		m.subjects[v] = sr
	}
	return sr
}

// epochAt counts the idle-outs of visitor v the store recorded by now.
func (m *admissionModel) epochAt(v string, now time.Time) int {
	n := 0
	for _, at := range m.subject(v).idleOuts {
		if !at.After(now) {
			n++
		}
	}
	return n
}

// liveSessionOf is visitor v's live session, if the model knows one.
func (m *admissionModel) liveSessionOf(v string, now time.Time) *sessionRec {
	for _, s := range m.sessions {
		if s.subject == v && s.live(now) {
			return s
		}
	}
	return nil
}

// inLine reports whether a place still stands in line: it was not spent,
// and nobody was let in on it.
// lineOrder is where key k stands in the line: the place a phase's draw
// gave it (docs/fairness.md, "A phase's draw"), as either node knows it, or k.
func (m *admissionModel) lineOrder(k uint64) uint64 {
	for _, n := range m.nodes {
		if o, drawn := n.room.LineOrder(k); drawn {
			return o
		}
	}
	return k
}

func (m *admissionModel) inLine(p *placeRec) bool {
	return !p.spent && !m.subject(p.id.visitor).hadPass
}

// heldSession is the live session an answer must hand the pass of: that of
// the ticket presented, or, for a join, that of the place the answer gives.
func (m *admissionModel) heldSession(presented *cookieRec, d decision) *sessionRec {
	now := m.clock.Now()
	if presented != nil {
		return m.liveSessionOf(presented.place.visitor, now)
	}
	if d.Ticket.Room != "" {
		return m.liveSessionOf(d.Ticket.Visitor.String(), now)
	}
	return nil
}

// judge checks one answer against the model and records what it handed out.
func (m *admissionModel) judge(f *modelFan, node int, a arrival, d decision, own bool, before waitingroom.Snapshot) {
	m.tb.Helper()
	now := m.clock.Now()
	if d.Accepted {
		m.checkAccepted(node, a.Pass, d.Pass)
		m.resigned(f, node, a.Pass, d, own)
		return
	}
	var presented *cookieRec
	if a.Ticket != "" {
		if presented = m.cookies[a.Ticket]; presented == nil {
			m.fatalf("the fan sent a ticket the room never handed out")
		}
	}
	// Invariant 2, copies: a ticket whose session is live, sent without its
	// pass, claims that same session (docs/endpoints.md, "Tickets and passes are bearer
	// tokens"); so does a second browser of the account that holds it
	// (docs/configuration.md, "The account block"), which is handed the account's ticket.
	// One answer short of the pass is right: a node whose view predates
	// the session (it has not refreshed since) may hold an unclaimed ticket
	// at the front of the line, on its place, for one more poll.
	var superseded *sessionRec
	if held := m.heldSession(presented, d); held != nil {
		s := held
		same := d.NewPass != "" && d.Pass.ID == s.key.id && d.Pass.Subject == s.subject && sameEnd(d.Pass.ExpiresAt, s.exp)
		claimed := presented != nil && presented.claimed
		stale := m.tickSeq[node] < s.startEvent && !claimed && d.NewPass == "" && !d.Rejoined &&
			d.Ticket.Room != "" && d.Ticket.Visitor.String() == s.subject
		// After a loss, until a pass of the session is handed out again
		// (reclaimed), the store may no longer know it: the ticket alone
		// may rejoin at the back, as a place whose admission ended before
		// the loss is refused as finished (docs/operations.md, "When Redis comes back
		// empty"), wait at the front as a returner, or, for a place let in
		// within the nodes' lag before the loss (which their views, and so
		// the re-seed, do not have), wait in line on its place; the pass
		// it holds still reclaims the session. A rejoin is the new place's
		// answer, which may be an admission of its own (an account's new
		// place, say).
		lost := s.lost && (d.NewPass == "" || (d.Rejoined && d.Pass.Subject != s.subject))
		// A browser that holds a pass from before the loss, with the
		// ticket of a newer place (its ticket alone rejoined, and the
		// account's new place was let in through another browser), is
		// answered on its pass: that session is reclaimed, or its holder
		// waits at the front when its held slot is gone.
		if rec := m.passes[a.Pass]; rec != nil && a.Pass != "" && rec.session.current().lost && d.Ticket.Visitor.String() == rec.session.subject {
			lost = true
		}
		if lost {
			m.tb.Logf("  the store lost the session of visitor %s: its ticket alone is answered %s", m.who(s.subject), m.describe(d))
		}
		// A claim made within the nodes' lag before the loss (their views,
		// which the re-seed restores, still had the admission unclaimed)
		// is made again by the ticket alone, within the admission's grace:
		// the store opens the session anew, in the one slot the re-seed
		// held for the admission, ending a whole session_duration from the
		// new claim (so with another pass id), and a pass from before the
		// loss, reclaimed, is signed again as that session's. The model
		// takes the new session for the lost one going on (one session per
		// visitor still holds); invariant 3 still bounds its end.
		if s.lost && !same && d.NewPass != "" && d.Pass.Subject == s.subject {
			m.tb.Logf("  the session of visitor %s (jti %s, exp +%s), claimed again after the loss by its ticket, goes on as jti %s to +%s",
				m.who(s.subject), m.jti(s.key.id), m.until(s.exp), m.jti(d.Pass.ID), m.until(d.Pass.ExpiresAt))
			same, superseded = true, s
			m.claimedAgain++
		}
		if !same && !stale && !lost {
			msg := fmt.Sprintf("invariant 2: the ticket of visitor %s (claimed %v), sent without its pass while its session (jti %s, exp +%s) is live, got %s instead of that session's pass",
				m.who(s.subject), claimed, m.jti(s.key.id), m.until(s.exp), m.describe(d))
			if claimed {
				m.hole(holeB, "%s", msg)
			}
			m.fatalf("%s", msg)
		}
	}
	if presented != nil {
		// Invariant 4: a fan who kept polling is never passed over. Their
		// place reaches the front while they poll, and their next poll
		// claims it; only a fan who stayed away past their grace (or long
		// enough to count as a ghost) is sent to the front as a returner or
		// to the back (docs/line.md, "Who is still in line").
		//
		// After a loss, a browser that holds a pass from before it and a
		// newer place (its ticket alone rejoined) is answered on the
		// session of its pass: at the front as a returner when its held
		// slot is gone (docs/operations.md, "When Redis comes back empty"), ahead of
		// that place, which the answer replaces.
		onPass := false
		if rec := m.passes[a.Pass]; rec != nil && a.Pass != "" {
			s := rec.session.current()
			onPass = s.era < len(m.losses) && d.Ticket.Visitor.String() == s.subject && d.Ticket.Key != presented.place.key
		}
		if p := m.places[presented.place]; !onPass && m.inLine(p) && p.waiting && now.Sub(p.lastMark) <= m.lookback && (d.Rejoined || d.Status.Returned) {
			msg := fmt.Sprintf("invariant 4: the fan at place %d polled %s ago, still in line, and was passed over: %s", p.id.key, now.Sub(p.lastMark), m.describe(d))
			for _, l := range m.losses {
				if p.event > min(l.tickSeq[0], l.tickSeq[1]) && p.event <= l.event {
					m.hole(holeI, "%s (the place was handed out after the nodes' last tick before the loss at +%s)", msg, m.until(l.at))
				}
			}
			for _, b := range m.snap.Batches {
				if n := len(m.losses); n > 0 && b.Start <= p.id.key && p.id.key < b.End() && b.Claimed >= b.Count && !b.At.After(m.losses[n-1].at) {
					m.hole(holeG, "%s (its admission, places %d to %d, restored after the loss at +%s, has every slot claimed)", msg, b.Start, b.End()-1, m.until(m.losses[n-1].at))
				}
				if b.Start <= p.id.key && p.id.key < b.End() && b.End()-b.Start > b.Count && b.Claimed >= b.Count {
					m.hole(holeC, "%s (its admission, places %d to %d, let %d in, skipping the rest as ghosts, and every slot of it is claimed)", msg, b.Start, b.End()-1, b.Count)
				}
			}
			m.fatalf("%s", msg)
		}
	}
	if d.NewPass != "" {
		m.checkWaitlistClaim(node, d.Pass, true)
		m.claimingAgain, m.handNode = superseded != nil, node
		s := m.handPass(f, d, own)
		m.claimingAgain = false
		if superseded != nil && s != superseded {
			superseded.next, s.era = s, superseded.era
		}
	}
	if d.Ticket.Room != "" {
		q := placeID{visitor: d.Ticket.Visitor.String(), key: d.Ticket.Key}
		p := m.places[q]
		if p == nil {
			// A place handed out after a loss is behind every ticket
			// handed out before it (docs/operations.md, "When Redis comes back empty").
			if n := len(m.losses); n > 0 && q.key <= m.losses[n-1].maxKey {
				m.fatalf("a place handed out after the store lost the room (key %d) is not behind every earlier ticket (keys up to %d)", q.key, m.losses[n-1].maxKey)
			}
			p = &placeRec{id: q, account: f.account, order: len(m.places), era: len(m.losses), event: m.event}
			m.places[q] = p
		}
		if presented != nil && presented.place != q {
			m.places[presented.place].spent = true
		}
		if d.Rejoined && f.account != "" {
			// The account's request was answered from the account's place
			// (docs/configuration.md, "The account block"), which it found spent, and
			// rejoined: that place, the last one the account was given, is
			// over. It can only be one whose turn has come (it is below
			// serving) while its holder was away.
			var last *placeRec
			for _, o := range m.places {
				if o.account == f.account && o.id != q && m.inLine(o) && (last == nil || o.order > last.order) {
					last = o
				}
			}
			if last != nil && m.lineOrder(last.id.key) < m.snap.Serving && now.Sub(last.lastMark) > m.lookback {
				last.spent = true
			}
		}
		if st := d.Status.State; st == waitingroom.StateQueued || st == waitingroom.StatePaused || st == waitingroom.StatePrequeue || st == waitingroom.StateWaitlist {
			p.lastMark, p.waiting = now, !d.Status.Returned
		}
		if d.SetTicket != "" {
			if m.cookies[d.SetTicket] == nil {
				m.cookies[d.SetTicket] = &cookieRec{place: q, claimed: d.Ticket.Claimed}
			}
			f.copies = append(f.copies, d.SetTicket)
			if own {
				f.ticket = d.SetTicket
			}
		}
		// Invariant 11: a fan registered in a phase's pre-queue (the model
		// room has no pre-queue of its own) is shown no position until
		// the phase's draw places them.
		if own && d.Status.State == waitingroom.StatePrequeue && d.Status.Position != nil {
			m.fatalf("invariant 11: fan %d (key %d) in a phase's pre-queue was shown position %d before the draw", f.index, q.key, *d.Status.Position)
		}
		// Invariant 5: the position shown for one place never rises between
		// two polls of the ticket the browser holds (README, "What it does").
		if own && d.Status.Position != nil && (d.Status.State == waitingroom.StateQueued || d.Status.State == waitingroom.StatePaused || d.Status.State == waitingroom.StateWaitlist) {
			pos := *d.Status.Position
			if f.hasPos && f.chain == q && pos > f.lastPos {
				m.fatalf("invariant 5: fan %d's position at place %d rose from %d to %d", f.index, q.key, f.lastPos, pos)
			}
			f.chain, f.lastPos, f.hasPos = q, pos, true
		} else if own && f.chain != q {
			f.chain, f.hasPos = q, false
		}
	} else if presented != nil && d.Rejoined {
		m.places[presented.place].spent = true
	}
	m.askedRequeued(d, presented)
	// Invariant 4, returners: a fan let in at the front as a returner
	// lapsed first, once (their turn's grace ran out, or they were skipped
	// as a ghost) or once per idle-out of their session (docs/bots.md, "Bounded
	// returns" and "Who is still in line").
	if delta := m.snap.Returned - before.Returned; m.snap.Incarnation == before.Incarnation && m.snap.Returned > before.Returned {
		if d.NewPass == "" {
			m.fatalf("invariant 4: the store counted %d returner(s) let in, and the answer handed out no pass: %s", delta, m.describe(d))
		}
		sr := m.subject(d.Pass.Subject)
		sr.returns += int(delta)
		// A loss that found the visitor inside may send them to the front
		// once more: their pass's held slot was gone when they came back.
		if sr.returns > 1+len(sr.idleOuts)+sr.losses+sr.requeues {
			m.fatalf("invariant 4: visitor %s was let in at the front %d times, with %d idle-out(s) and %d loss(es) of the store while inside: once per lapse at most",
				m.who(d.Pass.Subject), sr.returns, len(sr.idleOuts), sr.losses)
		}
	}
}

// handPass records a pass handed to fan (to its own browser, or to whoever
// held the copy it sent) and checks the session's bounds.
func (m *admissionModel) handPass(f *modelFan, d decision, own bool) *sessionRec {
	m.tb.Helper()
	now := m.clock.Now()
	p := d.Pass
	sr := m.subject(p.Subject)
	if !sr.hadPass {
		sr.first, sr.hadPass = now, true
	}
	if sr.requeuedOrder != 0 {
		m.letInRequeued(p.Subject, sr)
	}
	// Invariant 3: session_duration is the hard limit of a visitor's
	// sessions (docs/line.md, "Who is still in line"), counted from their first
	// admission; admission_grace is the slack between a turn and its claim.
	if limit := sr.first.Add(m.settings.SessionDuration + m.settings.AdmissionGrace); p.ExpiresAt.After(limit) {
		msg := fmt.Sprintf("invariant 3: visitor %s, first let in at +%s, was handed a pass to +%s, past +%s",
			m.who(p.Subject), m.until(sr.first), m.until(p.ExpiresAt), m.until(limit))
		if m.epochAt(p.Subject, now) > 0 {
			m.hole(holeA, "%s after its session idled out", msg)
		}
		if m.claimingAgain {
			m.hole(holeE, "%s, its session lost with the store and claimed again by its ticket in an admission the re-created room made again", msg)
		}
		if n := len(m.losses); n > 0 && !m.losses[n-1].at.Before(sr.first) && now.Sub(m.losses[n-1].at) <= m.settings.AdmissionGrace+m.settings.ReturnWindow+time.Minute {
			// Its place was let in within the nodes' lag before the loss,
			// and the re-created room, not knowing it, let it in again.
			m.hole(holeE, "%s, its place let in again by the room re-created after the loss at +%s", msg, m.until(m.losses[n-1].at))
		}
		m.fatalf("%s", msg)
	}
	key := sessionKey{id: p.ID, epoch: m.epochAt(p.Subject, now)}
	s := m.sessions[key]
	if s == nil {
		// The session counts, for an account, in the era of the place it
		// was let in from.
		era := len(m.losses)
		if pl := m.places[placeID{visitor: d.Ticket.Visitor.String(), key: d.Ticket.Key}]; pl != nil {
			era = pl.era
		}
		s = &sessionRec{key: key, subject: p.Subject, exp: p.ExpiresAt, started: now, startEvent: m.event, era: era}
		m.sessions[key] = s
	}
	if s.lost {
		// Reclaimed: the same session goes on (the check below holds
		// its end), its slot the store's again.
		s.lost = false
		m.tb.Logf("  the session of visitor %s (jti %s, exp +%s) was reclaimed after the loss", m.who(p.Subject), m.jti(p.ID), m.until(p.ExpiresAt))
	}
	for _, o := range m.sessions {
		if o.subject == p.Subject && m.revokedBeforeSeeing(o) {
			m.hole(holeF, "invariant 6: node %d handed out a pass (jti %s) to %s, whose session (jti %s) was revoked through node %d at +%s, just before the store lost the room",
				m.handNode, m.jti(p.ID), m.who(p.Subject), m.jti(o.key.id), o.endNode, m.until(o.endedAt))
		}
		if n := len(m.losses); n > 0 && o.subject == p.Subject && o.ended && !o.endIdle && o.key.id != p.ID && !o.endedAt.After(m.losses[n-1].at) {
			m.hole(holeG, "invariant 6: node %d handed out a new pass (jti %s) to %s, whose session (jti %s) the origin revoked at +%s, before the loss at +%s: the restored admission counted a claim free",
				m.handNode, m.jti(p.ID), m.who(p.Subject), m.jti(o.key.id), m.until(o.endedAt), m.until(m.losses[n-1].at))
		}
	}
	if s.ended {
		m.fatalf("invariant 6: a pass of the session of %s (jti %s) was handed out after the session ended at +%s", m.who(p.Subject), m.jti(p.ID), m.until(s.endedAt))
	}
	if !sameEnd(s.exp, p.ExpiresAt) {
		m.fatalf("invariant 2: two passes of session jti %s end at +%s and +%s", m.jti(p.ID), m.until(s.exp), m.until(p.ExpiresAt))
	}
	m.checkPhasePrequeue(d.Ticket.Key, now)
	m.passes[d.NewPass] = &passRec{pass: p, handedAt: now, fan: f, session: s}
	if own {
		f.pass, f.passExp = d.NewPass, p.ExpiresAt
	}
	return s
}

// sameEnd reports whether two passes end alike: a pass carries its end in
// whole seconds, and a session taken over from its pass (a reclaim after a
// loss) ends as the pass says.
func sameEnd(a, b time.Time) bool { return a.Unix() == b.Unix() }

// checkPhasePrequeue holds invariant 11 for a pass handed out for order
// key key: nobody who registered in a phase's pre-queue is let in before
// the phase's start, which draws them.
func (m *admissionModel) checkPhasePrequeue(key uint64, now time.Time) {
	snap, err := m.truth.Snapshot(m.ctx, m.roomID, now, 0)
	if err != nil {
		m.fatalf("reading the store: %v", err)
	}
	for _, pr := range snap.PhaseRanges {
		if pr.Holds(key) && now.Before(pr.Starts) {
			m.fatalf("invariant 11: key %d, registered in phase %s's pre-queue, was let in at +%s, before the phase's start at +%s",
				key, pr.Phase, m.until(now), m.until(pr.Starts))
		}
	}
}

// checkAccepted holds invariant 6: a pass the room lets through belongs to
// a live session.
func (m *admissionModel) checkAccepted(node int, token string, p waitingroom.Pass) {
	m.tb.Helper()
	now := m.clock.Now()
	rec := m.passes[token]
	if rec == nil {
		m.fatalf("invariant 6: node %d accepted a pass the room never handed out", node)
	}
	s := rec.session.current()
	switch {
	case s.lost:
		m.fatalf("invariant 6: node %d accepted a pass of %s from before the loss without reclaiming its session", node, m.who(p.Subject))
	case !now.Before(s.exp.Add(passLeeway)):
		m.fatalf("invariant 6: node %d accepted a pass of %s that expired at +%s", node, m.who(p.Subject), m.until(s.exp))
	case s.ended && s.endIdle && !rec.pass.IssuedAt.Before(s.endedAt.Add(-time.Second)):
		m.hole(holeD, "invariant 6: node %d accepted a pass of %s issued at +%s, a second or less before its session idled out at +%s", node, m.who(p.Subject), m.until(rec.pass.IssuedAt), m.until(s.endedAt))
	case s.ended && s.endIdle:
		m.fatalf("invariant 6: node %d accepted a pass of %s (handed out at +%s) whose session idled out at +%s", node, m.who(p.Subject), m.until(rec.handedAt), m.until(s.endedAt))
	case s.ended && !s.endIdle && m.knowsRevocation(node, s) && rec.session.next != nil:
		m.hole(holeG, "invariant 6: node %d accepted a pass of %s (jti %s) from before the loss, whose session, claimed again after the loss as jti %s, the origin revoked at +%s: the revocation names the new id only",
			node, m.who(p.Subject), m.jti(rec.pass.ID), m.jti(s.key.id), m.until(s.endedAt))
	case s.ended && !s.endIdle && m.knowsRevocation(node, s):
		m.fatalf("invariant 6: node %d accepted a pass of %s whose session was revoked at +%s through node %d", node, m.who(p.Subject), m.until(s.endedAt), s.endNode)
	}
}

// check holds the invariants on the state after every step.
func (m *admissionModel) check() {
	m.tb.Helper()
	if m.tainted != "" {
		return
	}
	for _, n := range m.nodes {
		n.noteWaitlist()
	}
	now := m.clock.Now()
	live := map[sessionKey]*sessionRec{}
	slots := 0
	for _, s := range m.sessions {
		if s.live(now) {
			live[s.key] = s
			// A session the store lost holds a slot only as one of the
			// anonymous ones the re-seed held, as many as the nodes' views
			// had (one let in within their lag has none), and only until
			// the hold ends: it counts here once reclaimed, when a pass of
			// it is handed out again. Until then its pass goes nowhere
			// (checkAccepted), and the store's count, held slots
			// included, is checked by observe.
			if !s.lost {
				slots++
			}
		}
	}
	// Invariant 1, as the passes handed out tell it.
	if limit := m.capAt(now); slots > limit && slots > m.storeHeld {
		m.fatalf("invariant 1: %d live sessions holding slots by the passes handed out, cap %d in force at +%s, and the store held %d",
			slots, limit, m.until(now), m.storeHeld)
	}
	// Invariant 2, per visitor: one live session.
	bySubject := map[string]int{}
	for _, s := range live {
		bySubject[s.subject]++
	}
	var crowded []string
	for v, n := range bySubject {
		if n > 1 {
			crowded = append(crowded, fmt.Sprintf("visitor %s holds %d live sessions", m.who(v), n))
		}
	}
	if len(crowded) > 0 {
		sort.Strings(crowded)
		m.fatalf("invariant 2: %s", strings.Join(crowded, "; "))
	}
	// Invariant 2, per account: one place in line, one live session, and
	// not both (docs/configuration.md, "The account block"). A fan without an account is
	// bound by the ticket it holds only: a spent ticket kept from an earlier
	// visit is a newcomer's (docs/bots.md, "Per-client join limits"). A loss of
	// the store forgets which place or session an account holds, and the
	// account's next join takes a new place behind every earlier ticket
	// (docs/configuration.md, "When Redis restarts empty"): the rule binds what the
	// account was handed between two losses, each era on its own.
	type holding struct {
		sessions map[sessionKey]bool
		subjects map[string]bool
		places   []placeID
	}
	accounts := map[string]*holding{}
	get := func(account string, era int) *holding {
		a := account
		if era > 0 {
			a = fmt.Sprintf("%s (handed out after loss %d)", account, era)
		}
		h := accounts[a]
		if h == nil {
			h = &holding{sessions: map[sessionKey]bool{}, subjects: map[string]bool{}}
			accounts[a] = h
		}
		return h
	}
	for _, rec := range m.passes {
		if a := rec.fan.account; a != "" && rec.session.live(now) {
			h := get(a, rec.session.era)
			h.sessions[rec.session.key] = true
			h.subjects[rec.session.subject] = true
		}
	}
	for _, p := range m.places {
		if p.account != "" && m.inLine(p) {
			h := get(p.account, p.era)
			h.places = append(h.places, p.id)
		}
	}
	names := make([]string, 0, len(accounts))
	for a := range accounts {
		names = append(names, a)
	}
	sort.Strings(names)
	for _, a := range names {
		h := accounts[a]
		switch {
		case len(h.subjects) > 1:
			m.fatalf("invariant 2: account %s holds live sessions of %d visitors at once", a, len(h.subjects))
		case len(h.sessions) > 1:
			m.fatalf("invariant 2: account %s holds %d live sessions", a, len(h.sessions))
		case len(h.places) > 1:
			keys := make([]uint64, len(h.places))
			for i, p := range h.places {
				keys[i] = p.key
			}
			slices.Sort(keys)
			m.fatalf("invariant 2: account %s holds %d places in line: %v", a, len(h.places), keys)
		case len(h.places) == 1 && len(h.sessions) == 1:
			m.fatalf("invariant 2: account %s holds a live session and a place in line (%d)", a, h.places[0].key)
		}
	}
}

// ---------------------------------------------------------------------------
// Requeues (docs/PROTOCOL.md, "Requeue"): the origin fails a fan's session
// through no fault of theirs, and the fan goes back to the front.

// requeue has the origin fail the session of pass p, which a request of fan
// carried through node, and checks invariant 8: a ticket is requeued at most
// requeue_on_origin_error times (once while it is 0), and every requeue is
// counted by the store.
func (m *admissionModel) requeue(f *modelFan, p waitingroom.Pass, node int) {
	m.tb.Helper()
	now := m.clock.Now()
	m.event++
	tr, err := m.nodes[node].requeue(m.ctx, p)
	if err != nil {
		// The store is away: the session runs on.
		m.tb.Logf("  the requeue of %s was not made: %v", m.who(p.Subject), err)
		return
	}
	sr := m.subject(p.Subject)
	bound := max(1, m.cfg.Requeues)
	if tr.To != waitingroom.TicketRequeued {
		m.tb.Logf("  the origin failed the session of %s: %s (%d of %d requeues made)", m.who(p.Subject), tr.Event, sr.requeues, bound)
		if s := m.liveSessionOf(p.Subject, now); sr.requeues < bound && len(m.losses) == 0 && s != nil && s.exp.Unix() == p.ExpiresAt.Unix() {
			m.fatalf("invariant 8: the requeue of %s, with %d of %d made and the session live, was refused", m.who(p.Subject), sr.requeues, bound)
		}
		m.observe()
		return
	}
	sr.requeues++
	if sr.requeues > bound {
		m.fatalf("invariant 8: visitor %s was requeued %d times, at most %d", m.who(p.Subject), sr.requeues, bound)
	}
	m.requeueSeq++
	sr.requeuedOrder, sr.requeuedAt, sr.lastAsked = m.requeueSeq, now, now
	// The session ends as a revoked one does: the node that made the
	// requeue refuses its passes at once, the other from its next tick.
	m.revoked(p, node)
	f.pass = ""
	m.tb.Logf("  the origin failed the session of %s: requeued (%d of %d, order %d)", m.who(p.Subject), sr.requeues, bound, sr.requeuedOrder)
	m.observe()
	if len(m.losses) == 0 && m.snap.Requeued != uint64(m.requeueSeq) {
		m.fatalf("invariant 8: the store counted %d requeues, %d were made", m.snap.Requeued, m.requeueSeq)
	}
}

// askedRequeued records an answer to the ticket presented telling a fan
// they wait at the front after a requeue, or that their place there was
// lost.
func (m *admissionModel) askedRequeued(d decision, presented *cookieRec) {
	m.tb.Helper()
	if presented != nil && d.Rejoined {
		// They stopped asking for the returner window, or were let in
		// again and did not come within the grace: the place at the front
		// is lost.
		if sr := m.subjects[presented.place.visitor]; sr != nil {
			sr.requeuedOrder, sr.passedBy = 0, ""
		}
	}
	if !d.Status.Requeued {
		return
	}
	v := d.Ticket.Visitor.String()
	sr := m.subjects[v]
	if (sr == nil || sr.requeuedOrder == 0) && len(m.losses) == 0 {
		m.fatalf("visitor %s was told they were requeued, and never was", m.who(v))
	}
	if sr != nil {
		sr.lastAsked = m.clock.Now()
		if sr.passedBy != "" && len(m.losses) == 0 {
			m.fatalf("invariant 9: visitor %s (requeued %s) was told to wait at the front after %s, requeued after them, was let in again",
				m.who(v), m.until(sr.requeuedAt), m.who(sr.passedBy))
		}
	}
}

// requeueSlack is how long after a requeued fan last asked the model is
// sure the store still holds them at the front: the returner window, less
// the controller's step that drops them.
const requeueSlack = waitingroom.ReturnerWindow - 2*time.Second

// letInRequeued checks invariant 9 as the requeued visitor v comes for
// their new session: requeued fans are let in in the order they were
// requeued (by the controller's step, or by a claim once nobody requeued
// before still waits), so everyone requeued before v and still asking at
// the front was let in too, at the same step or before: none of them may
// be told to wait at the front again (askedRequeued). The session v is let
// into is a new one, whose length session_duration counts from now
// (invariant 3 bounds it from here).
func (m *admissionModel) letInRequeued(v string, sr *subjectRec) {
	m.tb.Helper()
	now := m.clock.Now()
	for w, o := range m.subjects {
		if w == v || o.requeuedOrder == 0 || o.requeuedOrder > sr.requeuedOrder {
			continue
		}
		if now.Sub(o.lastAsked) < requeueSlack && o.passedBy == "" {
			o.passedBy = v
		}
	}
	sr.requeuedOrder, sr.passedBy = 0, ""
	sr.first = now
}
