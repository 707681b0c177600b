package storefront

import (
	"encoding/json"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/foyer-dev/foyer/booking"
	"github.com/foyer-dev/foyer/internal/i18n"
)

// eventCard is an event in the list.
type eventCard struct {
	booking.Event
	Available int  `json:"available"`
	SoldOut   bool `json:"sold_out"`
	When      string
	From      string
}

func (h *Handler) events(w http.ResponseWriter, r *http.Request) {
	l := h.langs.Choose(w, r)
	a := h.call(r, "GET", "/api/events", nil, "")
	if !a.ok() {
		h.fail(w, r, l, a.status, a.err().Error, "", explain(l, a), "")
		return
	}
	var v struct {
		Events []eventCard `json:"events"`
	}
	_ = json.Unmarshal(a.body, &v)
	for i := range v.Events {
		e := &v.Events[i]
		e.When = l.Time(e.StartsAt)
		var low booking.Money = -1
		for _, s := range e.Sections {
			if low < 0 || s.Price < low {
				low = s.Price
			}
		}
		for _, z := range e.Zones {
			if low < 0 || z.Price < low {
				low = z.Price
			}
		}
		if low >= 0 {
			e.From = l.Money(int64(low), e.Currency)
		}
	}
	title := l.T("events.title")
	if len(v.Events) == 0 {
		title = l.T("events.none")
	}
	h.render(w, r, l, http.StatusOK, "events", title, v.Events)
}

// eventPage is one event: what the forms offer.
type eventPage struct {
	Event   eventCard
	Map     booking.SeatMap
	Key     string // the idempotency key of this page's forms
	SoldOut bool
}

func (h *Handler) event(w http.ResponseWriter, r *http.Request) {
	l := h.langs.Choose(w, r)
	id := r.PathValue("id")
	ea := h.call(r, "GET", "/api/events/"+url.PathEscape(id), nil, "")
	if !ea.ok() {
		h.fail(w, r, l, ea.status, ea.err().Error, "", explain(l, ea), "/")
		return
	}
	ma := h.call(r, "GET", "/api/events/"+url.PathEscape(id)+"/seats", nil, "")
	if !ma.ok() {
		h.fail(w, r, l, ma.status, ma.err().Error, "", explain(l, ma), "/")
		return
	}
	passCommand(w, ma)
	var p eventPage
	_ = json.Unmarshal(ea.body, &p.Event)
	_ = json.Unmarshal(ma.body, &p.Map)
	p.Event.When = l.Time(p.Event.StartsAt)
	p.Key = newKey()
	p.SoldOut = p.Map.SoldOut() || (p.Map.Available == 0 && p.Map.Held == 0)
	h.render(w, r, l, http.StatusOK, "event", p.Event.Name, p)
}

// postHold takes the no-script forms of the event page: a section with a
// quantity (best available) or a zone with a quantity (standing). It checks
// the fields, then asks the API for the hold with the form's idempotency
// key, and sends the fan on to the hold.
func (h *Handler) postHold(w http.ResponseWriter, r *http.Request) {
	l := h.langs.Choose(nil, r)
	eventID := r.PathValue("id")
	back := "/events/" + url.PathEscape(eventID)
	r.Body = http.MaxBytesReader(w, r.Body, 16<<10)
	if err := r.ParseForm(); err != nil {
		h.fail(w, r, l, http.StatusBadRequest, booking.CodeInvalidRequest, "", l.T("error.form"), back)
		return
	}
	f := r.PostForm
	bad := func(field, reason string) {
		h.fail(w, r, l, http.StatusBadRequest, booking.CodeInvalidRequest, field,
			l.T("error.field", "field", l.T("field."+field), "reason", reason), back)
	}
	key := f.Get("key")
	if key == "" || len(key) > booking.MaxIdempotencyKeyLength {
		bad("key", l.T("error.key"))
		return
	}
	section, zone := strings.TrimSpace(f.Get("section")), strings.TrimSpace(f.Get("zone"))
	switch {
	case section == "" && zone == "":
		bad("section", l.T("error.section"))
		return
	case section != "" && zone != "":
		bad("zone", l.T("error.one_place"))
		return
	}
	q, err := strconv.Atoi(strings.TrimSpace(f.Get("quantity")))
	if err != nil || q < 1 || q > h.max {
		bad("quantity", l.T("error.quantity", "max", l.Number(h.max)))
		return
	}
	body := map[string]any{"quantity": q}
	if section != "" {
		body["section"] = section
	} else {
		body["zone"] = zone
	}
	a := h.call(r, "POST", "/api/events/"+url.PathEscape(eventID)+"/holds", body, key)
	if !a.ok() {
		passCommand(w, a)
		e := a.err()
		field := fieldOf(e, section != "")
		msg := explain(l, a)
		if field != "" {
			msg = l.T("error.field", "field", l.T("field."+field), "reason", msg)
		}
		h.fail(w, r, l, a.status, e.Error, field, msg, back)
		return
	}
	var hold booking.Hold
	_ = json.Unmarshal(a.body, &hold)
	if wantsJSON(r) {
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(a.status)
		_, _ = w.Write(a.body)
		return
	}
	http.Redirect(w, r, "/holds/"+url.PathEscape(hold.ID), http.StatusSeeOther)
}

// holdPage is a hold with its checkout and release forms.
type holdPage struct {
	Hold     booking.Hold
	Event    booking.Event
	Active   bool
	Left     string
	Standing string
}

// holdCall sends method to the API's hold named in the path and returns the
// hold it answers with; on an error it shows the error page and reports false.
func (h *Handler) holdCall(w http.ResponseWriter, r *http.Request, l *i18n.Locale, method string) (booking.Hold, bool) {
	var hold booking.Hold
	a := h.call(r, method, "/api/holds/"+url.PathEscape(r.PathValue("id")), nil, "")
	if !a.ok() {
		h.fail(w, r, l, a.status, a.err().Error, "", explain(l, a), "/")
		return hold, false
	}
	_ = json.Unmarshal(a.body, &hold)
	return hold, true
}

func (h *Handler) hold(w http.ResponseWriter, r *http.Request) {
	l := h.langs.Choose(w, r)
	var p holdPage
	var ok bool
	if p.Hold, ok = h.holdCall(w, r, l, "GET"); !ok {
		return
	}
	if ea := h.call(r, "GET", "/api/events/"+strconv.FormatInt(p.Hold.EventID, 10), nil, ""); ea.ok() {
		_ = json.Unmarshal(ea.body, &p.Event)
	}
	left := time.Until(p.Hold.ExpiresAt)
	p.Active = p.Hold.Status == booking.HoldActive && left > 0
	p.Left = l.N("hold.minutes_left", int((left+time.Minute-1)/time.Minute))
	if p.Hold.Zone != "" {
		p.Standing = l.N("hold.standing", p.Hold.Quantity, "zone", p.Hold.Zone)
	}
	h.render(w, r, l, http.StatusOK, "hold", l.T("hold.title"), p)
}

func (h *Handler) postCheckout(w http.ResponseWriter, r *http.Request) {
	l := h.langs.Choose(nil, r)
	id := r.PathValue("id")
	// The script's key for the same checkout: a fan who uses both checks
	// out once.
	a := h.call(r, "POST", "/api/holds/"+url.PathEscape(id)+"/checkout", nil, "checkout-"+id)
	if !a.ok() {
		h.fail(w, r, l, a.status, a.err().Error, "", explain(l, a), "/holds/"+url.PathEscape(id))
		return
	}
	var v struct {
		Payment struct {
			PayURL string `json:"pay_url"`
		} `json:"payment"`
	}
	_ = json.Unmarshal(a.body, &v)
	if wantsJSON(r) {
		w.Header().Set("Content-Type", "application/json")
		_, _ = w.Write(a.body)
		return
	}
	http.Redirect(w, r, v.Payment.PayURL, http.StatusSeeOther)
}

func (h *Handler) postRelease(w http.ResponseWriter, r *http.Request) {
	l := h.langs.Choose(nil, r)
	hold, ok := h.holdCall(w, r, l, "DELETE")
	if !ok {
		return
	}
	http.Redirect(w, r, "/events/"+strconv.FormatInt(hold.EventID, 10)+"?notice=released", http.StatusSeeOther)
}

// orderPage is an order with its tickets.
type orderPage struct {
	Order   booking.Order
	Link    string
	Status  string
	Class   string
	Done    bool
	Tickets []ticketView
}

type ticketView struct {
	What, Issued, Code string
}

func (h *Handler) order(w http.ResponseWriter, r *http.Request) {
	h.showOrder(w, r, "/api/orders/"+url.PathEscape(r.PathValue("id")))
}

func (h *Handler) orderByLink(w http.ResponseWriter, r *http.Request) {
	// The link is the key to the order: no search engine keeps it, and it
	// is never sent on as a Referer.
	w.Header().Set("X-Robots-Tag", "noindex")
	w.Header().Set("Referrer-Policy", "no-referrer")
	h.showOrder(w, r, "/api"+booking.OrderLinkPath+r.PathValue("link"))
}

func (h *Handler) showOrder(w http.ResponseWriter, r *http.Request, source string) {
	l := h.langs.Choose(w, r)
	a := h.call(r, "GET", source, nil, "")
	if !a.ok() {
		h.fail(w, r, l, a.status, a.err().Error, "", explain(l, a), "")
		return
	}
	// The answer that shows the tickets delivered ends the visit.
	passCommand(w, a)
	var v struct {
		booking.Order
		Link string `json:"link"`
	}
	_ = json.Unmarshal(a.body, &v)
	p := orderPage{Order: v.Order, Link: v.Link}
	p.Status = l.T("order." + string(v.Status))
	if v.RefundReason == booking.RefundReturned {
		p.Status = l.T("order.returned") // not the places lost that order.refunded tells of
	}
	switch v.Status {
	case booking.OrderPaid:
		p.Class = "paid"
	case booking.OrderPendingPayment:
	default:
		p.Class = "refund"
	}
	p.Done = v.Status != booking.OrderPendingPayment && v.Status != booking.OrderRefundPending
	for _, t := range v.Tickets {
		if !t.Live() {
			continue // cancelled by a refund: it admits nobody
		}
		tv := ticketView{}
		if t.Seat != "" {
			tv.What = funcs["seat"].(func(*i18n.Locale, string) string)(l, t.Seat)
		} else {
			tv.What = l.T("order.standing", "zone", t.Zone)
		}
		if t.Delivery != nil {
			tv.Issued = l.T("order.issued", "time", l.Time(t.Delivery.DeliveredAt))
			tv.Code = t.Delivery.Code
		} else {
			p.Done = false
		}
		p.Tickets = append(p.Tickets, tv)
	}
	h.render(w, r, l, http.StatusOK, "order", l.T("order.title"), p)
}
