package pass

import (
	"crypto/rand"
	"encoding/base64"
	"errors"
	"time"

	"github.com/golang-jwt/jwt/v5"
)

// DefaultIssuer is the "iss" of passes when the operator names no other.
const DefaultIssuer = "foyer"

// ErrInvalid is wrapped by every pass verification failure, whatever the
// cause: a bad signature, an unknown key, a wrong room, an expired pass,
// garbage.
var ErrInvalid = errors.New("invalid admission pass")

// Claims is an admission pass: proof that a visitor was let through the room.
// It travels as an EdDSA-signed JWT that the origin can verify with the room's
// JWKS without any shared secret.
type Claims struct {
	ID        string    // "jti": unique per pass, used to revoke it
	Room      string    // "aud": a pass opens one room only
	Subject   string    // "sub": the visitor (or account) it was issued to
	OrderKey  uint64    // the visitor's place in the room's order
	IssuedAt  time.Time // "iat" and "nbf"
	ExpiresAt time.Time // "exp": the end of the session
	// Waitlist ("waitlist": true) says the holder may take units that
	// came back after a sell-out: they were let in from the waitlist, or
	// the sale reopened after it. An origin holds returned units for such
	// passes only (docs/PROTOCOL.md, "The waitlist claim").
	Waitlist bool
}

// jwtClaims is Claims as the JWT carries them.
type jwtClaims struct {
	jwt.RegisteredClaims
	OrderKey uint64 `json:"order_key"`
	Waitlist bool   `json:"waitlist,omitempty"`
}

// NewID returns a random pass ID.
func NewID() string {
	var b [16]byte
	if _, err := rand.Read(b[:]); err != nil {
		panic(err) // crypto/rand never fails on supported platforms
	}
	return base64.RawURLEncoding.EncodeToString(b[:])
}
