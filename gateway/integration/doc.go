// Package integration holds Foyer's tests that run whole deployments: several
// gateway nodes (gateway.NewStandalone, each on a store client of its own) on
// one Redis, a Redis Cluster, private redis-servers the tests kill, restart,
// pause and flush (the fault suite, `make chaos`). It has no code of its own
// beyond this file: the tests and their harnesses (harness_*_test.go) use
// only gateway's exported API, each test on a clock of its own, so that most
// run in parallel.
package integration
