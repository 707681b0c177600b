package waitingroom

import (
	"crypto/ed25519"
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"crypto/x509"
	"encoding/pem"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/foyer-dev/foyer/waitingroom/pass"
)

// SigningKey is the room operator's Ed25519 key. It signs passes (EdDSA JWTs that
// origins verify with the public half) and, through a derived secret, tickets
// (which only gateways read). Every node that serves a room must hold the same key.
type SigningKey struct {
	signer    *pass.Signer // signs passes, and names the key (its kid)
	ticketKey []byte
	seedKey   []byte    // keys the MAC of proof-of-work seeds
	codeKey   []byte    // keys the hashes access codes are stored as (codes.go)
	seedMACs  sync.Pool // of keyed HMAC-SHA256 states for seeds
	macs      sync.Pool // of *ticketMACState, keyed HMAC-SHA256 states for tickets
}

// GenerateSigningKey makes a fresh random key.
func GenerateSigningKey() (*SigningKey, error) {
	_, priv, err := ed25519.GenerateKey(rand.Reader)
	if err != nil {
		return nil, err
	}
	return NewSigningKey(priv), nil
}

// NewSigningKey wraps an existing Ed25519 private key.
func NewSigningKey(priv ed25519.PrivateKey) *SigningKey {
	// The ticket secret and the seed MAC key are derived, not the signing key
	// itself, so that the uses can never be confused and rotating one rotates
	// them all. Each is HMAC-SHA256(seed, label), not crypto/hkdf: HKDF-Expand
	// appends a counter byte to the label, so its output would differ, and
	// these keys must stay the same bytes across versions. Tickets sit in fans'
	// cookies and proof-of-work seeds in their pages, and every node of a room
	// opens what any other sealed, during a rolling upgrade too (docs/ARCHITECTURE.md,
	// "Failure semantics"); changing the derivation would drop every fan's place.
	mac := hmac.New(sha256.New, priv.Seed())
	mac.Write([]byte("foyer ticket key v1"))
	ticketKey := mac.Sum(nil)
	mac = hmac.New(sha256.New, priv.Seed())
	mac.Write([]byte("foyer challenge seed key v1"))
	seedKey := mac.Sum(nil)
	mac = hmac.New(sha256.New, priv.Seed())
	mac.Write([]byte("foyer access code key v1"))
	return &SigningKey{
		signer:    pass.NewSigner(priv),
		ticketKey: ticketKey,
		seedKey:   seedKey,
		codeKey:   mac.Sum(nil),
	}
}

// ParseSigningKeyPEM reads a PKCS #8 "PRIVATE KEY" PEM block holding an Ed25519 key,
// the format `openssl genpkey -algorithm ed25519` writes.
func ParseSigningKeyPEM(data []byte) (*SigningKey, error) {
	block, _ := pem.Decode(data)
	if block == nil {
		return nil, errors.New("no PEM block found")
	}
	if block.Type != "PRIVATE KEY" {
		return nil, fmt.Errorf("PEM block is %q, want \"PRIVATE KEY\" (PKCS #8 Ed25519)", block.Type)
	}
	key, err := x509.ParsePKCS8PrivateKey(block.Bytes)
	if err != nil {
		return nil, fmt.Errorf("parsing PKCS #8 key: %w", err)
	}
	priv, ok := key.(ed25519.PrivateKey)
	if !ok {
		return nil, fmt.Errorf("key is %T, want an Ed25519 key", key)
	}
	return NewSigningKey(priv), nil
}

// MarshalPEM encodes the private key as a PKCS #8 PEM block.
func (k *SigningKey) MarshalPEM() ([]byte, error) {
	der, err := x509.MarshalPKCS8PrivateKey(k.signer.Private())
	if err != nil {
		return nil, err
	}
	return pem.EncodeToMemory(&pem.Block{Type: "PRIVATE KEY", Bytes: der}), nil
}

// KeyID is the key's RFC 7638 thumbprint, used as the JWT "kid".
func (k *SigningKey) KeyID() string { return k.signer.KeyID() }

// Public returns the verifying half.
func (k *SigningKey) Public() ed25519.PublicKey { return k.signer.Public() }

// JWK returns the public key as published in the room's key set.
func (k *SigningKey) JWK() pass.JWK { return k.signer.JWK() }

// Signer is the part of the key that signs passes.
func (k *SigningKey) Signer() *pass.Signer { return k.signer }

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

// JWKS is the key set origins verify passes with: the key that signs, then the
// others still trusted during a rotation.
func (r *Room) JWKS() pass.JWKS { return r.keys.JWKS() }

// KeyIDs lists the IDs of the keys the room verifies with, the signing one first.
func (r *Room) KeyIDs() []string { return r.keys.KeyIDs() }
