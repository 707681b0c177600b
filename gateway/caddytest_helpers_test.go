package gateway

import (
	"context"
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"testing"

	"github.com/caddyserver/caddy/v2/caddytest"

	"github.com/foyer-dev/foyer/internal/serverproc"
)

// The in-process Caddy listens on ports picked for this test process, so that
// two runs of the suite on one machine (two checkouts, or a run beside a
// developer's own) do not answer each other's requests. Sites in the tests are
// written with the nominal ports 9080 (the site under test) and 9081 (its
// origin); caddyConfig maps them to this process's ports.
var (
	adminPort  = freePort()
	sitePort   = freePort()
	originPort = freePort()

	adminAddr = "localhost:" + strconv.Itoa(adminPort)
	adminBase = "http://" + adminAddr
	base      = "http://localhost:" + strconv.Itoa(sitePort)
)

func init() { caddytest.Default.AdminPort = adminPort }

// freePort is a port no listener holds, below the range the kernel gives
// outgoing connections: every test reloads Caddy, which binds the site's port
// again, and a port of that range could meanwhile be the local end of one of
// the thousands of connections the tests open (serverproc.FreePort).
func freePort() int {
	port, err := serverproc.FreePort()
	if err != nil {
		panic(err)
	}
	return port
}

// newCaddy starts (or reuses) the in-process Caddy of caddytest with config,
// and unloads every site when the test ends, so that the rooms it made are
// stopped and a later test (or a repeat with -count) starts from empty rooms.
func newCaddy(t *testing.T, config string) *caddytest.Tester {
	t.Helper()
	tester := caddytest.NewTester(t)
	tester.InitServer(config, "caddyfile")
	settleRooms()
	t.Cleanup(func() {
		if err := unloadCaddy(); err != nil {
			t.Logf("unloading the test config: %v", err)
		}
	})
	return tester
}

// settleRooms takes, on a test clock, every live room's controller step of
// the clock's current second now. Left to the rooms' loops, whose first tick
// comes half a second after the start, it would fall wherever that half
// second ends in the test (between an origin's requeue and the next look,
// say) and let fans in at a moment the test does not choose. The step is the
// one the loop would take: a loop's tick later in the same second is not
// due. A room whose store is away fails it, as its loop would.
func settleRooms() {
	if clockOverride.Load() == nil {
		return
	}
	rooms.Range(func(_, v any) bool {
		_ = v.(*roomHandle).room.Tick(context.Background())
		return true
	})
}

// unloadCaddy loads a config with nothing but the admin endpoint: every room
// stops and forgets what it held in memory, as in a restart of the process
// (Caddy storage, a directory, outlives it as a disk would).
func unloadCaddy() error {
	resp, err := http.Post(adminBase+"/load", "application/json",
		strings.NewReader(fmt.Sprintf(`{"admin":{"listen":%q}}`, adminAddr)))
	if err != nil {
		return err
	}
	return resp.Body.Close()
}

// caddyConfig is a Caddyfile for the in-process Caddy: the global options
// every test here needs (the admin endpoint, this process's ports, no trust
// store, no grace on reload, storage in the given directory) followed by the
// test's sites, their nominal ports 9080 and 9081 mapped to this process's.
func caddyConfig(storage, sites string) string { return caddyConfigWith(storage, "", sites) }

// caddyConfigWith is caddyConfig with more global options, such as a
// servers block.
func caddyConfigWith(storage, globals, sites string) string {
	sites = strings.NewReplacer(
		":9080", ":"+strconv.Itoa(sitePort),
		":9081", ":"+strconv.Itoa(originPort),
	).Replace(sites)
	return fmt.Sprintf(`
	{
		skip_install_trust
		admin %s
		http_port %d
		https_port %d
		grace_period 1ns
		storage file_system %s
		%s
	}
	`, adminAddr, sitePort, freePort(), storage, globals) + sites
}
