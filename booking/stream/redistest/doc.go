// Package redistest connects tests to the machine's Redis under a key prefix
// of their own, deleted when the test ends, so tests can run in parallel. It
// must never be imported by non-test code, and never deletes keys outside the
// prefix it made.
package redistest
