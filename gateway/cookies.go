package gateway

import (
	"net/http"
	"time"

	"github.com/foyer-dev/foyer/waitingroom"
)

// setTicket hands the visitor their (renewed) ticket. The ticket is re-sealed on
// every answer because it carries the last position shown.
func (h *Handler) setTicket(w http.ResponseWriter, r *http.Request, vis waitingroom.Visit) {
	if vis.Ticket.Room == "" {
		return // no place was given (closed, sold out): nothing to keep
	}
	life := h.room.Settings().TicketLifetime
	http.SetCookie(w, &http.Cookie{
		Name:     h.ticketCk,
		Value:    h.room.SealTicket(vis.Ticket),
		Path:     "/",
		MaxAge:   int(life / time.Second),
		HttpOnly: true,
		Secure:   r.TLS != nil,
		SameSite: http.SameSiteLaxMode,
	})
}

// setPass hands the visitor their admission pass, valid until the session ends.
func (h *Handler) setPass(w http.ResponseWriter, r *http.Request, tok string, p waitingroom.Pass) {
	http.SetCookie(w, &http.Cookie{
		Name:     h.passCk,
		Value:    tok,
		Path:     "/",
		MaxAge:   max(1, int(p.ExpiresAt.Sub(now())/time.Second)),
		HttpOnly: true,
		Secure:   r.TLS != nil,
		SameSite: http.SameSiteLaxMode,
	})
}

// clearPass removes the pass cookie, once the origin has ended the session.
func (h *Handler) clearPass(w http.ResponseWriter, r *http.Request) {
	http.SetCookie(w, &http.Cookie{
		Name:     h.passCk,
		Value:    "",
		Path:     "/",
		MaxAge:   -1,
		HttpOnly: true,
		Secure:   r.TLS != nil,
		SameSite: http.SameSiteLaxMode,
	})
}
