//go:build unix

package redistest

import "testing"

// Pause freezes the server: clients' dials succeed but nothing is answered
// until Resume, so each call waits out its read timeout, as with a hung host.
func (s *Server) Pause(t testing.TB) {
	t.Helper()
	fatalIf(t, s.s.Pause())
}

// Resume lets a paused server answer again.
func (s *Server) Resume(t testing.TB) {
	t.Helper()
	fatalIf(t, s.s.Resume())
}
