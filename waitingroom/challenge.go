package waitingroom

import (
	"fmt"
	"strconv"
	"strings"
)

// Challenge is what a newcomer must do before the room makes them a place: the
// zero value asks nothing; PoWBits > 0 asks for a proof of work, a nonce whose
// SHA-256 with a seed the room issued starts with that many zero bits (see
// pow.go and docs/endpoints.md, "What fans, apps and origins see"). It is the value
// of the challenge setting, written "pow 20" or "off".
type Challenge struct {
	PoWBits int
}

// The proof of work's bounds. A phone pays about a second at the default
// (docs/bots.md, "Bots and abuse" gives the measured figures); every bit more
// doubles what everyone pays, and past the maximum a phone would give up.
const (
	DefaultPoWBits = 18
	MinPoWBits     = 8
	MaxPoWBits     = 28
)

// PoWAlgorithm names the puzzle in the status JSON.
const PoWAlgorithm = "sha256-leading-zero-bits"

// On reports whether newcomers must solve something.
func (c Challenge) On() bool { return c.PoWBits > 0 }

// String writes the challenge as the configuration does: "pow 20" or "off".
func (c Challenge) String() string {
	if !c.On() {
		return "off"
	}
	return "pow " + strconv.Itoa(c.PoWBits)
}

// ParseChallenge reads "off", "pow" (DefaultPoWBits) or "pow <bits>". Bounds
// are Validate's, so that a Caddyfile and a PATCH are told the same.
func ParseChallenge(text string) (Challenge, error) {
	f := strings.Fields(text)
	switch {
	case len(f) == 1 && f[0] == "off":
		return Challenge{}, nil
	case len(f) == 1 && f[0] == "pow":
		return Challenge{PoWBits: DefaultPoWBits}, nil
	case len(f) == 2 && f[0] == "pow":
		n, err := strconv.Atoi(f[1])
		if err != nil {
			return Challenge{}, fmt.Errorf("pow takes a number of bits, got %q", f[1])
		}
		return Challenge{PoWBits: n}, nil
	}
	return Challenge{}, fmt.Errorf(`must be "off" or "pow <bits>", got %q`, text)
}

// MarshalText writes String, so that JSON has the challenge as a string.
func (c Challenge) MarshalText() ([]byte, error) { return []byte(c.String()), nil }

// UnmarshalText reads what ParseChallenge reads.
func (c *Challenge) UnmarshalText(b []byte) error { return parseInto(c, b, ParseChallenge) }

// ChallengeOffer is the puzzle a newcomer's status carries in the challenge
// state: find a decimal nonce such that SHA-256(seed bytes || ASCII nonce)
// starts with Bits zero bits, and send both to the join endpoint.
type ChallengeOffer struct {
	Algorithm string `json:"algorithm"`
	// Seed is base64url without padding; the hash is over its decoded bytes.
	Seed string `json:"seed"`
	Bits int    `json:"bits"`
}
