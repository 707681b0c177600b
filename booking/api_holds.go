package booking

import (
	"errors"
	"net/http"
	"strconv"
)

// holdBody is the JSON of POST /api/events/{id}/holds: exactly one of
// {"seats": [...]}, {"section": "A", "quantity": 2} or
// {"zone": "FLOOR", "quantity": 2}.
type holdBody struct {
	Seats    []string `json:"seats"`
	Section  string   `json:"section"`
	Zone     string   `json:"zone"`
	Quantity int      `json:"quantity"`
}

func (a *API) postHold(w http.ResponseWriter, r *http.Request, customer string) error {
	id, err := eventID(r)
	if err != nil {
		return err
	}
	body, err := readBody(w, r, maxBody)
	if err != nil {
		return err
	}
	return a.idempotent(w, r, customer, body, func(w http.ResponseWriter) error {
		var in holdBody
		if err := decodeStrict(body, &in); err != nil {
			return err
		}
		if a.waitlist != nil && a.svc.SoldOutOnce(id) && !a.waitlist.FromWaitlist(r) {
			// Every free place now came back after the sell-out: it is
			// the waitlist's (docs/waitlist.md).
			a.reportSupply(r.Context(), w, id)
			return Errorf(KindConflict, CodeWaitlistOnly,
				"the places left came back after the event sold out and are held for fans let in from the waitlist")
		}
		h, err := a.svc.Hold(r.Context(), customer, id, HoldInput(in))
		if KindOf(err) == KindConflict {
			a.markSoldOut(r.Context(), w, id)
		}
		if err == nil || KindOf(err) == KindConflict {
			a.reportSupply(r.Context(), w, id)
		}
		if err != nil {
			return err
		}
		w.Header().Set("Location", "/api/holds/"+h.ID)
		return reply(w, http.StatusCreated, h)
	})
}

func (a *API) getHold(w http.ResponseWriter, r *http.Request, customer string) error {
	h, err := a.svc.GetHold(r.Context(), customer, r.PathValue("id"))
	if err != nil {
		return err
	}
	return reply(w, http.StatusOK, h)
}

func (a *API) deleteHold(w http.ResponseWriter, r *http.Request, customer string) error {
	h, err := a.svc.Release(r.Context(), customer, r.PathValue("id"))
	if err != nil {
		return err
	}
	a.reportSupply(r.Context(), w, h.EventID)
	return reply(w, http.StatusOK, h)
}

func (a *API) postCheckout(w http.ResponseWriter, r *http.Request, customer string) error {
	body, err := readBody(w, r, maxBody)
	if err != nil {
		return err
	}
	return a.idempotent(w, r, customer, body, func(w http.ResponseWriter) error {
		o, err := a.svc.Checkout(r.Context(), customer, r.PathValue("id"))
		if err != nil {
			if failedOnOurSide(err) && !a.noRetry {
				// The fan held seats and asked to pay; the payment provider
				// or the database failed them. Their turn is not their
				// fault to lose: the gateway lets them back in first.
				w.Header().Set(CommandHeader, CommandRetry)
			}
			return err
		}
		a.reportSupply(r.Context(), w, o.EventID)
		return reply(w, http.StatusOK, map[string]any{"order": o, "payment": o.Payment})
	})
}

// failedOnOurSide reports whether err is the service's failure rather than
// the customer's: a dependency away (the payment provider, the database) or
// an unclassified error. A customer's own error (an expired hold, another
// customer's hold, a bad request) is never one.
func failedOnOurSide(err error) bool {
	var e *Error
	return !errors.As(err, &e) || e.Kind == KindUnavailable
}

func itoa(n int64) string { return strconv.FormatInt(n, 10) }
