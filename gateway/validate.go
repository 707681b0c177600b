package gateway

import (
	"errors"
	"fmt"
	"net/http"
	"strings"

	"github.com/foyer-dev/foyer/waitingroom"
)

// Validate checks the configuration; every error names the setting at fault.
// Provision runs the same checks before anything starts, so that a refused
// configuration never opens a store or starts a room; Caddy calls Validate
// after Provision, and `caddy validate` reports what it finds.
func (h *Handler) Validate() error {
	if _, err := h.roomSettings(); err != nil {
		return err
	}
	return h.validateGateway()
}

// validateGateway checks what the room itself does not use: how the handler
// speaks HTTP, which store it opens and which key files it reads.
func (h *Handler) validateGateway() error {
	for _, line := range textLines() {
		text, _ := line.field(h).MarshalText()
		if err := waitingroom.CheckText(string(text)); err != nil {
			return fmt.Errorf("%s: %v", line.name, err)
		}
	}
	if h.QueuedStatusCode != 0 && h.QueuedStatusCode != http.StatusOK && h.QueuedStatusCode != http.StatusTooManyRequests {
		return fmt.Errorf("queued_status_code: must be 200 or 429, got %d", h.QueuedStatusCode)
	}
	if h.PathPrefix != "" && (!strings.HasPrefix(h.PathPrefix, "/") || strings.ContainsAny(h.PathPrefix, " ?#*")) {
		return fmt.Errorf("path_prefix: must be a path starting with '/', got %q", h.PathPrefix)
	}
	switch h.OnStoreFailure {
	case "", storeFailureClosed, storeFailureOpen:
	default:
		return fmt.Errorf("on_store_failure: must be open or closed, got %q", h.OnStoreFailure)
	}
	if h.CookiePrefix != "" && !cookieNameOK(h.CookiePrefix) {
		return fmt.Errorf("cookie_prefix: %q is not a valid cookie name", h.CookiePrefix)
	}
	switch h.CookieSameSite {
	case "", sameSiteLax, sameSiteStrict, sameSiteNone:
	default:
		return fmt.Errorf("cookie_samesite: must be lax, strict or none, got %q", h.CookieSameSite)
	}
	if h.Store != nil {
		switch h.Store.Backend {
		case "", "memory":
		case "redis":
			if h.Store.URL == "" {
				return errors.New("store: redis needs a URL, such as redis://127.0.0.1:6379")
			}
		default:
			return fmt.Errorf("store: unknown backend %q (memory or redis)", h.Store.Backend)
		}
	}
	// The languages, and the operator's catalogs: a missing key or plural
	// form is an error naming the file and the key.
	if _, err := newLangSet(h.Language, h.Languages, h.Messages, "c"); err != nil {
		return err
	}
	if h.Account != nil {
		if err := h.Account.validate(); err != nil {
			return err
		}
	}
	if n := len(h.PreviousSigningKeys); n > waitingroom.MaxVerifyingKeys {
		return fmt.Errorf("previous_signing_keys: %d keys, at most %d", n, waitingroom.MaxVerifyingKeys)
	}
	for _, p := range h.PreviousSigningKeys {
		if p == "" {
			return errors.New("previous_signing_keys: an empty path")
		}
	}
	return nil
}
