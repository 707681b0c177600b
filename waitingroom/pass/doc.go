// Package pass is the admission pass on its own: its claims, the signer the
// gateway issues it with, the verifier an origin checks it with, the JWKS
// document the gateway publishes at jwks.json, and a cache that keeps that
// document fetched (docs/endpoints.md, "Tickets and passes").
//
// It imports nothing of the waiting room's admission (the package
// waitingroom imports it), so an origin written in Go, such as the booking
// service, trusts the gateway with this package alone.
//
// The wire format is fixed: an EdDSA JWT whose header carries the key's
// RFC 7638 thumbprint as "kid", with the claims iss, sub, aud (one room), exp,
// nbf, iat, jti and order_key; and a key set whose keys read
// {"kty","crv","x","kid","alg","use"} in that order.
package pass
