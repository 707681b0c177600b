package rehearsal

import (
	"context"
	"encoding/json"
	"math/rand/v2"
	"net/http"
	"strconv"
	"strings"
	"time"
)

// behaviour is how a fan treats the line. Most are patient; a few leave, so
// that the room's grace window is exercised, and a few step away for longer
// than the grace and come back, so that returning fans are too.
type behaviour uint8

const (
	patient      behaviour = iota
	leaveAtJoin            // joins, then never comes back
	leaveInLine            // polls a few times, then leaves: never claims
	lateReturner           // steps away for twice the grace once, then returns
)

// fanStep is the request a fan makes next.
type fanStep uint8

const (
	stepJoin fanStep = iota
	stepPoll
	stepSeats
	stepHold
	stepCheckout
	stepPay
	stepOrder
)

// outcome is how a fan's visit ended.
type outcome uint8

const (
	outNone        outcome = iota
	outBought              // paid, tickets delivered
	outSoldOutLine         // the room said sold_out while the fan waited (or on arrival)
	outSoldOutShop         // admitted, but every place was sold
	outGaveUp              // admitted, could not get a hold in its tries
	outAbandoned           // left the line on purpose
	outClosed              // the room was closed
	outLostPass            // the booking service stopped accepting the fan's pass
	outError               // something unexpected; see the samples
	outCut                 // stopped by -max-time
	nOutcomes
)

var outcomeNames = [nOutcomes]string{"unfinished", "bought", "sold out while waiting", "sold out when shopping", "gave up shopping", "abandoned", "room closed", "lost pass", "errors", "cut by -max-time"}

// fan is one simulated fan: a small state machine, stepped one request at a
// time by whichever worker picks it up. A fan is never stepped by two
// workers at once: it is either in the scheduler or with one worker.
type fan struct {
	behaviour behaviour
	step      fanStep
	outcome   outcome
	admitted  bool
	returned  bool   // a late returner that has had its pause
	polls     uint16 // status polls made
	leaveAt   uint16 // the poll after which a leaver leaves or a returner pauses
	retries   uint8  // transport errors and 503s at the current step

	ticket, pass string // cookie values, as a browser would keep them

	// What the fan saw of the line, as offsets from the start; -1 is never.
	joinStart, joinEnd, lastWait, passAt time.Duration
	key                                  uint64 // the pass's order_key
	lastPos                              int64  // last position shown, -1 before any
	posRises                             uint16 // times the position went up

	shop *shopping // while admitted
}

// shopping is an admitted fan's basket, dropped once it is done.
type shopping struct {
	want       int    // places the fan would like, 1 to 4
	areas      []area // sections and zones, from the last seat map
	tries      int    // holds refused
	maps       int    // seat maps fetched
	holdID     string // the hold, once taken
	orderID    string // the order, once checked out
	payURL     string // the provider's pay page
	orderPolls int    // order fetches
	seats      []string
}

// area is a section or a zone and what the seat map showed free in it.
type area struct {
	id    string
	zone  bool
	avail int
}

// Bounds on every loop a fan can be in, besides -max-time.
const (
	maxPolls      = 2000
	maxRetries    = 5
	maxHoldTries  = 8
	maxSeatMaps   = 6
	maxOrderPolls = 40
	orderEvery    = 1500 * time.Millisecond // the storefront's own cadence
)

func newFan(b behaviour, leaveAt uint16) fan {
	return fan{behaviour: b, leaveAt: leaveAt, joinStart: -1, joinEnd: -1, lastWait: -1, passAt: -1, lastPos: -1}
}

// statusJSON is the part of the room's status a fan acts on.
type statusJSON struct {
	State          string  `json:"state"`
	Position       *uint64 `json:"position"`
	RefreshSeconds int     `json:"refresh_seconds"`
}

// step makes the fan's next request and says when the one after is due, or
// that the fan is done.
func (r *rehearsal) step(ctx context.Context, w *worker, id int32, f *fan) (next time.Duration, done bool) {
	switch f.step {
	case stepJoin:
		return r.join(ctx, w, id, f)
	case stepPoll:
		return r.poll(ctx, w, id, f)
	case stepSeats:
		return r.seats(ctx, w, id, f)
	case stepHold:
		return r.hold(ctx, w, id, f)
	case stepCheckout:
		return r.checkout(ctx, w, id, f)
	case stepPay:
		return r.pay(ctx, w, id, f)
	case stepOrder:
		return r.order(ctx, w, id, f)
	}
	return 0, r.end(f, outError, "unknown step")
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
	if f.behaviour == lateReturner && !f.returned && f.polls >= f.leaveAt {
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
	case "queued", "paused", "prequeue":
		f.lastWait = res.start
		if st.Position != nil {
			pos := int64(min(*st.Position, 1<<62))
			if f.lastPos >= 0 && pos > f.lastPos {
				f.posRises++
			}
			f.lastPos = pos
		}
		wait := time.Duration(max(1, st.RefreshSeconds)) * time.Second
		wait += time.Duration(w.rng.Float64() * r.cfg.Jitter * float64(wait))
		return res.end + wait, false
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

// admit records the pass and sends the fan shopping.
func (r *rehearsal) admit(w *worker, id int32, f *fan, at time.Duration) (time.Duration, bool) {
	f.admitted, f.passAt = true, at
	c, err := decodePass(f.pass)
	if err != nil {
		r.note("pass: " + err.Error())
	} else {
		f.key = c.OrderKey
		r.notePass(id, c)
	}
	r.live.admitted.Add(1)
	r.live.shopping.Add(1)
	f.shop = &shopping{want: 1 + w.rng.IntN(4)}
	f.step = stepSeats
	return at + r.think(w), false
}

// seatMapJSON is the part of the seat map a fan chooses from.
type seatMapJSON struct {
	Capacity  int `json:"capacity"`
	Available int `json:"available"`
	Sold      int `json:"sold"`
	Sections  []struct {
		ID        string `json:"id"`
		Available int    `json:"available"`
	} `json:"sections"`
	Zones []struct {
		ID        string `json:"id"`
		Available int    `json:"available"`
	} `json:"zones"`
}

func (r *rehearsal) seats(ctx context.Context, w *worker, id int32, f *fan) (time.Duration, bool) {
	s := f.shop
	s.maps++
	res, ok := r.do(ctx, w, f, kindSeats, http.MethodGet, r.st.base+r.seatsPath, nil)
	if next, done, handled := r.shopFailure(f, res, ok, "seats"); handled {
		return next, done
	}
	var m seatMapJSON
	if res.status != http.StatusOK || json.Unmarshal(res.body, &m) != nil {
		return 0, r.endShop(f, outError, "seats answered "+strconv.Itoa(res.status))
	}
	if m.Available == 0 {
		if m.Capacity > 0 && m.Sold >= m.Capacity {
			return 0, r.endShop(f, outSoldOutShop, "")
		}
		// The last places are held by others, who may let them go: look
		// again in a while, a few times.
		if s.maps >= maxSeatMaps {
			return 0, r.endShop(f, outGaveUp, "")
		}
		return res.end + 2*time.Second, false
	}
	s.areas = s.areas[:0]
	for _, sec := range m.Sections {
		if sec.Available > 0 {
			s.areas = append(s.areas, area{id: sec.ID, avail: sec.Available})
		}
	}
	for _, z := range m.Zones {
		if z.Available > 0 {
			s.areas = append(s.areas, area{id: z.ID, zone: true, avail: z.Available})
		}
	}
	f.step = stepHold
	return res.end + r.think(w), false
}

// hold asks for best available in a random section that the map showed
// free, as many as the fan wants or as are left there; refused, it tries
// another section, and looks at the map again when none is left.
func (r *rehearsal) hold(ctx context.Context, w *worker, id int32, f *fan) (time.Duration, bool) {
	s := f.shop
	var open []int
	for i, a := range s.areas {
		if a.avail > 0 {
			open = append(open, i)
		}
	}
	if len(open) == 0 {
		if s.maps >= maxSeatMaps {
			return 0, r.endShop(f, outGaveUp, "")
		}
		f.step = stepSeats
		return r.now(), false
	}
	a := &s.areas[open[w.rng.IntN(len(open))]]
	qty := min(s.want, a.avail)
	body := `{"section":` + strconv.Quote(a.id) + `,"quantity":` + strconv.Itoa(qty) + `}`
	if a.zone {
		body = `{"zone":` + strconv.Quote(a.id) + `,"quantity":` + strconv.Itoa(qty) + `}`
	}
	res, ok := r.do(ctx, w, f, kindHold, http.MethodPost, r.st.base+r.holdsPath, strings.NewReader(body))
	if next, done, handled := r.shopFailure(f, res, ok, "hold"); handled {
		return next, done
	}
	switch res.status {
	case http.StatusCreated:
		var h struct {
			ID    string   `json:"id"`
			Seats []string `json:"seats"`
		}
		if json.Unmarshal(res.body, &h) != nil || h.ID == "" {
			return 0, r.endShop(f, outError, "hold: no hold id")
		}
		s.holdID, s.seats = h.ID, h.Seats
		f.step = stepCheckout
		return res.end + r.think(w), false
	case http.StatusConflict:
		a.avail = 0
		s.tries++
		if s.tries >= maxHoldTries {
			return 0, r.endShop(f, outGaveUp, "")
		}
		return res.end + 200*time.Millisecond, false
	}
	return 0, r.endShop(f, outError, "hold answered "+strconv.Itoa(res.status)+": "+errCode(res.body))
}

func (r *rehearsal) checkout(ctx context.Context, w *worker, id int32, f *fan) (time.Duration, bool) {
	s := f.shop
	res, ok := r.do(ctx, w, f, kindCheckout, http.MethodPost, r.st.base+"/api/holds/"+s.holdID+"/checkout", strings.NewReader("{}"))
	if next, done, handled := r.shopFailure(f, res, ok, "checkout"); handled {
		return next, done
	}
	switch res.status {
	case http.StatusOK:
		var out struct {
			Order struct {
				ID string `json:"id"`
			} `json:"order"`
			Payment struct {
				PayURL string `json:"pay_url"`
			} `json:"payment"`
		}
		if json.Unmarshal(res.body, &out) != nil || out.Order.ID == "" || out.Payment.PayURL == "" {
			return 0, r.endShop(f, outError, "checkout: no order or pay_url")
		}
		s.orderID, s.payURL = out.Order.ID, out.Payment.PayURL
		f.step = stepPay
		return res.end + r.think(w), false
	case http.StatusGone:
		// The hold expired before checkout: start again from the map.
		s.holdID = ""
		f.step = stepSeats
		return res.end, false
	}
	return 0, r.endShop(f, outError, "checkout answered "+strconv.Itoa(res.status)+": "+errCode(res.body))
}

// pay presses Pay on the fake provider's page, which answers 303 back to
// the order.
func (r *rehearsal) pay(ctx context.Context, w *worker, id int32, f *fan) (time.Duration, bool) {
	s := f.shop
	res, ok := r.do(ctx, w, f, kindPay, http.MethodPost, s.payURL, strings.NewReader("action=pay"))
	if next, done, handled := r.shopFailure(f, res, ok, "pay"); handled {
		return next, done
	}
	if res.status != http.StatusSeeOther {
		return 0, r.endShop(f, outError, "pay answered "+strconv.Itoa(res.status))
	}
	f.step = stepOrder
	return res.end + time.Second, false
}

// orderJSON is the part of an order the fan checks.
type orderJSON struct {
	ID      string     `json:"id"`
	Status  string     `json:"status"`
	PaidAt  *time.Time `json:"paid_at"`
	Tickets []struct {
		ID       string    `json:"id"`
		Seat     string    `json:"seat"`
		Zone     string    `json:"zone"`
		Delivery *struct{} `json:"delivery"`
	} `json:"tickets"`
}

// order waits for the tickets. The answer that shows them all delivered is
// also the one on which the booking service tells the gateway to revoke the
// fan's session; the fan sees its pass cookie cleared.
func (r *rehearsal) order(ctx context.Context, w *worker, id int32, f *fan) (time.Duration, bool) {
	s := f.shop
	s.orderPolls++
	res, ok := r.do(ctx, w, f, kindOrder, http.MethodGet, r.st.base+"/api/orders/"+s.orderID, nil)
	if next, done, handled := r.shopFailure(f, res, ok, "order"); handled {
		return next, done
	}
	var o orderJSON
	if res.status != http.StatusOK || json.Unmarshal(res.body, &o) != nil {
		return 0, r.endShop(f, outError, "order answered "+strconv.Itoa(res.status))
	}
	switch o.Status {
	case "paid":
		delivered := len(o.Tickets) > 0
		for _, t := range o.Tickets {
			delivered = delivered && t.Delivery != nil
		}
		if delivered {
			r.recordOrder(o, res.passCleared)
			return 0, r.endShop(f, outBought, "")
		}
	case "pending_payment":
	default:
		return 0, r.endShop(f, outError, "order is "+o.Status)
	}
	if s.orderPolls >= maxOrderPolls {
		return 0, r.endShop(f, outError, "order: tickets not delivered after "+strconv.Itoa(maxOrderPolls)+" looks")
	}
	return res.end + orderEvery, false
}

// shopFailure handles what every shopping request may meet: the transport
// failing, the service unavailable, the pass refused.
func (r *rehearsal) shopFailure(f *fan, res result, ok bool, what string) (next time.Duration, done, handled bool) {
	if !ok || res.status == http.StatusServiceUnavailable {
		next, done = r.retry(f, res, what)
		if done {
			r.live.shopping.Add(-1)
			f.shop = nil
		}
		return next, done, true
	}
	f.retries = 0
	if res.status == http.StatusUnauthorized {
		return 0, r.endShop(f, outLostPass, ""), true
	}
	return 0, false, false
}

// retry tries a failed request again after a second (or the Retry-After
// the server gave), a few times.
func (r *rehearsal) retry(f *fan, res result, what string) (time.Duration, bool) {
	if res.cut {
		return 0, r.end(f, outCut, "")
	}
	f.retries++
	if f.retries > maxRetries {
		msg := what + ": " + strconv.Itoa(res.status)
		if res.err != nil {
			msg = what + ": " + res.err.Error()
		}
		return 0, r.end(f, outError, msg)
	}
	wait := time.Second
	if s, err := strconv.Atoi(res.retryAfter); err == nil && s > 0 {
		wait = time.Duration(min(s, 30)) * time.Second
	}
	return r.now() + wait, false
}

func (r *rehearsal) endShop(f *fan, o outcome, msg string) bool {
	r.live.shopping.Add(-1)
	f.shop = nil
	return r.end(f, o, msg)
}

// end closes a fan's visit.
func (r *rehearsal) end(f *fan, o outcome, msg string) bool {
	f.outcome = o
	if msg != "" {
		r.note(msg)
	}
	return true
}

// think is the time a fan takes between two shopping steps.
func (r *rehearsal) think(w *worker) time.Duration {
	return time.Duration((0.5 + w.rng.Float64()) * float64(r.cfg.Think))
}

// errCode reads the "error" member of a JSON error body.
func errCode(body []byte) string {
	var e struct {
		Error string `json:"error"`
	}
	_ = json.Unmarshal(body, &e)
	return e.Error
}

// behaviours deals out the crowd's behaviours: abandon is the share who
// leave (half at once, half after a few polls), late the share who step away
// and return. The rest wait patiently.
func behaviours(n int, abandon, late float64, rng *rand.Rand) []fan {
	fans := make([]fan, n)
	for i := range fans {
		u := rng.Float64()
		switch {
		case u < abandon/2:
			fans[i] = newFan(leaveAtJoin, 0)
		case u < abandon:
			fans[i] = newFan(leaveInLine, uint16(1+rng.IntN(5)))
		case u < abandon+late:
			fans[i] = newFan(lateReturner, uint16(1+rng.IntN(3)))
		default:
			fans[i] = newFan(patient, 0)
		}
	}
	return fans
}
