package browser

import (
	"fmt"
	"io"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"testing"

	"github.com/caddyserver/caddy/v2/caddytest"

	// The waiting_room and waiting_room_dashboard directives.
	_ "github.com/foyer-dev/foyer/gateway"
	"github.com/foyer-dev/foyer/internal/serverproc"
)

// The tests that need Caddy itself (the dashboard, which shows the rooms of
// its process; the embedded room, over Caddy's own HTTPS) share the
// in-process Caddy of caddytest, on ports picked for this test process, so
// that two runs on one machine do not answer each other's requests. Sites are
// written with the nominal port 9080, which caddyConfig maps to sitePort.
var (
	adminPort = freePort()
	sitePort  = freePort()

	adminAddr = "localhost:" + strconv.Itoa(adminPort)
	adminBase = "http://" + adminAddr
	base      = "http://localhost:" + strconv.Itoa(sitePort)
)

func init() { caddytest.Default.AdminPort = adminPort }

// caddyInUse is held by the test whose config the process's one Caddy runs,
// from newCaddy to the test's end. A test takes it before its browser, so
// that a test holding a browser never waits for Caddy.
var caddyInUse sync.Mutex

// freePort is a port no listener holds (serverproc.FreePort).
func freePort() int {
	port, err := serverproc.FreePort()
	if err != nil {
		panic(err)
	}
	return port
}

// newCaddy waits until no other test of the package runs Caddy, loads config
// into the in-process Caddy, and unloads every site when the test ends, so
// that the rooms it made are stopped before the next test loads its own.
func newCaddy(t *testing.T, config string) {
	t.Helper()
	caddyInUse.Lock()
	t.Cleanup(caddyInUse.Unlock)
	tester := caddytest.NewTester(t)
	tester.InitServer(config, "caddyfile")
	t.Cleanup(func() {
		resp, err := http.Post(adminBase+"/load", "application/json",
			strings.NewReader(fmt.Sprintf(`{"admin":{"listen":%q}}`, adminAddr)))
		if err != nil {
			t.Logf("unloading the test config: %v", err)
			return
		}
		_ = resp.Body.Close()
	})
}

// caddyConfig is a Caddyfile for the in-process Caddy: the global options
// every test here needs (the admin endpoint, this process's ports, no trust
// store, no grace on reload, storage in the given directory) followed by the
// test's sites, their nominal port 9080 mapped to this process's.
func caddyConfig(storage, sites string) string {
	return fmt.Sprintf(`
	{
		skip_install_trust
		admin %s
		http_port %d
		https_port %d
		grace_period 1ns
		storage file_system %s
	}
	`, adminAddr, sitePort, freePort(), storage) + strings.ReplaceAll(sites, ":9080", ":"+strconv.Itoa(sitePort))
}

// adminCall sends one request to Caddy's admin endpoint and returns the
// answer's status and body.
func adminCall(t *testing.T, method, path, body string) (int, string) {
	t.Helper()
	req, err := http.NewRequest(method, adminBase+path, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b)
}
