package redistest

import (
	"errors"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/foyer-dev/foyer/internal/redisserver"
)

// Server is a private redis-server a test started on a loopback port, with its
// files in the test's temporary directory. Tests that must stop, restart,
// flush or measure a server use one of these, never the shared one.
type Server struct {
	// Addr is host:port on loopback; Port is its port.
	Addr string
	Port int
	s    *redisserver.Server
}

// StartServer starts a private server, stopped when the test ends, and killed
// by the kernel if the test binary dies first. extra, if not nil, adds
// arguments given the server's port and a free bus port. Without redis-server
// on the machine it calls Missing.
func StartServer(t testing.TB, extra func(port, bus int) []string) *Server {
	t.Helper()
	s, err := redisserver.Start(redisserver.Options{Dir: t.TempDir(), Extra: extra})
	if errors.Is(err, redisserver.ErrNotInstalled) {
		Missing(t, "redis-server is not installed")
	}
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := s.Stop(); err != nil {
			t.Error(err)
		}
	})
	return &Server{Addr: s.Addr, Port: s.Port, s: s}
}

// fatalIf ends the test on a control command of the server that failed.
func fatalIf(t testing.TB, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}

// Dial returns a dialer of new clients of s, one a gateway node. They give up
// on a dead server after one dial, not go-redis's five a hundred milliseconds
// apart, so an outage costs the test little time; what a node does with the
// error is the same.
func (s *Server) Dial() func() redis.UniversalClient {
	return func() redis.UniversalClient {
		return redis.NewClient(&redis.Options{
			Addr: s.Addr, MaxRetries: 1, DialerRetries: 1,
			DialTimeout: time.Second, ReadTimeout: 2 * time.Second, WriteTimeout: 2 * time.Second,
		})
	}
}

// Stop kills the server, as a crash would. Clients see connection errors until
// Restart.
func (s *Server) Stop(t testing.TB) {
	t.Helper()
	fatalIf(t, s.s.Stop())
}

// Restart starts the server again on the same port, empty: everything it held
// is lost, as after a restart without persistence.
func (s *Server) Restart(t testing.TB) {
	t.Helper()
	fatalIf(t, s.s.Restart())
}
