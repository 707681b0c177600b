package main

import (
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
)

// passClaims is what the rehearsal reads of an admission pass. It decodes the
// JWT's payload without verifying the signature: the simulator is a fan, not
// the origin, and it only needs the order key the room put in the pass to
// check that admission followed the order of the line. The booking service
// verifies every pass it is shown, so a pass that was not genuine would fail
// the fan's shopping, not go unnoticed.
type passClaims struct {
	Subject  string
	ID       string
	Audience string
	OrderKey uint64
}

// maxPassSize bounds the token we are willing to decode.
const maxPassSize = 4 << 10

// decodePass reads the claims of a compact JWT (header.payload.signature).
// A pass without an order key is an error: the check needs it.
func decodePass(token string) (passClaims, error) {
	if len(token) > maxPassSize {
		return passClaims{}, errors.New("pass too large")
	}
	parts := strings.Split(token, ".")
	if len(parts) != 3 {
		return passClaims{}, fmt.Errorf("pass has %d parts, want 3", len(parts))
	}
	raw, err := base64.RawURLEncoding.DecodeString(parts[1])
	if err != nil {
		return passClaims{}, fmt.Errorf("pass payload: %w", err)
	}
	var p struct {
		Sub      string          `json:"sub"`
		JTI      string          `json:"jti"`
		Aud      json.RawMessage `json:"aud"`
		OrderKey *uint64         `json:"order_key"`
	}
	if err := json.Unmarshal(raw, &p); err != nil {
		return passClaims{}, fmt.Errorf("pass payload: %w", err)
	}
	if p.OrderKey == nil {
		return passClaims{}, errors.New("pass has no order_key")
	}
	c := passClaims{Subject: p.Sub, ID: p.JTI, OrderKey: *p.OrderKey}
	// "aud" is a string or an array of strings (RFC 7519, 4.1.3).
	var one string
	var many []string
	switch {
	case len(p.Aud) == 0:
	case json.Unmarshal(p.Aud, &one) == nil:
		c.Audience = one
	case json.Unmarshal(p.Aud, &many) == nil && len(many) == 1:
		c.Audience = many[0]
	default:
		return passClaims{}, fmt.Errorf("pass audience %s: want one room", p.Aud)
	}
	return c, nil
}
