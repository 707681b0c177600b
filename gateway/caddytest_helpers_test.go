package gateway

import (
	"fmt"
	"net/http"
	"strings"
	"testing"

	"github.com/caddyserver/caddy/v2/caddytest"
)

// newCaddy starts (or reuses) the in-process Caddy of caddytest with config,
// and unloads every site when the test ends, so that the rooms it made are
// stopped and a later test (or a repeat with -count) starts from empty rooms.
func newCaddy(t *testing.T, config string) *caddytest.Tester {
	t.Helper()
	tester := caddytest.NewTester(t)
	tester.InitServer(config, "caddyfile")
	t.Cleanup(func() {
		if err := unloadCaddy(); err != nil {
			t.Logf("unloading the test config: %v", err)
		}
	})
	return tester
}

// unloadCaddy loads a config with nothing but the admin endpoint: every room
// stops and forgets what it held in memory, as in a restart of the process
// (Caddy storage, a directory, outlives it as a disk would).
func unloadCaddy() error {
	resp, err := http.Post("http://localhost:2999/load", "application/json",
		strings.NewReader(`{"admin":{"listen":"localhost:2999"}}`))
	if err != nil {
		return err
	}
	return resp.Body.Close()
}

// caddyConfig is a Caddyfile for the in-process Caddy: the global options
// every test here needs (the admin endpoint and ports caddytest uses, no
// trust store, no grace on reload, storage in the given directory) followed
// by the test's sites.
func caddyConfig(storage, sites string) string {
	return fmt.Sprintf(`
	{
		skip_install_trust
		admin localhost:2999
		http_port 9080
		https_port 9443
		grace_period 1ns
		storage file_system %s
	}
	`, storage) + sites
}
