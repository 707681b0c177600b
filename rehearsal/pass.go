package rehearsal

import (
	"errors"
	"fmt"

	"github.com/golang-jwt/jwt/v5"
)

// passClaims is what the rehearsal reads of an admission pass. It reads the
// JWT's claims without verifying the signature: the simulator is a fan, not
// the origin, and it only needs the order key the room put in the pass to
// check that admission followed the order of the line. The booking service
// verifies every pass it is shown, so a pass that was not genuine would fail
// the fan's shopping, not go unnoticed.
type passClaims struct {
	Subject  string
	ID       string
	Audience string
	OrderKey uint64
	// Waitlist: the room let the fan in from its waitlist (docs/waitlist.md).
	Waitlist bool
}

// maxPassSize bounds the token we are willing to decode.
const maxPassSize = 4 << 10

// passPayload is the pass's claims as the room writes them.
type passPayload struct {
	jwt.RegisteredClaims
	OrderKey *uint64 `json:"order_key"`
	Waitlist bool    `json:"waitlist"`
}

// decodePass reads the claims of a compact JWT (header.payload.signature).
// A pass without an order key is an error: the check needs it.
func decodePass(token string) (passClaims, error) {
	if len(token) > maxPassSize {
		return passClaims{}, errors.New("pass too large")
	}
	var p passPayload
	if _, _, err := jwt.NewParser().ParseUnverified(token, &p); err != nil {
		return passClaims{}, fmt.Errorf("pass: %w", err)
	}
	if p.OrderKey == nil {
		return passClaims{}, errors.New("pass has no order_key")
	}
	c := passClaims{Subject: p.Subject, ID: p.ID, OrderKey: *p.OrderKey, Waitlist: p.Waitlist}
	// "aud" is a string or an array of strings (RFC 7519, 4.1.3); a pass is
	// for one room.
	switch len(p.Audience) {
	case 0:
	case 1:
		c.Audience = p.Audience[0]
	default:
		return passClaims{}, fmt.Errorf("pass audience %v: want one room", []string(p.Audience))
	}
	return c, nil
}
