package rehearsal

import (
	"context"
	"encoding/json"
	"net/http"
	"strconv"
	"time"
)

// stepActions are what a fan does at each step, in the order of fanStep.
var stepActions = [...]func(r *rehearsal, ctx context.Context, w *worker, id int32, f *fan) (time.Duration, bool){
	stepJoin:     (*rehearsal).join,
	stepPoll:     (*rehearsal).poll,
	stepSeats:    (*rehearsal).seats,
	stepHold:     (*rehearsal).hold,
	stepCheckout: (*rehearsal).checkout,
	stepPay:      (*rehearsal).pay,
	stepOrder:    (*rehearsal).order,
}

// step makes the fan's next request and says when the one after is due, or
// that the fan is done.
func (r *rehearsal) step(ctx context.Context, w *worker, id int32, f *fan) (next time.Duration, done bool) {
	if int(f.step) >= len(stepActions) {
		return 0, r.end(f, outError, "unknown step")
	}
	return stepActions[f.step](r, ctx, w, id, f)
}

// join is the fan's first look at the event page, as an app would ask for
// it: with Accept: application/json, so that a queued fan gets its status.
func (r *rehearsal) join(ctx context.Context, w *worker, id int32, f *fan) (time.Duration, bool) {
	res, ok := r.do(ctx, w, f, kindJoin, http.MethodGet, r.st.base+r.eventPath, nil)
	if !ok {
		return r.retry(f, res, "join")
	}
	f.retries = 0
	if res.status == http.StatusServiceUnavailable {
		return r.retry(f, res, "join")
	}
	if res.passSet {
		f.joinStart, f.joinEnd = res.start, res.end
		r.live.arrived.Add(1)
		return r.admit(w, id, f, res.end)
	}
	if res.status != http.StatusOK {
		return 0, r.end(f, outError, "join answered "+strconv.Itoa(res.status))
	}
	var st statusJSON
	if err := json.Unmarshal(res.body, &st); err != nil {
		return 0, r.end(f, outError, "join: not a status: "+err.Error())
	}
	r.live.arrived.Add(1)
	if f.ticket != "" {
		f.joinStart, f.joinEnd = res.start, res.end
	}
	next, done := r.waitOrStop(w, f, st, res)
	if done {
		return next, true
	}
	if f.ticket == "" {
		return 0, r.end(f, outError, "join: told to wait but given no ticket")
	}
	r.live.waiting.Add(1)
	if f.behaviour == leaveAtJoin {
		r.live.waiting.Add(-1)
		return 0, r.end(f, outAbandoned, "")
	}
	f.step = stepPoll
	return next, false
}

// poll asks the room where the fan stands, every refresh_seconds the room
// gives, plus jitter: never sooner than asked.
func (r *rehearsal) poll(ctx context.Context, w *worker, id int32, f *fan) (time.Duration, bool) {
	if f.behaviour == leaveInLine && f.polls >= f.leaveAt {
		r.live.waiting.Add(-1)
		return 0, r.end(f, outAbandoned, "")
	}
	if f.polls >= maxPolls {
		r.live.waiting.Add(-1)
		return 0, r.end(f, outError, "poll: too many polls")
	}
	f.polls++
	res, ok := r.do(ctx, w, f, kindPoll, http.MethodGet, r.st.base+"/_waiting-room/status", nil)
	if !ok || res.status == http.StatusServiceUnavailable {
		next, done := r.retry(f, res, "poll")
		if done {
			r.live.waiting.Add(-1)
		}
		return next, done
	}
	f.retries = 0
	if res.passSet {
		r.live.waiting.Add(-1)
		return r.admit(w, id, f, res.end)
	}
	var st statusJSON
	if res.status != http.StatusOK || json.Unmarshal(res.body, &st) != nil {
		r.live.waiting.Add(-1)
		return 0, r.end(f, outError, "poll answered "+strconv.Itoa(res.status))
	}
	next, done := r.waitOrStop(w, f, st, res)
	if done {
		r.live.waiting.Add(-1)
		return next, true
	}
	if f.behaviour == lateReturner && !f.returned && !f.requeued && f.polls >= f.leaveAt {
		// Away for twice the grace: the room will have given the place to
		// the next if the fan's turn came meanwhile.
		f.returned = true
		next += 2 * r.cfg.Grace
	}
	return next, false
}

// waitOrStop acts on a status: wait and ask again, or stop.
func (r *rehearsal) waitOrStop(w *worker, f *fan, st statusJSON, res result) (time.Duration, bool) {
	switch st.State {
	case "waitlist":
		// Sold out, the line kept as a waitlist: the fan keeps their place
		// and waits for a place to come back, until none is left to.
		if r.waitlistOver() {
			return 0, r.end(f, outWaitlisted, "")
		}
		f.lastWaitlist = res.start
		return r.waitAgain(w, f, st, res), false
	case "queued", "paused", "prequeue":
		return r.waitAgain(w, f, st, res), false
	case "sold_out":
		r.live.soldOutSeen.CompareAndSwap(0, int64(res.end))
		return 0, r.end(f, outSoldOutLine, "")
	case "closed":
		return 0, r.end(f, outClosed, "")
	case "admitted":
		// Admitted with no pass cookie: the room contradicts itself. Ask
		// again shortly; the poll bound ends it if it persists.
		r.note("poll: state admitted without a pass cookie")
		return res.end + time.Second, false
	}
	return 0, r.end(f, outError, "status: unknown state "+strconv.Quote(st.State))
}

// waitAgain records a status that says wait (in line, paused, before the
// sale or on the waitlist) and says when to ask again: the position, which
// must never rise, and the outcome told.
func (r *rehearsal) waitAgain(w *worker, f *fan, st statusJSON, res result) time.Duration {
	if st.State != "waitlist" {
		if f.requeued {
			f.requeueWait = res.start
		} else {
			f.lastWait = res.start
		}
	}
	r.noteOutcome(f, st.Outcome, res.start)
	if st.Position != nil {
		pos := int64(min(*st.Position, 1<<62))
		if f.lastPos >= 0 && pos > f.lastPos {
			f.posRises++
		}
		f.lastPos = pos
	}
	wait := time.Duration(max(1, st.RefreshSeconds)) * time.Second
	wait += time.Duration(w.rng.Float64() * r.cfg.Jitter * float64(wait))
	return res.end + wait
}

// admit records the pass and sends the fan shopping; a fan let in again
// after a requeue goes back to the checkout of the hold it kept.
func (r *rehearsal) admit(w *worker, id int32, f *fan, at time.Duration) (time.Duration, bool) {
	if f.requeued && f.shop != nil {
		f.readmitAt = at
		r.live.shopping.Add(1)
		f.step = stepCheckout
		return at + r.think(w), false
	}
	f.admitted, f.passAt = true, at
	f.noteLetIn(at)
	c, err := decodePass(f.pass)
	if err != nil {
		r.note("pass: " + err.Error())
	} else {
		f.key, f.fromWaitlist = c.OrderKey, c.Waitlist
		r.notePass(id, c)
	}
	r.live.admitted.Add(1)
	r.live.shopping.Add(1)
	f.shop = &shopping{want: 1 + w.rng.IntN(4)}
	if r.cfg.Refunds {
		// One place each: one refunded order is one fan's worth, which
		// is what the room lets in for it (refundscenario.go).
		f.shop.want = 1
	}
	f.step = stepSeats
	return at + r.think(w), false
}
