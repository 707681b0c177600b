package waitingroom

import (
	"crypto/ed25519"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
)

// JWK is one public key in a JSON Web Key Set (RFC 7517, RFC 8037 for OKP keys).
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

// ParseJWKS reads a key set and returns its Ed25519 keys by key ID. Keys of other
// types are skipped, not errors, so a set shared with other issuers still works;
// a set with no usable key is an error.
func ParseJWKS(data []byte) (map[string]ed25519.PublicKey, error) {
	var set JWKS
	if err := json.Unmarshal(data, &set); err != nil {
		return nil, fmt.Errorf("parsing JWKS: %w", err)
	}
	keys := make(map[string]ed25519.PublicKey, len(set.Keys))
	for _, k := range set.Keys {
		if k.KeyType != "OKP" || k.Curve != "Ed25519" {
			continue
		}
		if k.Use != "" && k.Use != "sig" {
			continue
		}
		x, err := base64.RawURLEncoding.DecodeString(k.X)
		if err != nil || len(x) != ed25519.PublicKeySize {
			return nil, fmt.Errorf("JWKS key %q: invalid Ed25519 public key", k.KeyID)
		}
		pub := ed25519.PublicKey(x)
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
