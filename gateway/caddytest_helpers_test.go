package gateway

import (
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
		resp, err := http.Post("http://localhost:2999/load", "application/json",
			strings.NewReader(`{"admin":{"listen":"localhost:2999"}}`))
		if err != nil {
			t.Logf("unloading the test config: %v", err)
			return
		}
		resp.Body.Close()
	})
	return tester
}
