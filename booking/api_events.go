package booking

import (
	"net/http"
)

// eventView is an event with its live availability.
type eventView struct {
	Event
	Available int  `json:"available"`
	SoldOut   bool `json:"sold_out"`
}

func (a *API) view(r *http.Request, e Event) eventView {
	v := eventView{Event: e}
	if m, err := a.svc.SeatMap(r.Context(), e.ID); err == nil {
		v.Available, v.SoldOut = m.Available, m.SoldOut()
	}
	return v
}

func (a *API) listEvents(w http.ResponseWriter, r *http.Request, _ string) error {
	events, err := a.svc.cfg.Store.Events(r.Context())
	if err != nil {
		return err
	}
	out := make([]eventView, 0, len(events))
	for _, e := range events {
		out = append(out, a.view(r, e))
	}
	return reply(w, http.StatusOK, map[string]any{"events": out})
}

func (a *API) getEvent(w http.ResponseWriter, r *http.Request, _ string) error {
	id, err := eventID(r)
	if err != nil {
		return err
	}
	e, err := a.svc.cfg.Store.Event(r.Context(), id)
	if err != nil {
		return err
	}
	v := a.view(r, e)
	if v.SoldOut {
		w.Header().Set(CommandHeader, CommandSoldOut)
	}
	return reply(w, http.StatusOK, v)
}

func (a *API) getSeats(w http.ResponseWriter, r *http.Request, _ string) error {
	id, err := eventID(r)
	if err != nil {
		return err
	}
	m, err := a.svc.SeatMap(r.Context(), id)
	if err != nil {
		return err
	}
	// The map is the same for everyone and may be a second stale: let
	// caches in front share it for that second.
	w.Header().Set("Cache-Control", "public, max-age=1")
	if m.SoldOut() {
		w.Header().Set(CommandHeader, CommandSoldOut)
	}
	return reply(w, http.StatusOK, m)
}

func (a *API) postEvent(w http.ResponseWriter, r *http.Request) error {
	body, err := readBody(w, r, maxAdminBody)
	if err != nil {
		return err
	}
	return a.idempotent(w, r, "admin", body, func(w http.ResponseWriter) error {
		var spec EventSpec
		if err := decodeStrict(body, &spec); err != nil {
			return err
		}
		e, err := a.svc.CreateEvent(r.Context(), spec)
		if err != nil {
			return err
		}
		w.Header().Set("Location", "/api/events/"+itoa(e.ID))
		return reply(w, http.StatusCreated, map[string]any{"id": e.ID, "event": e})
	})
}

func (a *API) getInvariants(w http.ResponseWriter, r *http.Request) error {
	rep, err := a.svc.CheckInvariants(r.Context())
	if err != nil {
		return err
	}
	if rep.Violations == nil {
		rep.Violations = []string{}
	}
	status := http.StatusOK
	if !rep.OK() {
		status = http.StatusInternalServerError
	}
	return reply(w, status, map[string]any{"ok": rep.OK(), "report": rep})
}
