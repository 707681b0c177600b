package redisserver

import (
	"context"
	"errors"
	"fmt"
	"github.com/foyer-dev/foyer/internal/serverproc"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/redis/go-redis/v9"
)

// Server is a redis-server process this package started.
type Server struct {
	// Addr is host:port on loopback; Port is its port.
	Addr string
	Port int

	bin    string
	args   []string
	log    string
	cmd    *exec.Cmd
	exited chan struct{} // closed once the current process has been reaped
}

// Options configure Start.
type Options struct {
	// Dir holds the server's files (its log, a Cluster's nodes file). Required.
	Dir string
	// Extra returns more arguments for the server, given its port and a second
	// free port (a Cluster's bus port).
	Extra func(port, bus int) []string
}

// ErrNotInstalled is returned by Start when redis-server is not on PATH.
var ErrNotInstalled = errors.New("redis-server is not installed")

// ReadyTimeout bounds how long Start and Restart wait for the server to answer.
const ReadyTimeout = 5 * time.Second

// Start starts redis-server on a free loopback port and waits until it answers
// PING. A port taken by someone else between finding it and binding it makes
// Start try again with another.
func Start(opts Options) (*Server, error) {
	bin, err := exec.LookPath("redis-server")
	if err != nil {
		return nil, ErrNotInstalled
	}
	if opts.Dir == "" {
		return nil, errors.New("redisserver: Options.Dir is required")
	}
	var lastErr error
	for range 3 {
		ports, err := freePorts(2)
		if err != nil {
			return nil, err
		}
		port := ports[0]
		s := &Server{
			Addr: net.JoinHostPort("127.0.0.1", strconv.Itoa(port)),
			Port: port,
			bin:  bin,
			log:  filepath.Join(opts.Dir, fmt.Sprintf("redis-%d.log", port)),
		}
		s.args = []string{
			"--port", strconv.Itoa(port), "--bind", "127.0.0.1",
			"--dir", opts.Dir, "--save", "", "--appendonly", "no",
			"--logfile", s.log,
		}
		if opts.Extra != nil {
			s.args = append(s.args, opts.Extra(port, ports[1])...)
		}
		if lastErr = s.start(); lastErr == nil {
			return s, nil
		}
	}
	return nil, fmt.Errorf("redisserver: redis-server did not start: %w", lastErr)
}

// Stop kills the server, as a crash would, and waits until it is gone. It may
// be called again, or on a server already stopped.
func (s *Server) Stop() error {
	if s.cmd == nil {
		return nil
	}
	// Killing a process that already exited fails harmlessly; the wait below
	// is what matters.
	_ = s.cmd.Process.Kill()
	select {
	case <-s.exited:
	case <-time.After(ReadyTimeout):
		return fmt.Errorf("redisserver: redis-server pid %d did not exit", s.cmd.Process.Pid)
	}
	s.cmd = nil
	return nil
}

// Restart stops the server if it runs and starts it again on the same port,
// empty: it keeps nothing on disk, so a restart is a loss of all its data.
func (s *Server) Restart() error {
	if err := s.Stop(); err != nil {
		return err
	}
	var err error
	for range 3 {
		if err = s.start(); err == nil {
			return nil
		}
	}
	return fmt.Errorf("redisserver: restarting on %s: %w", s.Addr, err)
}

// start runs the process and waits until it answers. On failure the process
// is gone again.
func (s *Server) start() error {
	cmd := exec.Command(s.bin, s.args...)
	dieWithParent(cmd)
	if err := cmd.Start(); err != nil {
		return err
	}
	exited := make(chan struct{})
	go func() {
		_ = cmd.Wait()
		close(exited)
	}()
	s.cmd, s.exited = cmd, exited
	if err := s.waitReady(); err != nil {
		_ = s.Stop()
		return fmt.Errorf("%w%s", err, s.logTail())
	}
	return nil
}

// waitReady pings the server until it answers, it exits, or ReadyTimeout
// passes.
func (s *Server) waitReady() error {
	c := redis.NewClient(&redis.Options{Addr: s.Addr, MaxRetries: -1, DialTimeout: time.Second})
	defer c.Close()
	deadline := time.Now().Add(ReadyTimeout)
	for {
		ctx, cancel := context.WithTimeout(context.Background(), 500*time.Millisecond)
		err := c.Ping(ctx).Err()
		cancel()
		if err == nil {
			return nil
		}
		select {
		case <-s.exited:
			return errors.New("redis-server exited")
		default:
		}
		if time.Now().After(deadline) {
			return err
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// logTail is the end of the server's log, to explain a failed start.
func (s *Server) logTail() string {
	b, err := os.ReadFile(s.log)
	if err != nil || len(b) == 0 {
		return ""
	}
	lines := strings.Split(strings.TrimSpace(string(b)), "\n")
	return "\nredis-server log:\n" + strings.Join(lines[max(0, len(lines)-5):], "\n")
}

// freePorts finds n distinct free ports, below the range the kernel gives
// outgoing connections (serverproc.FreePort): a server restarted on its port
// after a kill must find it free, not taken by some client's socket.
func freePorts(n int) ([]int, error) {
	var ports []int
	for len(ports) < n {
		p, err := serverproc.FreePort()
		if err != nil {
			return nil, err
		}
		if !slices.Contains(ports, p) {
			ports = append(ports, p)
		}
	}
	return ports, nil
}
