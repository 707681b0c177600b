// Package redistest gives tests real Redis servers: a client of the machine's
// shared server under a key prefix of the test's own, private redis-server
// processes that a test may stop, restart, flush and measure, and a
// three-master Cluster. Tests of several packages use it (the Redis store's,
// the gateway's many-node and failure tests).
//
// Integration tests never skip in CI: Missing fails the test when CI=true and
// skips it loudly otherwise.
//
// It must never be imported by non-test code (guard_test.go checks), never
// stop or flush the shared server, and never delete a key outside the prefix
// it handed out.
package redistest
