package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
)

var (
	buildOnce sync.Once
	binary    string
	buildErr  error
)

// foyer builds this command once per test run and returns its path.
func foyer(t *testing.T) string {
	t.Helper()
	if testing.Short() {
		t.Skip("builds the binary")
	}
	buildOnce.Do(func() {
		dir, err := os.MkdirTemp("", "foyer-bin-")
		if err != nil {
			buildErr = err
			return
		}
		binary = filepath.Join(dir, "foyer")
		out, err := exec.Command("go", "build", "-o", binary, ".").CombinedOutput()
		if err != nil {
			buildErr = err
			t.Logf("%s", out)
		}
	})
	if buildErr != nil {
		t.Fatalf("building foyer: %v", buildErr)
	}
	return binary
}

func TestListModules(t *testing.T) {
	out, err := exec.Command(foyer(t), "list-modules").CombinedOutput()
	if err != nil {
		t.Fatalf("list-modules: %v\n%s", err, out)
	}
	for _, want := range []string{"http.handlers.waiting_room", "http.handlers.reverse_proxy"} {
		if !strings.Contains(string(out), want) {
			t.Errorf("list-modules lacks %s", want)
		}
	}
}

func TestValidateNamesTheSetting(t *testing.T) {
	cases := map[string]string{
		"total_active_users":    "total_active_users 0",
		"session_duration":      "session_duration 5s",
		"event_end":             "event_start 2026-12-01T10:00:00Z\n\t\tevent_end 2026-12-01T09:00:00Z",
		"queueing_method":       "queueing_method lifo",
		"prequeue_start":        "prequeue_start yesterday",
		"signing_key":           "signing_key /nonexistent/key.pem",
		"previous_signing_keys": "previous_signing_keys /nonexistent/old.pem",
		"on_store_failure":      "on_store_failure sometimes",
		"unrecognized":          "colour blue",
	}
	for setting, line := range cases {
		t.Run(setting, func(t *testing.T) {
			cfg := filepath.Join(t.TempDir(), "Caddyfile")
			src := "{\n\tadmin off\n\tstorage file_system " + t.TempDir() + "\n}\n:0 {\n\twaiting_room {\n\t\troom r\n\t\t" + line + "\n\t}\n\trespond ok\n}\n"
			if err := os.WriteFile(cfg, []byte(src), 0o600); err != nil {
				t.Fatal(err)
			}
			out, err := exec.Command(foyer(t), "validate", "--config", cfg, "--adapter", "caddyfile").CombinedOutput()
			if err == nil {
				t.Fatalf("validate accepted:\n%s", src)
			}
			if !strings.Contains(string(out), setting) {
				t.Fatalf("validate's error does not name %s:\n%s", setting, out)
			}
		})
	}
	t.Run("valid", func(t *testing.T) {
		cfg := filepath.Join("..", "..", "Caddyfile")
		out, err := exec.Command(foyer(t), "validate", "--config", cfg, "--adapter", "caddyfile").CombinedOutput()
		if err != nil {
			t.Fatalf("the repository's Caddyfile does not validate: %v\n%s", err, out)
		}
	})
}
