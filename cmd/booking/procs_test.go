package main

import (
	"context"
	"encoding/json"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"
)

// Process-level tests: the booking service and Foyer built as binaries and
// run as child processes on loopback, as an operator runs them.

var (
	binOnce     sync.Once
	binDir      string
	buildOutput []byte
	binErr      error
)

// binaries builds cmd/booking and cmd/foyer once per test run and returns
// their paths.
func binaries(t *testing.T) (bookingBin, foyerBin string) {
	t.Helper()
	if testing.Short() {
		t.Skip("builds and runs the binaries")
	}
	binOnce.Do(func() {
		if binDir, binErr = os.MkdirTemp("", "booking-test-bin-"); binErr != nil {
			return
		}
		for _, b := range []struct{ out, pkg string }{{"booking", "."}, {"foyer", "../foyer"}} {
			cmd := exec.Command("go", "build", "-o", filepath.Join(binDir, b.out), b.pkg)
			if buildOutput, binErr = cmd.CombinedOutput(); binErr != nil {
				return
			}
		}
	})
	if binErr != nil {
		t.Fatalf("building the binaries: %v\n%s", binErr, buildOutput)
	}
	return filepath.Join(binDir, "booking"), filepath.Join(binDir, "foyer")
}

// freePort asks the kernel for an unused loopback port.
func freePort(t *testing.T) int {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port
}

// proc is a child process with its output in a file.
type child struct {
	t    *testing.T
	name string
	cmd  *exec.Cmd
	log  string
	done chan struct{}
}

func startChild(t *testing.T, name, bin string, env []string, args ...string) *child {
	t.Helper()
	dir := t.TempDir()
	p := &child{t: t, name: name, log: filepath.Join(dir, name+".log"), done: make(chan struct{})}
	out, err := os.Create(p.log)
	if err != nil {
		t.Fatal(err)
	}
	p.cmd = exec.Command(bin, args...)
	p.cmd.Stdout, p.cmd.Stderr = out, out
	p.cmd.Dir = dir
	// Only what the process needs: no DATABASE_URL or BOOKING_* of the
	// caller's leaking in behind the flags.
	p.cmd.Env = append([]string{"HOME=" + dir, "XDG_DATA_HOME=" + dir, "XDG_CONFIG_HOME=" + dir, "PATH=" + os.Getenv("PATH")}, env...)
	dieWithParent(p.cmd)
	if err := p.cmd.Start(); err != nil {
		t.Fatalf("starting %s: %v", name, err)
	}
	go func() { _ = p.cmd.Wait(); out.Close(); close(p.done) }()
	t.Cleanup(func() {
		p.kill()
		if t.Failed() {
			t.Logf("%s log:\n%s", name, p.tail(40))
		}
	})
	return p
}

// kill ends the process with SIGKILL, as a crash would, and waits for it.
func (p *child) kill() {
	if p.cmd.Process != nil {
		_ = p.cmd.Process.Kill()
	}
	select {
	case <-p.done:
	case <-time.After(10 * time.Second):
		p.t.Errorf("%s did not die within 10 s of SIGKILL", p.name)
	}
}

func (p *child) tail(lines int) string {
	data, _ := os.ReadFile(p.log)
	all := strings.Split(strings.TrimRight(string(data), "\n"), "\n")
	return strings.Join(all[max(0, len(all)-lines):], "\n")
}

// waitFor polls url until it answers status, for at most d.
func (p *child) waitFor(url string, status int, d time.Duration) {
	p.t.Helper()
	deadline := time.Now().Add(d)
	c := &http.Client{Timeout: time.Second}
	for {
		resp, err := c.Get(url)
		if err == nil {
			resp.Body.Close()
			if resp.StatusCode == status {
				return
			}
		}
		select {
		case <-p.done:
			p.t.Fatalf("%s exited while waiting for %s:\n%s", p.name, url, p.tail(30))
		default:
		}
		if time.Now().After(deadline) {
			p.t.Fatalf("%s: %s did not answer %d within %s (last: %v)\n%s", p.name, url, status, d, err, p.tail(30))
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// bookingProc is a booking service child process.
type bookingChild struct {
	*child
	url string
}

// startBooking runs the booking binary on port (0: a free one) with args,
// and waits until it is live.
func runBooking(t *testing.T, name string, port int, args ...string) *bookingChild {
	t.Helper()
	bin, _ := binaries(t)
	if port == 0 {
		port = freePort(t)
	}
	addr := fmt.Sprintf("127.0.0.1:%d", port)
	p := startChild(t, name, bin, nil, append([]string{"-addr", addr}, args...)...)
	b := &bookingChild{child: p, url: "http://" + addr}
	p.waitFor(b.url+"/healthz", http.StatusOK, 30*time.Second)
	return b
}

// startFoyer runs Foyer with a Caddyfile and waits until base answers the
// room's key set.
func startFoyer(t *testing.T, name, caddyfile, base string) *child {
	t.Helper()
	_, bin := binaries(t)
	path := filepath.Join(t.TempDir(), "Caddyfile")
	if err := os.WriteFile(path, []byte(caddyfile), 0o600); err != nil {
		t.Fatal(err)
	}
	p := startChild(t, name, bin, nil, "run", "--config", path, "--adapter", "caddyfile")
	p.waitFor(base+"/_waiting-room/jwks.json", http.StatusOK, 30*time.Second)
	return p
}

// checkInvariants asks a booking process's invariant checker: sold + held
// within capacity and one ticket per seat.
func checkInvariants(t *testing.T, bookingURL, adminToken string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	req, _ := http.NewRequestWithContext(ctx, "GET", bookingURL+"/api/admin/invariants", nil)
	req.Header.Set("Authorization", "Bearer "+adminToken)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var rep struct {
		OK     bool `json:"ok"`
		Report struct {
			Violations []string `json:"violations"`
		} `json:"report"`
	}
	if err := json.NewDecoder(resp.Body).Decode(&rep); err != nil {
		t.Fatalf("invariants: %d %v", resp.StatusCode, err)
	}
	if !rep.OK || resp.StatusCode != http.StatusOK {
		t.Fatalf("invariants violated (%d): %v", resp.StatusCode, rep.Report.Violations)
	}
}
