package main

import (
	"bytes"
	"github.com/foyer-dev/foyer/internal/serverproc"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"sync"
	"testing"
	"time"
)

// node is a foyer process the test started: a real gateway that the test can
// kill as a crash would.
type node struct {
	t      *testing.T
	cmd    *exec.Cmd
	out    *lockedBuffer
	exited chan struct{}
}

type lockedBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *lockedBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *lockedBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

// startNode runs `foyer run` with the Caddyfile text in dir (which also holds
// Caddy's home, so nothing outside the test is touched) and waits, up to a
// bounded deadline, until ready answers 200.
func startNode(t *testing.T, dir, caddyfile, ready string) *node {
	t.Helper()
	cfg := filepath.Join(dir, "Caddyfile")
	if err := os.WriteFile(cfg, []byte(caddyfile), 0o600); err != nil {
		t.Fatal(err)
	}
	n := &node{t: t, out: &lockedBuffer{}, exited: make(chan struct{})}
	n.cmd = exec.Command(foyer(t), "run", "--config", cfg, "--adapter", "caddyfile")
	n.cmd.Env = append(os.Environ(), "HOME="+dir, "XDG_DATA_HOME="+dir, "XDG_CONFIG_HOME="+dir)
	n.cmd.Stdout, n.cmd.Stderr = n.out, n.out
	dieWithParent(n.cmd)
	if err := n.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	go func() {
		_ = n.cmd.Wait()
		close(n.exited)
	}()
	t.Cleanup(n.kill)
	deadline := time.Now().Add(20 * time.Second)
	for {
		resp, err := http.Get(ready)
		if err == nil {
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				return n
			}
		}
		select {
		case <-n.exited:
			t.Fatalf("foyer exited before it was ready:\n%s", n.out.String())
		default:
		}
		if time.Now().After(deadline) {
			t.Fatalf("foyer not ready at %s after 20s (%v):\n%s", ready, err, n.out.String())
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// kill sends SIGKILL, as a crash would, and waits for the process to go.
func (n *node) kill() {
	select {
	case <-n.exited:
		return
	default:
	}
	_ = n.cmd.Process.Kill()
	select {
	case <-n.exited:
	case <-time.After(10 * time.Second):
		n.t.Errorf("foyer did not exit 10s after SIGKILL")
	}
}

// freePort is a port no listener holds, below the range the kernel gives
// outgoing connections (serverproc.FreePort).
func freePort(t *testing.T) int {
	t.Helper()
	port, err := serverproc.FreePort()
	if err != nil {
		t.Fatal(err)
	}
	return port
}
