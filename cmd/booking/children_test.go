package main

import (
	"fmt"
	"github.com/foyer-dev/foyer/internal/serverproc"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"
)

// The process-level tests run the booking service and Foyer as real child
// processes on loopback, as an operator runs them, so that kill -9 loses
// exactly what a crash loses: everything in memory, nothing committed.

// binDir holds the binaries built for this test run; TestMain removes it.
var binDir string

func TestMain(m *testing.M) {
	dir, err := os.MkdirTemp("", "booking-test-bin-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	binDir = dir
	code := m.Run()
	os.RemoveAll(dir)
	os.Exit(code)
}

// build is one command built at most once per test run, the first time a
// test needs it: a test of the booking service alone does not wait for Foyer
// to compile.
type build struct {
	name, pkg string // pkg is relative to this package
	once      sync.Once
	path      string
	err       error
}

var (
	bookingBuild = &build{name: "booking", pkg: "."}
	foyerBuild   = &build{name: "foyer", pkg: "../foyer"}
)

func (b *build) binary(t *testing.T) string {
	t.Helper()
	if testing.Short() {
		t.Skip("builds and runs the binaries")
	}
	b.once.Do(func() {
		path := filepath.Join(binDir, b.name)
		if out, err := exec.Command("go", "build", "-o", path, b.pkg).CombinedOutput(); err != nil {
			b.err = fmt.Errorf("go build %s: %v\n%s", b.pkg, err, out)
			return
		}
		b.path = path
	})
	if b.err != nil {
		t.Fatal(b.err)
	}
	return b.path
}

func bookingBinary(t *testing.T) string { return bookingBuild.binary(t) }
func foyerBinary(t *testing.T) string   { return foyerBuild.binary(t) }

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

// readyCheck is how a child shows it is up: url answers status within limit.
type readyCheck struct {
	url    string
	status int
	limit  time.Duration
}

// child is a process of a test, restartable with the same arguments, so on
// the same port. Its output goes to one log file across restarts: written by
// the process itself, and still whole after a kill -9.
type child struct {
	t     *testing.T
	name  string
	bin   string
	args  []string
	dir   string
	log   string
	ready readyCheck

	cmd  *exec.Cmd // nil while not running
	done chan struct{}
}

// newChild prepares a process; start runs it. The test's cleanup kills it
// and, if the test failed, logs the end of its output.
func newChild(t *testing.T, name, bin string, ready readyCheck, args ...string) *child {
	t.Helper()
	dir := t.TempDir()
	c := &child{t: t, name: name, bin: bin, args: args, dir: dir, log: filepath.Join(dir, name+".log"), ready: ready}
	t.Cleanup(func() {
		c.kill()
		if t.Failed() {
			t.Logf("%s log:\n%s", name, c.tail(60))
		}
	})
	return c
}

// start runs the process, without waiting for it to be ready.
func (c *child) start() {
	c.t.Helper()
	if c.cmd != nil {
		c.t.Fatalf("%s is already running", c.name)
	}
	out, err := os.OpenFile(c.log, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o600)
	if err != nil {
		c.t.Fatal(err)
	}
	// The child has its own copy of the file once started.
	defer out.Close()
	cmd := exec.Command(c.bin, c.args...)
	cmd.Stdout, cmd.Stderr = out, out
	cmd.Dir = c.dir
	// Only what the process needs: no DATABASE_URL or BOOKING_* of the
	// caller's leaking in behind the flags.
	cmd.Env = []string{"HOME=" + c.dir, "XDG_DATA_HOME=" + c.dir, "XDG_CONFIG_HOME=" + c.dir, "PATH=" + os.Getenv("PATH")}
	dieWithParent(cmd)
	if err := cmd.Start(); err != nil {
		c.t.Fatalf("starting %s: %v", c.name, err)
	}
	done := make(chan struct{})
	go func() { _ = cmd.Wait(); close(done) }()
	c.cmd, c.done = cmd, done
}

// awaitReady polls the readiness URL until it answers, and reports how long
// that took. The process exiting meanwhile, or the limit passing, fails the
// test.
func (c *child) awaitReady() time.Duration {
	c.t.Helper()
	if c.cmd == nil {
		c.t.Fatalf("%s is not running", c.name)
	}
	start := time.Now()
	deadline := start.Add(c.ready.limit)
	client := &http.Client{Timeout: time.Second}
	for {
		resp, err := client.Get(c.ready.url)
		if err == nil {
			resp.Body.Close()
			if resp.StatusCode == c.ready.status {
				return time.Since(start)
			}
			err = fmt.Errorf("status %d", resp.StatusCode)
		}
		if time.Now().After(deadline) {
			c.t.Fatalf("%s: %s did not answer %d within %s (last: %v)\n%s", c.name, c.ready.url, c.ready.status, c.ready.limit, err, c.tail(30))
		}
		select {
		case <-c.done:
			c.t.Fatalf("%s exited while waiting for %s:\n%s", c.name, c.ready.url, c.tail(30))
		case <-time.After(50 * time.Millisecond):
		}
	}
}

// restart kills the process if it runs, starts it again with the same
// arguments and waits until it is ready; it reports how long the start took.
func (c *child) restart() time.Duration {
	c.t.Helper()
	c.kill()
	began := time.Now()
	c.start()
	c.awaitReady()
	return time.Since(began)
}

// kill ends the process with SIGKILL, as a crash would, and waits until it is
// gone. Killing a child that is not running does nothing.
func (c *child) kill() {
	if c.cmd == nil {
		return
	}
	_ = c.cmd.Process.Kill()
	select {
	case <-c.done:
	case <-time.After(10 * time.Second):
		c.t.Errorf("%s (pid %d) did not die within 10 s of SIGKILL", c.name, c.cmd.Process.Pid)
	}
	c.cmd = nil
}

// output is everything the process wrote, over all its restarts.
func (c *child) output() string {
	data, _ := os.ReadFile(c.log)
	return string(data)
}

// tail is the last lines of output.
func (c *child) tail(lines int) string {
	all := strings.Split(strings.TrimRight(c.output(), "\n"), "\n")
	return strings.Join(all[max(0, len(all)-lines):], "\n")
}
