package pass

import (
	"crypto/ed25519"
	"crypto/rand"

	"github.com/golang-jwt/jwt/v5"
)

// Signer issues passes with an Ed25519 key. The gateway's signing key
// (waitingroom.SigningKey) holds one; the booking service's standalone demo
// makes its own.
type Signer struct {
	private ed25519.PrivateKey
	public  ed25519.PublicKey
	kid     string
}

// NewSigner wraps an Ed25519 private key.
func NewSigner(priv ed25519.PrivateKey) *Signer {
	pub := priv.Public().(ed25519.PublicKey)
	return &Signer{private: priv, public: pub, kid: Thumbprint(pub)}
}

// GenerateSigner makes a signer with a fresh random key.
func GenerateSigner() (*Signer, error) {
	_, priv, err := ed25519.GenerateKey(rand.Reader)
	if err != nil {
		return nil, err
	}
	return NewSigner(priv), nil
}

// KeyID is the key's RFC 7638 thumbprint, the JWT "kid".
func (s *Signer) KeyID() string { return s.kid }

// Public returns the verifying half.
func (s *Signer) Public() ed25519.PublicKey { return s.public }

// Private returns the private key.
func (s *Signer) Private() ed25519.PrivateKey { return s.private }

// JWK returns the public key as published in the key set.
func (s *Signer) JWK() JWK { return PublicJWK(s.public) }

// Sign issues c as a pass; issuer becomes the "iss" claim. A pass without an
// ID gets a random one.
func (s *Signer) Sign(c Claims, issuer string) (string, error) {
	if c.ID == "" {
		c.ID = NewID()
	}
	claims := jwtClaims{
		RegisteredClaims: jwt.RegisteredClaims{
			Issuer:    issuer,
			Subject:   c.Subject,
			Audience:  jwt.ClaimStrings{c.Room},
			ExpiresAt: jwt.NewNumericDate(c.ExpiresAt),
			NotBefore: jwt.NewNumericDate(c.IssuedAt),
			IssuedAt:  jwt.NewNumericDate(c.IssuedAt),
			ID:        c.ID,
		},
		OrderKey: c.OrderKey,
		Waitlist: c.Waitlist,
	}
	tok := jwt.NewWithClaims(jwt.SigningMethodEdDSA, claims)
	tok.Header["kid"] = s.kid
	return tok.SignedString(s.private)
}
