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

func (a *API) postHold(w http.ResponseWriter, r *http.Request, customer string) {
	id, err := eventID(r)
	if err != nil {
		writeError(w, a.log, err)
		return
	}
	body, err := readBody(w, r, maxBody)
	if err != nil {
		writeError(w, a.log, err)
		return
	}
	a.idempotent(w, r, customer, body, func(w http.ResponseWriter) {
		var in holdBody
		if err := decodeStrict(body, &in); err != nil {
			writeError(w, a.log, err)
			return
		}
		h, err := a.svc.Hold(r.Context(), customer, id, HoldInput(in))
		if KindOf(err) == KindConflict {
			a.markSoldOut(r.Context(), w, id)
		}
		if err == nil || KindOf(err) == KindConflict {
			a.reportSupply(r.Context(), w, id)
		}
		if err != nil {
			writeError(w, a.log, err)
			return
		}
		w.Header().Set("Location", "/api/holds/"+h.ID)
		writeJSON(w, http.StatusCreated, h)
	})
}

func (a *API) getHold(w http.ResponseWriter, r *http.Request, customer string) {
	h, err := a.svc.GetHold(r.Context(), customer, r.PathValue("id"))
	if err != nil {
		writeError(w, a.log, err)
		return
	}
	writeJSON(w, http.StatusOK, h)
}

func (a *API) deleteHold(w http.ResponseWriter, r *http.Request, customer string) {
	h, err := a.svc.Release(r.Context(), customer, r.PathValue("id"))
	if err != nil {
		writeError(w, a.log, err)
		return
	}
	a.reportSupply(r.Context(), w, h.EventID)
	writeJSON(w, http.StatusOK, h)
}

func (a *API) postCheckout(w http.ResponseWriter, r *http.Request, customer string) {
	body, err := readBody(w, r, maxBody)
	if err != nil {
		writeError(w, a.log, err)
		return
	}
	a.idempotent(w, r, customer, body, func(w http.ResponseWriter) {
		o, err := a.svc.Checkout(r.Context(), customer, r.PathValue("id"))
		if err != nil {
			if failedOnOurSide(err) && !a.noRetry {
				// The fan held seats and asked to pay; the payment provider
				// or the database failed them. Their turn is not their
				// fault to lose: the gateway lets them back in first.
				w.Header().Set(CommandHeader, CommandRetry)
			}
			writeError(w, a.log, err)
			return
		}
		a.reportSupply(r.Context(), w, o.EventID)
		writeJSON(w, http.StatusOK, map[string]any{"order": o, "payment": o.Payment})
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
