package rehearsal

import (
	"context"
	"encoding/json"
	"net/http"
	"strconv"
	"strings"
	"time"
)

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
		// A fan let in from the waitlist was let in for a place that came
		// back: one sold-out map (a hold's race with theirs) is not the
		// end of it, and they look again like the others below.
		if m.Capacity > 0 && m.Sold >= m.Capacity && !f.fromWaitlist {
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
	if ok && res.status == http.StatusServiceUnavailable {
		return r.siteFailedCheckout(f, res)
	}
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
	ID       string     `json:"id"`
	Status   string     `json:"status"`
	PaidAt   *time.Time `json:"paid_at"`
	Amount   string     `json:"amount"`
	Currency string     `json:"currency"`
	Payment  struct {
		ProviderPaymentID string `json:"provider_payment_id"`
	} `json:"payment"`
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
			r.recordOrder(o, res.passCleared, f.fromWaitlist)
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
