package main

import (
	"bytes"
	"errors"
	"net/http"
	"net/http/httptest"
	"os/exec"
	"strings"
	"sync"
	"testing"
)

// TestWaitingRoomCommand runs the built binary's `waiting-room` command
// against a stand-in admin endpoint: it reaches the address given, prints what
// it is sent, and exits non-zero with the API's message on an error.
func TestWaitingRoomCommand(t *testing.T) {
	bin := foyer(t)
	var (
		mu  sync.Mutex
		got []string
	)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		got = append(got, r.Method+" "+r.URL.Path)
		mu.Unlock()
		w.Header().Set("Content-Type", "application/json")
		if r.URL.Path != "/waiting-room/concert" {
			w.WriteHeader(http.StatusNotFound)
			_, _ = w.Write([]byte(`{"error":"unknown_room","message":"no live waiting room \"nope\" on this node"}`))
			return
		}
		_, _ = w.Write([]byte(`{"room":"concert","phase":"live","admitting":false,"store_healthy":true,
			"settings":{"new_users_per_minute":600,"total_active_users":100,"session_duration":"10m","queueing_method":"fifo","paused":true},
			"overrides":{"paused":true},"overrides_version":2,"counters":{"seq":7,"serving":3}}`))
	}))
	defer srv.Close()
	addr := strings.TrimPrefix(srv.URL, "http://")

	run := func(args ...string) (string, string, error) {
		var stdout, stderr bytes.Buffer
		cmd := exec.Command(bin, append([]string{"waiting-room"}, args...)...)
		cmd.Stdout, cmd.Stderr = &stdout, &stderr
		err := cmd.Run()
		return stdout.String(), stderr.String(), err
	}

	out, errOut, err := run("status", "concert", "--address", addr)
	if err != nil || !strings.Contains(out, "live, paused") || !strings.Contains(out, "v2: paused=true") {
		t.Errorf("status: %v\n%s%s", err, out, errOut)
	}
	out, errOut, err = run("set", "concert", "new_users_per_minute=600", "--address", addr)
	if err != nil || !strings.Contains(out, `"new_users_per_minute": 600`) {
		t.Errorf("set: %v\n%s%s", err, out, errOut)
	}
	_, errOut, err = run("pause", "nope", "--address", addr)
	var exit *exec.ExitError
	if !errors.As(err, &exit) || exit.ExitCode() == 0 || !strings.Contains(errOut, `no live waiting room "nope"`) {
		t.Errorf("pause of an unknown room: %v, stderr %q; want a non-zero exit with the API's message", err, errOut)
	}
	want := []string{"GET /waiting-room/concert", "PATCH /waiting-room/concert", "POST /waiting-room/nope/pause"}
	mu.Lock()
	defer mu.Unlock()
	if strings.Join(got, ",") != strings.Join(want, ",") {
		t.Errorf("requests %v, want %v", got, want)
	}

	mods, err := exec.Command(bin, "list-modules").CombinedOutput()
	if err != nil || !strings.Contains(string(mods), "admin.api.waiting_room") {
		t.Errorf("list-modules lacks admin.api.waiting_room: %v", err)
	}
}
