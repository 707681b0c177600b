package pass

import (
	"crypto"
	"crypto/ed25519"
	"encoding/base64"
	"errors"

	"github.com/foyer-dev/foyer/internal/jwks"
	"github.com/go-jose/go-jose/v4"
)

// JWK is one public key of the room's key set as the gateway publishes it
// (RFC 7517, RFC 8037 for OKP keys).
//
// Reading a key set goes through go-jose (ParseJWKS); writing one does not,
// because go-jose orders the members differently, and the document served at
// jwks.json keeps the bytes it always had, which origins and caches may
// compare.
type JWK struct {
	KeyType string `json:"kty"`
	Curve   string `json:"crv"`
	X       string `json:"x"`
	KeyID   string `json:"kid"`
	Alg     string `json:"alg,omitempty"`
	Use     string `json:"use,omitempty"`
}

// JWKS is a JSON Web Key Set, the document served at the room's jwks.json.
type JWKS struct {
	Keys []JWK `json:"keys"`
}

// PublicJWK describes an Ed25519 public key as a JWK.
func PublicJWK(pub ed25519.PublicKey) JWK {
	return JWK{
		KeyType: "OKP",
		Curve:   "Ed25519",
		X:       base64.RawURLEncoding.EncodeToString(pub),
		KeyID:   Thumbprint(pub),
		Alg:     "EdDSA",
		Use:     "sig",
	}
}

// Thumbprint computes the RFC 7638 SHA-256 thumbprint of an Ed25519 public
// key, the "kid" of passes. It is empty for a key of the wrong size.
func Thumbprint(pub ed25519.PublicKey) string {
	sum, err := (&jose.JSONWebKey{Key: pub}).Thumbprint(crypto.SHA256)
	if err != nil {
		return ""
	}
	return base64.RawURLEncoding.EncodeToString(sum)
}

// ParseJWKS reads a key set and returns its Ed25519 keys by key ID (the
// thumbprint when a key names none). Keys of other types are skipped, not
// errors, so a set shared with other issuers still works; a set with no
// usable Ed25519 key is an error.
func ParseJWKS(data []byte) (map[string]ed25519.PublicKey, error) {
	set, err := jwks.Parse(data)
	if err != nil {
		return nil, err
	}
	return ed25519Keys(set)
}

func ed25519Keys(set *jwks.Set) (map[string]ed25519.PublicKey, error) {
	keys := make(map[string]ed25519.PublicKey, len(set.Keys))
	for _, k := range set.Keys {
		pub, ok := k.Key.(ed25519.PublicKey)
		if !ok {
			continue
		}
		kid := k.KeyID
		if kid == "" {
			kid = Thumbprint(pub)
		}
		keys[kid] = pub
	}
	if len(keys) == 0 {
		return nil, errors.New("JWKS holds no Ed25519 signing key")
	}
	return keys, nil
}
