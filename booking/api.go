package booking

import (
	"context"
	"crypto/subtle"
	"log/slog"
	"net/http"
	"strconv"
	"strings"
)

// Gateway commands, sent in a response header that the gateway acts on and
// strips.
const (
	CommandHeader  = "X-Waiting-Room-Command"
	CommandSoldOut = "sold-out"
	CommandRevoke  = "revoke"
	// CommandRetry tells the gateway the site failed this fan's session
	// through no fault of theirs: it puts them back at the front with their
	// place (docs/PROTOCOL.md, "Requeue").
	CommandRetry = "retry"
)

// Authenticator names the customer of a request.
type Authenticator interface {
	Customer(r *http.Request) (string, error)
}

// APIConfig assembles the HTTP API.
type APIConfig struct {
	Service *Service
	// Auth identifies customers; in production, Passes.
	Auth Authenticator
	// AdminToken guards /api/admin/. Empty disables the admin API.
	AdminToken string
	Logger     *slog.Logger
	// FaultNoRetry is a rehearsal fault, off by default: the service never
	// asks the gateway to requeue a fan it failed (docs/rehearsal.md, "An
	// origin that fails 2% of checkouts"), so that a sale can be played
	// without the requeue to compare.
	FaultNoRetry bool
	// Waitlist holds the places that come back after an event sold out
	// (expired holds, releases) for the fans the room lets in from its
	// waitlist: once an event had no place left, a hold needs a pass with
	// the waitlist claim (docs/waitlist.md). The Auth must then be a
	// WaitlistAuthenticator. Off: anyone admitted may hold any free place.
	Waitlist bool
}

// WaitlistAuthenticator says whether a request's pass was let in from the
// room's waitlist; Passes is one.
type WaitlistAuthenticator interface {
	FromWaitlist(r *http.Request) bool
}

// API is the booking service's JSON API.
type API struct {
	svc        *Service
	auth       Authenticator
	adminToken string
	log        *slog.Logger
	mux        *http.ServeMux
	noRetry    bool                  // APIConfig.FaultNoRetry
	waitlist   WaitlistAuthenticator // APIConfig.Waitlist: nil when off
}

// NewAPI builds the API's routes.
func NewAPI(cfg APIConfig) *API {
	a := &API{svc: cfg.Service, auth: cfg.Auth, adminToken: cfg.AdminToken, log: cfg.Logger, mux: http.NewServeMux(), noRetry: cfg.FaultNoRetry}
	if a.log == nil {
		a.log = slog.New(slog.DiscardHandler)
	}
	if w, ok := cfg.Auth.(WaitlistAuthenticator); ok && cfg.Waitlist {
		a.waitlist = w
	}
	a.mux.HandleFunc("GET /api/events", a.customer(a.listEvents))
	a.mux.HandleFunc("GET /api/events/{id}", a.customer(a.getEvent))
	a.mux.HandleFunc("GET /api/events/{id}/seats", a.customer(a.getSeats))
	a.mux.HandleFunc("POST /api/events/{id}/holds", a.customer(a.postHold))
	a.mux.HandleFunc("GET /api/holds/{id}", a.customer(a.getHold))
	a.mux.HandleFunc("DELETE /api/holds/{id}", a.customer(a.deleteHold))
	a.mux.HandleFunc("POST /api/holds/{id}/checkout", a.customer(a.postCheckout))
	a.mux.HandleFunc("GET /api/orders/{id}", a.customer(a.getOrder))
	a.mux.HandleFunc("GET /api"+OrderLinkPath+"{link}", a.public(a.getOrderByLink))
	a.mux.HandleFunc("POST /api/payments/webhook", background(a.public(a.postWebhook)))
	a.mux.HandleFunc("POST /api/admin/events", a.admin(a.postEvent))
	a.mux.HandleFunc("GET /api/admin/invariants", a.admin(a.getInvariants))
	return a
}

// ServeHTTP serves the API. Every response is JSON.
func (a *API) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	jsonNotFound(a.mux).ServeHTTP(w, r)
}

// A handler answers a request, or returns the error to answer it with
// (writeError): nothing has been written then.
type handler func(w http.ResponseWriter, r *http.Request) error

type customerHandler func(w http.ResponseWriter, r *http.Request, customer string) error

// public serves h to anyone: the request carries its own proof (a signed
// link, a provider's signature) or needs none.
func (a *API) public(h handler) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		if err := h(w, r); err != nil {
			writeError(w, a.log, err)
		}
	}
}

// customer authenticates the request by its admission pass.
func (a *API) customer(h customerHandler) http.HandlerFunc {
	return a.public(func(w http.ResponseWriter, r *http.Request) error {
		id, err := a.auth.Customer(r)
		if err != nil {
			return err
		}
		return h(w, r, id)
	})
}

// admin checks the bearer token in constant time.
func (a *API) admin(h handler) http.HandlerFunc {
	return a.public(func(w http.ResponseWriter, r *http.Request) error {
		if a.adminToken == "" {
			return Errorf(KindUnauthorized, CodeUnauthorized, "the admin API is disabled: no admin token is configured")
		}
		got, ok := strings.CutPrefix(r.Header.Get("Authorization"), "Bearer ")
		if !ok || subtle.ConstantTimeCompare([]byte(got), []byte(a.adminToken)) != 1 {
			w.Header().Set("WWW-Authenticate", `Bearer realm="booking admin"`)
			return Errorf(KindUnauthorized, CodeUnauthorized, "a valid admin bearer token is required")
		}
		return h(w, r)
	})
}

// eventID reads the {id} path value; anything but a positive integer is an
// unknown event.
func eventID(r *http.Request) (int64, error) {
	raw := r.PathValue("id")
	id, err := strconv.ParseInt(raw, 10, 64)
	if err != nil || id <= 0 {
		return 0, Errorf(KindNotFound, CodeEventNotFound, "no event %s", quote(raw))
	}
	return id, nil
}

// markSoldOut tells the gateway when the event has nothing left to sell.
func (a *API) markSoldOut(ctx context.Context, w http.ResponseWriter, eventID int64) {
	if a.svc.SoldOut(ctx, eventID) {
		w.Header().Set(CommandHeader, CommandSoldOut)
	}
}

func ctxWithoutCancel(r *http.Request) context.Context { return context.WithoutCancel(r.Context()) }

// background marks h's requests as background work (Background): the
// payment provider's webhooks, which no fan's page is waiting on. At the
// height of a sale the provider sends many at once, and on PostgreSQL each
// holds a connection for several round trips.
func background(h http.HandlerFunc) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		h(w, r.WithContext(Background(r.Context())))
	}
}
