package booking

import (
	"net/http"

	"github.com/foyer-dev/foyer/booking/payments"
)

// getOrder answers the order with its tickets. Once the order is paid and
// every ticket delivered the fan is done: the response asks the gateway to
// revoke the session, which frees the fan's slot for the next person in the
// queue. The answer carries the order's signed link, which shows the order and
// its tickets from then on without a pass (getOrderByLink).
func (a *API) getOrder(w http.ResponseWriter, r *http.Request, customer string) error {
	o, err := a.svc.Order(r.Context(), customer, r.PathValue("id"))
	if err != nil {
		return err
	}
	if orderComplete(o) {
		w.Header().Set(CommandHeader, CommandRevoke)
	}
	a.reportSupply(r.Context(), w, o.EventID)
	return a.writeOrder(w, o)
}

// getOrderByLink answers the order a signed link names, with no pass: the
// buyer's way back to their tickets after the session ended. It never sends a
// gateway command; the gateway leaves this path outside the room.
func (a *API) getOrderByLink(w http.ResponseWriter, r *http.Request) error {
	o, err := a.svc.OrderByLink(r.Context(), r.PathValue("link"))
	if err != nil {
		return err
	}
	return a.writeOrder(w, o)
}

// orderView is an order as the API shows it: with its signed link.
type orderView struct {
	Order
	Link string `json:"link"`
}

func (a *API) writeOrder(w http.ResponseWriter, o Order) error {
	if o.Tickets == nil {
		o.Tickets = []Ticket{}
	}
	w.Header().Set("Cache-Control", "no-store")
	w.Header().Set("X-Robots-Tag", "noindex")
	return reply(w, http.StatusOK, orderView{Order: o, Link: OrderLinkPath + a.svc.OrderLink(o.ID)})
}

func orderComplete(o Order) bool {
	if o.Status != OrderPaid || len(o.Tickets) == 0 {
		return false
	}
	for _, t := range o.Tickets {
		if t.Delivery == nil {
			return false
		}
	}
	return true
}

func (a *API) postWebhook(w http.ResponseWriter, r *http.Request) error {
	body, err := readBody(w, r, maxWebhook)
	if err != nil {
		return err
	}
	// The signature first: an unsigned request must not leave an
	// idempotency record (or anything else) behind.
	if err := a.svc.VerifyWebhook(r.Header.Get(payments.SignatureHeader), body); err != nil {
		return err
	}
	// Events are deduplicated by their provider id; an Idempotency-Key, if
	// the sender adds one, is honoured like on every other POST.
	return a.idempotent(w, r, "webhook", body, func(w http.ResponseWriter) error {
		res, err := a.svc.HandleWebhook(r.Context(), r.Header.Get(payments.SignatureHeader), body)
		if err != nil {
			return err
		}
		if res.Refund == nil {
			return reply(w, http.StatusOK, map[string]bool{"received": true})
		}
		// A refund changes what is left to sell: the answer says so, as
		// every answer that changes the inventory does.
		o := res.Refund.Order
		a.reportSupply(r.Context(), w, o.EventID)
		return reply(w, http.StatusOK, refundAnswer{
			Received: true, OrderID: o.ID, Status: o.Status, Reason: o.RefundReason,
			Returned: res.Refund.Returned, AlreadyRefunded: res.Refund.AlreadyRefunded,
		})
	})
}

// refundAnswer is the answer to a charge.refunded webhook.
type refundAnswer struct {
	Received bool         `json:"received"`
	OrderID  string       `json:"order_id"`
	Status   OrderStatus  `json:"status"`
	Reason   RefundReason `json:"refund_reason"`
	// Returned is the number of places this event put back on sale.
	Returned        int  `json:"returned"`
	AlreadyRefunded bool `json:"already_refunded"`
}
