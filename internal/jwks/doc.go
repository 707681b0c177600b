// Package jwks reads JSON Web Key Sets (RFC 7517) and keeps one fetched from
// a URL or a file fresh. It is the one JWKS implementation of the project:
// the admission pass's verifier (waitingroom/pass, what the booking service
// and any origin use) and the account block's login tokens
// (internal/accounttoken) both go through it.
//
// Keys are decoded by github.com/go-jose/go-jose/v4, which checks that points
// lie on their curve and sizes are right; this package only chooses which
// keys may verify a signature (public, asymmetric, meant for signing) and
// when to fetch the set again.
package jwks
