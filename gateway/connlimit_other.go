//go:build !unix

package gateway

// openFileLimit is unknown where the system has no RLIMIT_NOFILE.
func openFileLimit() (uint64, bool) { return 0, false }
