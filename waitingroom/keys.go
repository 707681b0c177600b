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

	"github.com/foyer-dev/foyer/waitingroom/pass"
)

// SigningKey is the room operator's Ed25519 key. It signs passes (EdDSA JWTs that
// origins verify with the public half) and, through a derived secret, tickets
// (which only gateways read). Every node that serves a room must hold the same key.
type SigningKey struct {
	signer    *pass.Signer // signs passes, and names the key (its kid)
	ticketKey []byte
	seedKey   []byte    // keys the MAC of proof-of-work seeds
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
	return &SigningKey{
		signer:    pass.NewSigner(priv),
		ticketKey: ticketKey,
		seedKey:   mac.Sum(nil),
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
