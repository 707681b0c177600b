// Command testreport reads `go test -json` on standard input and prints what a
// person running `make test` needs: a line per package as it finishes (so a
// long run shows progress), the full output of every failing test, and a
// closing summary that counts passed, failed and skipped tests and names each
// integration test that skipped and what it was missing. A run that ends green
// with skipped integration tests must say so on its last lines, not hide it
// in a verbose log nobody reads.
//
// Integration tests announce a skip with the marker "integration test not
// run:" followed by what is missing (internal/redistest.Missing,
// booking/pgstore/pgtest, the browser test).
//
// It exits non-zero when a test or a build failed, or when the input ended
// without any test having run.
package main
