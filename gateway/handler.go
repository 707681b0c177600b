package gateway

import (
	"errors"
	"fmt"
	"html/template"
	"strings"
	"time"

	"github.com/caddyserver/caddy/v2"
	"github.com/caddyserver/caddy/v2/modules/caddyhttp"
	"go.uber.org/zap"

	"github.com/foyer-dev/foyer/waitingroom"
)

func init() {
	caddy.RegisterModule(Handler{})
}

// Handler is the waiting_room middleware. It gives every visitor without an
// admission pass a place in the room's line and the waiting page, lets visitors
// through once their turn comes with a signed pass, and checks that pass on every
// later request before the origin sees it.
type Handler struct {
	// Room is the room's identifier: it names the room in the store, in the
	// admin API and in the pass's audience. Nodes serving the same room must use
	// the same ID and the same store.
	Room string `json:"room,omitempty"`

	// Store is where the room's shared state lives. Default: the embedded memory
	// store, for a single node.
	Store *StoreConfig `json:"store,omitempty"`

	// Title names the event on the waiting page.
	Title string `json:"title,omitempty"`

	// NewUsersPerMinute is how many waiting visitors are let in per minute,
	// smoothed per second. Default: 200.
	NewUsersPerMinute int `json:"new_users_per_minute,omitempty"`

	// TotalActiveUsers caps how many visitors hold a session at once. Default: 200.
	TotalActiveUsers int `json:"total_active_users,omitempty"`

	// SessionDuration is how long a visitor's pass lasts once admitted. Default: 10m.
	SessionDuration caddy.Duration `json:"session_duration,omitempty"`

	// QueueingMethod is fifo (default: first come, first served), random
	// (whenever a group is in, everyone waiting is placed by a fresh fair
	// draw), passthrough (no queue; everyone gets a pass) or reject (new
	// visitors see the closed page).
	QueueingMethod string `json:"queueing_method,omitempty"`

	// QueueAll holds everyone in line: nobody is admitted until it is unset.
	QueueAll bool `json:"queue_all,omitempty"`

	// PrequeueStart (RFC 3339) opens the pre-queue: from then until EventStart,
	// visitors register instead of queueing.
	PrequeueStart string `json:"prequeue_start,omitempty"`

	// EventStart (RFC 3339) is when admission begins. Empty: open now.
	EventStart string `json:"event_start,omitempty"`

	// EventEnd (RFC 3339) closes the room to new visitors.
	EventEnd string `json:"event_end,omitempty"`

	// ShuffleAtEventStart places everyone registered in the pre-queue by a fair,
	// verifiable random draw at EventStart.
	ShuffleAtEventStart bool `json:"shuffle_at_event_start,omitempty"`

	// SigningKey is the path of an Ed25519 private key (PKCS #8 PEM) that signs
	// passes and tickets. Absent: one is generated once and kept in Caddy's
	// storage, so restarts and every node sharing that storage use the same key.
	SigningKey string `json:"signing_key,omitempty"`

	// PreviousSigningKeys are paths of keys (PKCS #8 PEM) that signed before
	// SigningKey. They sign nothing, but tickets and passes they signed stay
	// good, and they are published in jwks.json, for as long as they are listed:
	// keep one for max(ticket_lifetime, session_duration) after a rotation.
	PreviousSigningKeys []string `json:"previous_signing_keys,omitempty"`

	// Page is the path of an html/template to use instead of the embedded
	// waiting page.
	Page string `json:"page,omitempty"`

	// PathPrefix is where the room's own endpoints live. Default: /_waiting-room.
	PathPrefix string `json:"path_prefix,omitempty"`

	// CookiePrefix names the cookies: <prefix>_ticket and <prefix>_pass.
	// Default: foyer.
	CookiePrefix string `json:"cookie_prefix,omitempty"`

	// AdmissionGrace is how long an admitted visitor has to come and claim their
	// session before the slot goes to the next. Default: 30s.
	AdmissionGrace caddy.Duration `json:"admission_grace,omitempty"`

	// TicketLifetime is how long a ticket stays good after it was last seen.
	// Default: 12h.
	TicketLifetime caddy.Duration `json:"ticket_lifetime,omitempty"`

	// QueuedStatusCode is the HTTP status of JSON answers to waiting visitors:
	// 200 (default) or 429, which adds Retry-After.
	QueuedStatusCode int `json:"queued_status_code,omitempty"`

	// Issuer is the "iss" claim of the passes. Default: foyer.
	Issuer string `json:"issuer,omitempty"`

	// OnStoreFailure says what happens while the store cannot be reached:
	// "closed" (default) answers newcomers 503 with Retry-After and holds those
	// waiting; "open" lets everyone through with a pass, the operator's explicit
	// choice of availability over the cap. Admitted visitors keep flowing either
	// way.
	OnStoreFailure string `json:"on_store_failure,omitempty"`

	settings waitingroom.Settings
	room     *waitingroom.Room
	key      *waitingroom.SigningKey
	previous []*waitingroom.SigningKey
	handle   *roomHandle
	poolKey  string
	page     *template.Template
	prefix   string
	ticketCk string
	passCk   string
	logger   *zap.Logger
}

// StoreConfig selects the room's store.
type StoreConfig struct {
	// Backend is "memory" (default) or "redis".
	Backend string `json:"backend,omitempty"`
	// URL is the Redis URL, for the redis backend.
	URL string `json:"url,omitempty"`
}

// Values of on_store_failure.
const (
	storeFailureClosed = "closed"
	storeFailureOpen   = "open"
)

// Defaults of the HTTP side.
const (
	DefaultPathPrefix   = "/_waiting-room"
	DefaultCookiePrefix = "foyer"
)

// CaddyModule returns the Caddy module information.
func (Handler) CaddyModule() caddy.ModuleInfo {
	return caddy.ModuleInfo{
		ID:  "http.handlers.waiting_room",
		New: func() caddy.Module { return new(Handler) },
	}
}

// Provision sets up the handler: it reads the settings, loads or creates the
// signing key, and joins the room shared by every handler of the same room on
// the same store, so that a config reload keeps the queue and its controller.
func (h *Handler) Provision(ctx caddy.Context) error {
	h.logger = ctx.Logger()
	if err := h.setup(); err != nil {
		return err
	}
	var err error
	if h.key, h.previous, err = loadKeys(ctx, h.SigningKey, h.PreviousSigningKeys, now()); err != nil {
		return err
	}
	h.handle, h.poolKey, err = acquireRoom(ctx, h, h.logger)
	if err != nil {
		return err
	}
	h.room = h.handle.room
	registerMetrics(ctx.GetMetricsRegistry(), h.logger)
	return nil
}

// setup reads everything in the configuration that needs no Caddy context.
func (h *Handler) setup() error {
	s, err := h.roomSettings()
	if err != nil {
		return err
	}
	if err := h.validateGateway(); err != nil {
		return err
	}
	h.settings = s
	h.prefix = strings.TrimSuffix(h.PathPrefix, "/")
	if h.prefix == "" {
		h.prefix = DefaultPathPrefix
	}
	cp := h.CookiePrefix
	if cp == "" {
		cp = DefaultCookiePrefix
	}
	h.ticketCk, h.passCk = cp+"_ticket", cp+"_pass"
	h.page, err = loadPage(h.Page)
	return err
}

// roomSettings turns the configuration into validated room settings. Every
// error names the setting at fault.
func (h *Handler) roomSettings() (waitingroom.Settings, error) {
	if h.Room == "" {
		return waitingroom.Settings{}, errors.New("room: required")
	}
	if !waitingroom.ValidRoomID(h.Room) {
		return waitingroom.Settings{}, fmt.Errorf("room: %q is not a valid room id (1-64 letters, digits, '_', '.', '-')", h.Room)
	}
	var s waitingroom.Settings
	for _, line := range caddyfileSettings {
		if line.room == nil {
			continue
		}
		v, err := roomValue(line, line.field(h))
		if err != nil {
			return s, err
		}
		if !line.room.Set(&s, v) {
			return s, fmt.Errorf("%s: a value of type %T does not fit the room setting", line.name, v)
		}
	}
	s = s.WithDefaults()
	return s, s.Validate()
}

// roomValue turns a Handler field into the value its room setting takes.
func roomValue(line caddyfileSetting, field any) (any, error) {
	switch p := field.(type) {
	case *caddy.Duration:
		return time.Duration(*p), nil
	case *string:
		switch line.room.Kind() {
		case waitingroom.KindTime:
			return parseTime(line.name, *p)
		}
		return *p, nil
	case *int:
		return *p, nil
	case *bool:
		return *p, nil
	}
	return nil, fmt.Errorf("%s: a setting of type %T cannot be read", line.name, field)
}

func parseTime(name, v string) (time.Time, error) {
	if v == "" {
		return time.Time{}, nil
	}
	t, err := time.Parse(time.RFC3339, v)
	if err != nil {
		return time.Time{}, fmt.Errorf("%s: %q is not an RFC 3339 time such as 2026-12-01T10:00:00Z", name, v)
	}
	return t, nil
}

func cookieNameOK(s string) bool {
	for _, c := range s {
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '_' || c == '-') {
			return false
		}
	}
	return len(s) <= 32
}

// Cleanup lets go of the room; the last handler to do so stops its controller.
func (h *Handler) Cleanup() error {
	if h.poolKey == "" {
		return nil
	}
	_, err := rooms.Delete(h.poolKey)
	return err
}

// Interface guards.
var (
	_ caddy.Provisioner           = (*Handler)(nil)
	_ caddy.Validator             = (*Handler)(nil)
	_ caddy.CleanerUpper          = (*Handler)(nil)
	_ caddyhttp.MiddlewareHandler = (*Handler)(nil)
)
