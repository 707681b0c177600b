package jwks

import (
	"crypto/ecdsa"
	"crypto/ed25519"
	"crypto/rsa"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/go-jose/go-jose/v4"
)

// MinRSABits is the smallest RSA modulus a set may hold: shorter keys are
// skipped, as NIST has not allowed them for signatures since 2013.
const MinRSABits = 2048

// Set is a parsed key set: the keys that can verify a signature, in the
// order the document lists them.
type Set struct {
	Keys  []jose.JSONWebKey
	byKid map[string]int // index in Keys; the last key of a kid wins
}

// Parse reads a JWKS. Keys that cannot verify a signature (symmetric or
// private keys, encryption keys, unknown types or curves, malformed or weak
// keys) are skipped, so one odd key shared with other issuers does not take
// the others down (RFC 7517, section 5); a set with no usable key is an error.
//
// Each key is decoded on its own rather than with jose.JSONWebKeySet, which
// refuses a whole set over one key it does not know.
func Parse(data []byte) (*Set, error) {
	var doc struct {
		Keys []json.RawMessage `json:"keys"`
	}
	if err := json.Unmarshal(data, &doc); err != nil {
		return nil, fmt.Errorf("malformed JWKS: %w", err)
	}
	s := &Set{byKid: make(map[string]int, len(doc.Keys))}
	for _, raw := range doc.Keys {
		var k jose.JSONWebKey
		if err := k.UnmarshalJSON(raw); err != nil || !usable(k) {
			continue
		}
		if k.KeyID != "" {
			s.byKid[k.KeyID] = len(s.Keys)
		}
		s.Keys = append(s.Keys, k)
	}
	if len(s.Keys) == 0 {
		return nil, errors.New("JWKS holds no usable signing key")
	}
	return s, nil
}

// usable reports whether k may verify signatures: a public asymmetric key
// not reserved for encryption. A JWK carrying private parameters is refused
// outright: a login that publishes its private key has lost it.
func usable(k jose.JSONWebKey) bool {
	if k.Use != "" && k.Use != "sig" {
		return false
	}
	switch pub := k.Key.(type) {
	case *rsa.PublicKey:
		return pub.N.BitLen() >= MinRSABits && pub.E >= 3
	case *ecdsa.PublicKey, ed25519.PublicKey:
		return true
	}
	return false
}

// Key returns the key whose "kid" is kid.
func (s *Set) Key(kid string) (jose.JSONWebKey, bool) {
	i, ok := s.byKid[kid]
	if !ok {
		return jose.JSONWebKey{}, false
	}
	return s.Keys[i], true
}

// Has reports whether the set holds a key whose "kid" is kid.
func (s *Set) Has(kid string) bool {
	_, ok := s.byKid[kid]
	return ok
}
