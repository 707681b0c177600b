package rehearsal

import (
	"bytes"
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"math/rand/v2"
	"net/http"
	"slices"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/foyer-dev/foyer/booking"
	"github.com/foyer-dev/foyer/booking/payments"
	"github.com/foyer-dev/foyer/waitingroom"
)

// The scenario "a sell-out followed by refunds" (docs/rehearsal.md): the
// room's waitlist on and the booking service run with -waitlist, more fans
// than places, so that the sale sells out and the line becomes the
// waitlist; then a share of the paid orders is refunded through the
// provider's signed charge.refunded webhook, and the places that come back
// must go to the waitlisted fans, in the order of their places, one fan's
// worth for each refund.

// minRefunds is the fewest refunds the scenario makes, whatever the share,
// so that a small sale still tests an order among several returns.
const minRefunds = 5

// refundGap is the least time between two refunds; the refunds of a sale
// spread over a few seconds.
const refundGap = 300 * time.Millisecond

// resaleMargin is added to the longest a returned place may rightly wait
// (resaleWait).
const resaleMargin = 10 * time.Second

// resaleWait bounds the wait for a refund's place to be taken again before
// the next refund, and for the last places to be sold after the last one:
// a fan who walked away from the waitlist without a word may be let in for
// it, and the room owes them the unit until their session could have ended
// (admission_grace + session_duration, docs/waitlist.md) before it lets the
// next fan in.
func (r *rehearsal) resaleWait() time.Duration {
	return r.cfg.Grace + r.cfg.Stack.Session + resaleMargin
}

// errRefunds fails a refund rehearsal whose returned places did not reach
// the waitlist as docs/waitlist.md promises.
var errRefunds = errors.New("rehearsal: the refunded places did not reach the waitlist as promised")

// refundSent is one refund the rehearsal sent, as the booking service
// answered it.
type refundSent struct {
	order    string
	at       time.Duration // offset of the answer
	status   int
	returned int // places back on sale, by the answer
	supply   int // the answer's X-Waiting-Room-Supply; -1 when absent
	already  bool
	err      string // transport error, or an error code
	reported bool   // the supply reached the room's admin API
}

// refunds is the scenario's side of the run: the refunder's record, and
// the waitlist's end once every returned place is sold again.
type refunds struct {
	mu      sync.Mutex
	planned int // refunds chosen
	paid    int // paid orders to choose from
	sent    []refundSent
	note    string // why the refunder stopped early, if it did
	// perFan is the room's estimate of units a fan when the first refund
	// was sent: its range, and whether it was measured. The waitlist lets
	// a fan in for the middle of that range, rounded up (docs/waitlist.md).
	perFan   [2]float64
	measured bool

	over atomic.Bool // no place is left to come back: the waitlist's fans go
}

// waitlistOver reports whether fans still on the waitlist may stop: the
// refund scenario is over (or there is none).
func (r *rehearsal) waitlistOver() bool {
	return r.refunds == nil || r.refunds.over.Load()
}

// refunder waits for the sell-out, then refunds the chosen orders one after
// another, each once the room has seen the places of the one before taken
// again, and closes the waitlist once every returned place is sold again.
//
// Why one after another: the room keeps the newest supply report by when it
// was read (docs/supply.md), and the refund's report comes from the admin
// API, not from an answer to a fan. A fan's hold read by the gateway just
// before a refund's report, but sent on at its next step, just after, would
// be dropped as older, and the room would go on owing that fan's unit
// (docs/waitlist.md, "Owed units"): it would let in one fan fewer until the
// session could have ended. An operator's tool that reports refunds does
// the same wait.
func (r *rehearsal) refunder(ctx context.Context) {
	rf := r.refunds
	defer rf.over.Store(true)
	if !r.waitFor(ctx, func() bool { return r.live.soldAllSeen.Load() > 0 && r.roomSoldOut() }, r.cfg.MaxTime) {
		rf.stop("the sale did not sell out")
		return
	}
	chosen := r.chooseRefunds()
	rf.mu.Lock()
	rf.planned = len(chosen)
	rf.mu.Unlock()
	returned := 0
	for i, id := range chosen {
		if ctx.Err() != nil {
			rf.stop("the run ended")
			return
		}
		before := r.roomSupply()
		if i == 0 {
			rf.mu.Lock()
			rf.perFan, rf.measured = before.perFan, before.measured
			rf.mu.Unlock()
		}
		s := r.sendRefund(ctx, id)
		rf.mu.Lock()
		rf.sent = append(rf.sent, s)
		rf.mu.Unlock()
		if s.returned == 0 {
			continue
		}
		returned += s.returned
		// The room has let a fan in and seen them take the place when its
		// supply is back where it was before the refund.
		if !r.waitFor(ctx, func() bool { now := r.roomSupply(); return now.ok && (!before.ok || now.units <= before.units) }, r.resaleWait()) {
			rf.stop("a refund's place was not taken again within " + r.resaleWait().String())
			return
		}
		sleepCtx(ctx, refundGap)
	}
	if !r.waitFor(ctx, func() bool { return r.resold() >= returned }, r.resaleWait()) {
		rf.stop("the returned places were not all sold again within " + r.resaleWait().String())
	}
}

// roomUnits is the room's supply as its admin API shows it, with its
// estimate of units a fan.
type roomUnits struct {
	units    uint64
	perFan   [2]float64
	measured bool
	ok       bool
}

func (r *rehearsal) roomSupply() roomUnits {
	var v struct {
		Known    bool        `json:"known"`
		Units    *uint64     `json:"units"`
		PerFan   *[2]float64 `json:"per_fan"`
		Measured bool        `json:"measured"`
	}
	if err := getJSON(r.client, r.st.caddyAdmin+"/waiting-room/"+rehearsalRoom+"/supply", "room supply", 1<<20, &v); err != nil || !v.Known || v.Units == nil {
		return roomUnits{}
	}
	u := roomUnits{units: *v.Units, measured: v.Measured, ok: true}
	if v.PerFan != nil {
		u.perFan = *v.PerFan
	}
	return u
}

// roomSoldOut reports whether the room has switched to sold out, its line
// a waitlist.
func (r *rehearsal) roomSoldOut() bool {
	rc, err := r.st.room(r.client)
	return err == nil && rc.Settings.SoldOut
}

func (rf *refunds) stop(why string) {
	rf.mu.Lock()
	rf.note = why
	rf.mu.Unlock()
}

// waitFor polls cond every 100 ms until it holds (true), within passes or
// ctx ends (false).
func (r *rehearsal) waitFor(ctx context.Context, cond func() bool, within time.Duration) bool {
	deadline := time.Now().Add(within)
	for !cond() {
		if ctx.Err() != nil || time.Now().After(deadline) {
			return false
		}
		sleepCtx(ctx, 100*time.Millisecond)
	}
	return true
}

func sleepCtx(ctx context.Context, d time.Duration) {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
	case <-ctx.Done():
	}
}

// chooseRefunds picks the share of the paid orders to refund, at least
// minRefunds, at random from the run's seed.
func (r *rehearsal) chooseRefunds() []string {
	r.mu.Lock()
	ids := make([]string, 0, len(r.orders))
	for id, o := range r.orders {
		if !o.fromWaitlist && o.paymentID != "" {
			ids = append(ids, id)
		}
	}
	r.mu.Unlock()
	slices.Sort(ids)
	rng := rand.New(rand.NewPCG(r.cfg.Seed, 0x0efd))
	rng.Shuffle(len(ids), func(i, j int) { ids[i], ids[j] = ids[j], ids[i] })
	n := min(len(ids), max(minRefunds, int(math.Ceil(r.cfg.RefundShare*float64(len(ids))))))
	r.refunds.mu.Lock()
	r.refunds.paid = len(ids)
	r.refunds.mu.Unlock()
	return ids[:n]
}

// resold counts the places sold to fans let in from the waitlist.
func (r *rehearsal) resold() int {
	r.mu.Lock()
	defer r.mu.Unlock()
	n := 0
	for _, o := range r.orders {
		if o.fromWaitlist {
			n += len(o.seats) + len(o.zones)
		}
	}
	return n
}

// sendRefund refunds one order as the provider does: a charge.refunded
// event of the order's payment, for its whole amount, signed with the
// webhook secret and posted to the booking service; then it reports the
// supply the answer carries to the room, as an operator would.
func (r *rehearsal) sendRefund(ctx context.Context, orderID string) refundSent {
	s := refundSent{order: orderID, supply: -1}
	r.mu.Lock()
	o := r.orders[orderID]
	r.mu.Unlock()
	amount, err := booking.ParseMoney(o.amount)
	if err != nil {
		s.err = "amount " + strconv.Quote(o.amount) + ": " + err.Error()
		return s
	}
	now := time.Now()
	_, body := payments.NewEvent(payments.EventChargeRefunded, payments.Payment{
		ID: o.paymentID, Amount: int64(amount), Currency: o.currency, Status: payments.StatusRefunded,
		AmountRefunded: int64(amount), Metadata: map[string]string{"order_id": orderID},
	}, now)
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, r.st.bookingURL+"/api/payments/webhook", bytes.NewReader(body))
	if err != nil {
		s.err = err.Error()
		return s
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set(payments.SignatureHeader, payments.Sign(r.st.webhookSecret, now, body))
	resp, err := r.client.Do(req)
	s.at = r.now()
	if err != nil {
		s.err = err.Error()
		return s
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(io.LimitReader(resp.Body, 64<<10))
	s.status = resp.StatusCode
	var ans struct {
		Returned        int  `json:"returned"`
		AlreadyRefunded bool `json:"already_refunded"`
	}
	if resp.StatusCode != http.StatusOK || json.Unmarshal(b, &ans) != nil {
		s.err = errCode(b)
		return s
	}
	s.returned, s.already = ans.Returned, ans.AlreadyRefunded
	if v, err := strconv.Atoi(resp.Header.Get(booking.SupplyHeader)); err == nil {
		s.supply = v
	}
	r.mu.Lock()
	o.refunded = true
	r.orders[orderID] = o
	r.mu.Unlock()
	if s.supply >= 0 {
		s.reported = r.reportSupply(ctx, s.supply, orderID) == nil
	}
	return s
}

// reportSupply sets the room's supply through Caddy's admin API, with the
// refund as the reason (docs/supply.md, "From an operator").
func (r *rehearsal) reportSupply(ctx context.Context, units int, orderID string) error {
	body, _ := json.Marshal(map[string]any{"units": units, "reason": "refund of order " + orderID})
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, r.st.caddyAdmin+"/waiting-room/"+rehearsalRoom+"/supply", bytes.NewReader(body))
	if err != nil {
		return err
	}
	req.Header.Set("Content-Type", "application/json")
	resp, err := r.client.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, 64<<10))
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("supply report: %s", resp.Status)
	}
	return nil
}

// refundJudgement is the scenario's verdict.
type refundJudgement struct {
	planned, paid, sent, okSent int
	returned, resold            int
	note                        string
	perFan                      [2]float64 // the room's units a fan at the first refund
	measured                    bool
	// Fans let in from the waitlist, how many of them bought, and the
	// places each bought against the places each refund returned.
	letIn, bought   int
	oneFanEach      bool
	inversions      int // waitlisted fans told to wait after a fan behind them had their pass
	checkedWaitlist int // patient fans who were on the waitlist
	examples        []string
	report          *waitingroom.WaitlistReport
	reportErr       error
	reportAgrees    bool
	allResold, ok   bool
}

// judgeRefunds reads the scenario's outcome from the fans' records and the
// room's fairness report.
func (r *rehearsal) judgeRefunds(rep *waitingroom.WaitlistReport, repErr error) refundJudgement {
	rf := r.refunds
	rf.mu.Lock()
	j := refundJudgement{planned: rf.planned, paid: rf.paid, sent: len(rf.sent), note: rf.note, report: rep, reportErr: repErr,
		perFan: rf.perFan, measured: rf.measured}
	var perRefund []int
	for _, s := range rf.sent {
		if s.status == http.StatusOK && !s.already && s.returned > 0 && s.reported {
			j.okSent++
		}
		j.returned += s.returned
		if s.returned > 0 {
			perRefund = append(perRefund, s.returned)
		}
	}
	rf.mu.Unlock()

	var perFan []int
	r.mu.Lock()
	for _, o := range r.orders {
		if o.fromWaitlist {
			perFan = append(perFan, len(o.seats)+len(o.zones))
			j.resold += len(o.seats) + len(o.zones)
		}
	}
	r.mu.Unlock()
	j.bought = len(perFan)
	for i := range r.fans {
		if r.fans[i].fromWaitlist {
			j.letIn++
		}
	}
	slices.Sort(perRefund)
	slices.Sort(perFan)
	j.oneFanEach = j.letIn == len(perRefund) && slices.Equal(perRefund, perFan)
	j.inversions, j.checkedWaitlist, j.examples = waitlistInversions(r.fans)
	if rep != nil {
		// The room also counts fans who had walked away from the waitlist
		// when it let them in (they never come for their pass): at least
		// every fan the rehearsal saw let in.
		j.reportAgrees = rep.EachReturnReachesOneFan && rep.InOrder && rep.Admitted >= uint64(j.letIn)
	}
	j.allResold = j.returned > 0 && j.resold == j.returned
	j.ok = j.planned > 0 && j.okSent == j.planned && j.allResold && j.oneFanEach && j.inversions == 0 && j.reportAgrees
	return j
}

// waitlistInversions checks that the waitlist let its fans in in the order
// of their places: a patient fan let in from the waitlist who had been told
// to wait on it by a poll sent after a fan with a later place (a larger
// order key) had been let in from it is an inversion. A fan let in at one step learns of it at their next
// poll, so passes arriving out of order within that are not counted, as in
// the line's FIFO check.
func waitlistInversions(fans []fan) (inversions, checked int, examples []string) {
	type letIn struct {
		key    uint64
		passAt time.Duration
	}
	var in []letIn
	for i := range fans {
		if f := &fans[i]; f.fromWaitlist && f.passAt >= 0 {
			in = append(in, letIn{f.key, f.passAt})
		}
	}
	// For each key, the earliest pass of a larger key: sorted by key
	// descending, a running minimum.
	slices.SortFunc(in, func(a, b letIn) int { return cmp.Compare(b.key, a.key) })
	for i := range fans {
		f := &fans[i]
		// A fan still on the waitlist at the end was given no pass, so
		// the simulator does not know their place: the room's own check
		// (in_order) covers them.
		if f.behaviour != patient || f.lastWaitlist < 0 || f.passAt < 0 {
			continue
		}
		checked++
		for _, b := range in {
			if b.key <= f.key {
				break
			}
			if b.passAt < f.lastWaitlist {
				inversions++
				if len(examples) < 3 {
					examples = append(examples, fmt.Sprintf("a fan told to wait on the waitlist at %.1f s, after a later place's pass at %.1f s",
						f.lastWaitlist.Seconds(), b.passAt.Seconds()))
				}
				break
			}
		}
	}
	return inversions, checked, examples
}

// fairnessWaitlist reads the fairness report's waitlist account.
func (r *rehearsal) fairnessWaitlist() (*waitingroom.WaitlistReport, error) {
	return fairnessPart(r, "waitlist", func(rep waitingroom.FairnessReport) *waitingroom.WaitlistReport { return rep.Waitlist })
}

// print writes the scenario's part of the verdict.
func (j refundJudgement) print(w io.Writer) {
	fmt.Fprintln(w, "\nrefunds after the sell-out (docs/rehearsal.md)")
	for _, row := range j.rows() {
		fmt.Fprintf(w, "  %-36s %s\n", row.Name, row.Value)
	}
	for _, e := range j.examples {
		fmt.Fprintf(w, "    e.g. %s\n", e)
	}
}

// rows is the scenario's table, in the text verdict and the report alike.
func (j refundJudgement) rows() []reportRow {
	rows := []reportRow{
		{"refunds sent / planned", fmt.Sprintf("%d / %d of %d paid orders; %d answered 200, reported to the room", j.sent, j.planned, j.paid, j.okSent)},
		{"places returned / sold again", fmt.Sprintf("%s: %d / %d (to fans let in from the waitlist)", met(j.allResold), j.returned, j.resold)},
		{"one fan's worth per refund", fmt.Sprintf("%s: %d fans let in from the waitlist, %d of them bought, for %d refunds", met(j.oneFanEach), j.letIn, j.bought, j.planned)},
		{"waitlist let in in order", fmt.Sprintf("%s: %d inversions among %d patient fans on the waitlist", met(j.inversions == 0), j.inversions, j.checkedWaitlist)},
	}
	if j.measured {
		mid := (j.perFan[0] + j.perFan[1]) / 2
		rows = append(rows, reportRow{"room's units a fan at the first refund", fmt.Sprintf("%.2f to %.2f: a fan let in for every %d units back (the middle, %.3f, rounded up)",
			j.perFan[0], j.perFan[1], max(1, int(math.Ceil(mid-1e-9))), mid)})
	}
	if j.note != "" {
		rows = append(rows, reportRow{"refunder stopped", j.note})
	}
	if j.report == nil {
		return append(rows, reportRow{"fairness report", fmt.Sprintf("UNAVAILABLE: %v", j.reportErr)})
	}
	var back uint64
	for _, ret := range j.report.Returns {
		back += ret.Back
	}
	return append(rows,
		reportRow{"fairness report: returns, steps, let in", fmt.Sprintf("%d returns (%d units back), %d steps, %d fans let in", len(j.report.Returns), back, len(j.report.Steps), j.report.Admitted)},
		reportRow{"fairness report agrees", fmt.Sprintf("%s: each_return_reaches_one_fan %v, in_order %v, %d let in (fans who walked away included) against the fans' %d",
			met(j.reportAgrees), j.report.EachReturnReachesOneFan, j.report.InOrder, j.report.Admitted, j.letIn)})
}

// err is the scenario's failure, nil when every promise held.
func (j refundJudgement) err() error {
	if j.ok {
		return nil
	}
	return fmt.Errorf("%w: %d of %d refunds applied, %d places returned and %d sold again, %d fans let in for %d refunds, %d out of order, fairness report %s",
		errRefunds, j.okSent, j.planned, j.returned, j.resold, j.letIn, j.planned, j.inversions, map[bool]string{true: "agrees", false: "does not agree"}[j.reportAgrees])
}

// reportRefunds is the report's section on the scenario.
type reportRefunds struct {
	Rows []reportRow
}
