//go:build unix

package redisserver

import (
	"errors"
	"syscall"
)

// Pause freezes the server (SIGSTOP), as a hung host or a network partition
// would look to its clients: connections still open, since the kernel
// accepts them, but nothing is ever answered, so every call waits out its
// read timeout. Stop still kills a paused server.
func (s *Server) Pause() error { return s.signal(syscall.SIGSTOP) }

// Resume lets a paused server run again (SIGCONT).
func (s *Server) Resume() error { return s.signal(syscall.SIGCONT) }

func (s *Server) signal(sig syscall.Signal) error {
	if s.cmd == nil {
		return errors.New("redisserver: the server is not running")
	}
	return s.cmd.Process.Signal(sig)
}
