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

	// Settings are the room's own settings: its title, rates, schedule and
	// the rest of waitingroom.SettingDefs but for the room state an admin
	// sets (paused, sold_out). In JSON they sit beside the fields below,
	// each under its snake_case name, durations in nanoseconds or Go syntax
	// ("10m"), times in RFC 3339; see MarshalJSON and the settings table (docs/configuration.md).
	Settings waitingroom.Settings `json:"-"`

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

	// Language is the language of the room's pages: "auto" (default), the
	// fan's browser's choice (Accept-Language) among the languages offered,
	// or a BCP 47 tag that every fan reads unless they choose another from
	// the page's menu. Unmatched, fans read the first of Languages, or
	// English.
	Language string `json:"language,omitempty"`

	// Languages restricts the languages offered to these tags, the first
	// the default. Default: every catalog, built in or in Messages.
	Languages []string `json:"languages,omitempty"`

	// Messages is a directory of the operator's message catalogs, one JSON
	// file per language (de.json): they override the built-in words and add
	// languages and keys of their own. They are checked when the handler is
	// provisioned: a missing key or plural form is an error naming the file
	// and the key.
	Messages string `json:"messages,omitempty"`

	// PathPrefix is where the room's own endpoints live. Default: /_waiting-room.
	PathPrefix string `json:"path_prefix,omitempty"`

	// CookiePrefix names the cookies: <prefix>_ticket and <prefix>_pass.
	// Default: foyer.
	CookiePrefix string `json:"cookie_prefix,omitempty"`

	// CookieSameSite is the SameSite attribute of every cookie the room sets:
	// "lax" (default: sent on top-level navigation to the site), "strict", or
	// "none", which an embedded room needs (the room in an iframe on another
	// site) and which always adds Secure: browsers keep a SameSite=None
	// cookie only from HTTPS.
	CookieSameSite string `json:"cookie_samesite,omitempty"`

	// CookiePartitioned adds the Partitioned attribute (CHIPS) and Secure to
	// every cookie the room sets, so that a browser that blocks third-party
	// cookies still keeps them for the room embedded in another site, in a
	// jar of that site's own.
	CookiePartitioned bool `json:"cookie_partitioned,omitempty"`

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

	// Account keeps each account to one place, from a token the site's own
	// login issues (docs/configuration.md, "The account block"). Absent: every browser is a
	// visitor of its own.
	Account *AccountConfig `json:"account,omitempty"`

	// settings are Settings with their defaults, validated.
	settings waitingroom.Settings
	room     *waitingroom.Room
	key      *waitingroom.SigningKey
	previous []*waitingroom.SigningKey
	handle   *roomHandle
	poolKey  string
	page     *template.Template
	langs    *langSet
	prefix   string
	ticketCk string
	passCk   string
	// cookieAttrs ends every Set-Cookie line after Max-Age: HttpOnly,
	// SameSite, and Secure and Partitioned when the settings ask for them.
	cookieAttrs cookieAttrs
	// refreshCk remembers a fan without JavaScript who asked the page to
	// check again by itself.
	refreshCk string
	logger    *zap.Logger
	account   *accountGate
	// clock is a standalone handler's own clock (NewStandalone); nil under
	// Caddy, where every room reads the process's.
	clock func() time.Time
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
	return moduleInfo[Handler]("http.handlers.waiting_room")
}

// moduleInfo is the information of the module of type T, whose zero value
// Caddy provisions, under id.
func moduleInfo[T any, PT interface {
	*T
	caddy.Module
}](id caddy.ModuleID) caddy.ModuleInfo {
	return caddy.ModuleInfo{ID: id, New: func() caddy.Module { return PT(new(T)) }}
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
	logKeysLoaded(h.logger, h.Room, h.SigningKey, h.key, h.previous)
	h.handle, h.poolKey, err = acquireRoom(ctx, h, h.logger)
	if err != nil {
		return err
	}
	h.room = h.handle.room
	h.handle.events.Store(newEventSink(ctx, h.logger))
	h.handle.handler.Store(h)
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
	h.ticketCk, h.passCk, h.refreshCk = cp+"_ticket", cp+"_pass", cp+"_autorefresh"
	h.cookieAttrs = newCookieAttrs(h.CookieSameSite, h.CookiePartitioned)
	if h.Account != nil {
		if h.account, err = newAccountGate(h.Account); err != nil {
			return err
		}
	}
	if h.langs, err = newLangSet(h.Language, h.Languages, h.Messages, cp+"_lang"); err == nil {
		h.langs.remember = h.setCookie
	}
	if err != nil {
		return err
	}
	if h.page, err = loadPage(h.Page); err != nil {
		return err
	}
	return checkPageKeys(h.Page, h.page, h.langs)
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
	// Only configuration: room state such as paused is the admin API's.
	var s waitingroom.Settings
	for _, d := range configSettings() {
		d.Copy(&s, &h.Settings)
	}
	s = s.WithDefaults()
	return s, s.Validate()
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
