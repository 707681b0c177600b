// Package pgtest gives each test a fresh PostgreSQL database on the machine's
// server, dropped when the test ends, so integration tests can run in
// parallel without seeing each other's rows. It must never be imported by
// non-test code, and never touches any database it did not create.
package pgtest
