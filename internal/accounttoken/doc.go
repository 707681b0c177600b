// Package accounttoken verifies the signed token a site's own login issues (a
// JWT), so that a waiting room can keep each account to one place (docs/configuration.md,
// "The account block"). Keys come from a JWKS URL (fetched with a bounded
// timeout, cached, refreshed in the background and at once, at most every
// few seconds, when a token names a key ID it does not know) or from a PEM
// public key. Only asymmetric algorithms are accepted, never "none" nor an
// HMAC one (a public key must never verify a MAC); expiry is required.
//
// It never decides anything about the line: it says which account a token
// names, or why it names none.
package accounttoken
