package waitingroom

import (
	"crypto/ed25519"
	"errors"
	"fmt"
	"time"

	"github.com/foyer-dev/foyer/waitingroom/pass"
)

// MaxVerifyingKeys bounds how many keys a room verifies with besides the one
// that signs. A ticket that opens with none of them costs one MAC per key, so
// the bound keeps forged cookies cheap to refuse; a rotation needs one or two.
const MaxVerifyingKeys = 4

// Keyring is a room's keys during a rotation: the current key signs every new
// ticket and pass; the others (the previous key, until what it signed has
// expired, or the next key, staged so that every node trusts it before any node
// signs with it) only verify. Origins are given all of them in the JWKS.
type Keyring struct {
	current *SigningKey
	others  []*SigningKey
	jwks    pass.JWKS
}

// NewKeyring builds a keyring. Keys that repeat the current key or one
// another are dropped, so a configuration that lists a key twice is harmless.
func NewKeyring(current *SigningKey, others ...*SigningKey) (*Keyring, error) {
	if current == nil {
		return nil, errors.New("keyring needs a current key")
	}
	kr := &Keyring{current: current, jwks: pass.JWKS{Keys: []pass.JWK{current.JWK()}}}
	seen := map[string]bool{current.KeyID(): true}
	for _, k := range others {
		if k == nil || seen[k.KeyID()] {
			continue
		}
		seen[k.KeyID()] = true
		kr.others = append(kr.others, k)
		kr.jwks.Keys = append(kr.jwks.Keys, k.JWK())
	}
	if len(kr.others) > MaxVerifyingKeys {
		return nil, fmt.Errorf("%d keys besides the current one; at most %d are kept during a rotation", len(kr.others), MaxVerifyingKeys)
	}
	return kr, nil
}

// Current is the key that signs.
func (kr *Keyring) Current() *SigningKey { return kr.current }

// KeyIDs lists every key's ID, the current one first.
func (kr *Keyring) KeyIDs() []string {
	ids := make([]string, 0, 1+len(kr.others))
	for _, k := range kr.jwks.Keys {
		ids = append(ids, k.KeyID)
	}
	return ids
}

// JWKS is the public half of every key, the current one first. The result is
// shared: callers must not change it.
func (kr *Keyring) JWKS() pass.JWKS { return kr.jwks }

// PublicKeys indexes every public key by key ID, for a pass.Verifier.
func (kr *Keyring) PublicKeys() map[string]ed25519.PublicKey {
	m := make(map[string]ed25519.PublicKey, 1+len(kr.others))
	m[kr.current.KeyID()] = kr.current.Public()
	for _, k := range kr.others {
		m[k.KeyID()] = k.Public()
	}
	return m
}

// OpenTicket opens a ticket sealed by any key of the ring. Tickets carry no key
// ID: the current key is tried first, so a ticket it sealed costs one MAC as
// before, and one sealed by another key costs one MAC per key tried. Tickets
// are re-sealed with the current key on the next answer (Room.MustReseal), so
// a fan pays that once.
func (kr *Keyring) OpenTicket(value, room string, now time.Time, lifetime time.Duration) (Ticket, error) {
	t, _, err := openTicket(value, room, now, lifetime, kr.current, kr.others)
	return t, err
}

// openTicketCurrent is OpenTicket, also saying whether the current key
// sealed the ticket.
func (kr *Keyring) openTicketCurrent(value, room string, now time.Time, lifetime time.Duration) (Ticket, bool, error) {
	return openTicket(value, room, now, lifetime, kr.current, kr.others)
}
