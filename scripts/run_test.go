// Package scripts holds the tests of the shell scripts beside it.
package scripts

import (
	"bytes"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"
)

// runScript runs run.sh with the ports and environment given, with binaries
// from bin and logs in a temporary folder, for at most 20 s; it returns its
// exit code and what it printed.
func runScript(t *testing.T, bin string, env ...string) (int, string) {
	t.Helper()
	cmd := exec.Command("bash", "run.sh")
	cmd.Env = append(os.Environ(), append([]string{"BIN=" + bin, "RUN_DIR=" + t.TempDir()}, env...)...)
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	select {
	case <-done:
	case <-time.After(20 * time.Second):
		_ = cmd.Process.Kill()
		<-done
		t.Fatalf("run.sh still running after 20 s:\n%s", out.String())
	}
	return cmd.ProcessState.ExitCode(), out.String()
}

// freePorts are n ports nothing listens on now.
func freePorts(t *testing.T, n int) []string {
	t.Helper()
	var ports []string
	for range n {
		l, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		ports = append(ports, strconv.Itoa(l.Addr().(*net.TCPAddr).Port))
		defer l.Close()
	}
	return ports
}

// TestRunRefusesABusyPort holds the booking port, as a first make run does:
// run.sh must start nothing, name the port and the variable that moves it,
// and exit non-zero, rather than say the stack is running.
func TestRunRefusesABusyPort(t *testing.T) {
	busy, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer busy.Close()
	port := strconv.Itoa(busy.Addr().(*net.TCPAddr).Port)
	p := freePorts(t, 3)
	// The binaries are never reached: the check comes first.
	code, out := runScript(t, t.TempDir(), "FOYER_PORT="+p[0], "FOYER_ADMIN_PORT="+p[1], "BOOKING_PORT="+port, "BOOKING_OPS_PORT="+p[2])
	if code == 0 || strings.Contains(out, "Foyer is running") {
		t.Fatalf("run.sh with BOOKING_PORT busy: exit %d\n%s", code, out)
	}
	for _, want := range []string{"Port " + port + " (BOOKING_PORT) is already in use", "make run BOOKING_PORT="} {
		if !strings.Contains(out, want) {
			t.Errorf("run.sh's message lacks %q:\n%s", want, out)
		}
	}
}

// TestRunShowsWhyAServerFailed starts a Foyer that fails as it starts: run.sh
// must print the end of its log, where the reason is, and exit non-zero at
// once, rather than wait out its readiness check or say the stack is running.
func TestRunShowsWhyAServerFailed(t *testing.T) {
	bin := t.TempDir()
	fake := "#!/bin/sh\necho 'Error: loading initial config: admin endpoint: listen tcp: address already in use' >&2\nexit 1\n"
	if err := os.WriteFile(filepath.Join(bin, "foyer"), []byte(fake), 0o755); err != nil {
		t.Fatal(err)
	}
	p := freePorts(t, 4)
	start := time.Now()
	code, out := runScript(t, bin, "FOYER_PORT="+p[0], "FOYER_ADMIN_PORT="+p[1], "BOOKING_PORT="+p[2], "BOOKING_OPS_PORT="+p[3])
	if code == 0 || strings.Contains(out, "Foyer is running") {
		t.Fatalf("run.sh with a Foyer that fails: exit %d\n%s", code, out)
	}
	if !strings.Contains(out, "address already in use") || !strings.Contains(out, "Foyer exited as it started") {
		t.Errorf("run.sh does not show why Foyer failed:\n%s", out)
	}
	if took := time.Since(start); took > 5*time.Second {
		t.Errorf("run.sh took %v to report a server that had exited", took)
	}
}
