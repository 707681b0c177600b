package accounttoken

import (
	"crypto"
	"crypto/ecdsa"
	"crypto/ed25519"
	"crypto/elliptic"
	"crypto/rsa"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"math/big"
)

// jwk is one key of a JWKS (RFC 7517), as far as verification needs it.
type jwk struct {
	Kty string `json:"kty"`
	Kid string `json:"kid"`
	Use string `json:"use"`
	Alg string `json:"alg"`
	Crv string `json:"crv"`
	N   string `json:"n"`
	E   string `json:"e"`
	X   string `json:"x"`
	Y   string `json:"y"`
}

// keySet is a parsed JWKS: keys by kid, each with the algorithm it is for
// ("" when the JWK does not say).
type keySet struct {
	byKid map[string]publicKey
	all   []publicKey
}

type publicKey struct {
	kid string
	alg string
	key crypto.PublicKey
}

// parseJWKS reads a JWKS. Keys it cannot use (symmetric, encryption keys,
// unknown types or curves) are skipped, so one odd key does not take the
// others down; a set with no usable key is an error.
func parseJWKS(data []byte) (*keySet, error) {
	var doc struct {
		Keys []jwk `json:"keys"`
	}
	if err := json.Unmarshal(data, &doc); err != nil {
		return nil, fmt.Errorf("malformed JWKS: %w", err)
	}
	ks := &keySet{byKid: make(map[string]publicKey)}
	for _, k := range doc.Keys {
		if k.Use != "" && k.Use != "sig" {
			continue
		}
		pub, err := k.publicKey()
		if err != nil {
			continue
		}
		pk := publicKey{kid: k.Kid, alg: k.Alg, key: pub}
		ks.all = append(ks.all, pk)
		if k.Kid != "" {
			ks.byKid[k.Kid] = pk
		}
	}
	if len(ks.all) == 0 {
		return nil, errors.New("JWKS holds no usable signing key")
	}
	return ks, nil
}

func (k jwk) publicKey() (crypto.PublicKey, error) {
	switch k.Kty {
	case "RSA":
		n, err1 := b64int(k.N)
		e, err2 := b64int(k.E)
		if err1 != nil || err2 != nil || !e.IsInt64() || e.Int64() < 3 || n.BitLen() < 2048 {
			return nil, errors.New("bad RSA key")
		}
		return &rsa.PublicKey{N: n, E: int(e.Int64())}, nil
	case "EC":
		var c elliptic.Curve
		switch k.Crv {
		case "P-256":
			c = elliptic.P256()
		case "P-384":
			c = elliptic.P384()
		case "P-521":
			c = elliptic.P521()
		default:
			return nil, errors.New("unknown curve")
		}
		x, err1 := b64int(k.X)
		y, err2 := b64int(k.Y)
		if err1 != nil || err2 != nil {
			return nil, errors.New("bad EC key")
		}
		// Build the uncompressed point and let ecdh-grade parsing check it
		// lies on the curve.
		size := (c.Params().BitSize + 7) / 8
		if len(x.Bytes()) > size || len(y.Bytes()) > size {
			return nil, errors.New("bad EC key")
		}
		pt := make([]byte, 1+2*size)
		pt[0] = 4
		x.FillBytes(pt[1 : 1+size])
		y.FillBytes(pt[1+size:])
		pub, err := ecdsa.ParseUncompressedPublicKey(c, pt)
		if err != nil {
			return nil, err
		}
		return pub, nil
	case "OKP":
		if k.Crv != "Ed25519" {
			return nil, errors.New("unknown curve")
		}
		x, err := base64.RawURLEncoding.DecodeString(k.X)
		if err != nil || len(x) != ed25519.PublicKeySize {
			return nil, errors.New("bad Ed25519 key")
		}
		return ed25519.PublicKey(x), nil
	}
	return nil, errors.New("unsupported key type")
}

func b64int(s string) (*big.Int, error) {
	b, err := base64.RawURLEncoding.DecodeString(s)
	if err != nil || len(b) == 0 {
		return nil, errors.New("bad base64url integer")
	}
	return new(big.Int).SetBytes(b), nil
}
