package gateway

import (
	"fmt"
	"net/http"
	"os"
	"strings"
	"testing"
)

// readmeTrustedProxiesGlobals is the servers block docs/bots.md's join_limit
// section tells operators behind a proxy to use, with the proxy's range
// swapped for loopback, where the test's proxy connects from.
func readmeTrustedProxiesGlobals(t *testing.T) string {
	t.Helper()
	readme, err := os.ReadFile("../docs/bots.md")
	if err != nil {
		t.Fatal(err)
	}
	for _, part := range strings.Split(string(readme), "```caddyfile\n")[1:] {
		text, _, _ := strings.Cut(part, "```")
		if !strings.Contains(text, "trusted_proxies static 10.0.0.0/8") {
			continue
		}
		text = strings.TrimSpace(text)
		text = strings.TrimPrefix(text, "{")
		text = strings.TrimSuffix(text, "}")
		var lines []string
		for _, l := range strings.Split(text, "\n") {
			l, _, _ = strings.Cut(l, "#")
			l = strings.ReplaceAll(l, "10.0.0.0/8", "127.0.0.1/32")
			l = strings.ReplaceAll(l, "client_ip_headers CF-Connecting-IP X-Forwarded-For", "client_ip_headers X-Forwarded-For")
			lines = append(lines, l)
		}
		return strings.Join(lines, "\n")
	}
	t.Fatal("docs/bots.md shows no servers block with trusted_proxies static 10.0.0.0/8")
	return ""
}

// TestCaddyJoinLimitSpoofedForwardedForBehindProxy: a client behind a real
// proxy (which appends the address it saw to X-Forwarded-For, as nginx,
// HAProxy, cloud load balancers and Caddy's reverse_proxy do) writes a new
// X-Forwarded-For of its own on every join. With docs/bots.md's trusted_proxies
// setup the forged entries on the left buy nothing: the limit follows the
// address the proxy saw.
func TestCaddyJoinLimitSpoofedForwardedForBehindProxy(t *testing.T) {
	useTestClock(t)
	newCaddy(t, caddyConfigWith(t.TempDir(), readmeTrustedProxiesGlobals(t), `
	http://localhost:9080 {
		waiting_room {
			room spoofed
			queue_all
			join_limit 20/m burst 3
		}
		respond "origin"
	}`))
	proxy := newPeer(t, "127.0.0.1")
	places := 0
	for i := range 10 {
		forged := fmt.Sprintf("198.51.100.%d, 203.0.113.9", i+1)
		if a := proxy.do(http.MethodGet, base+"/", "Accept", "application/json", "X-Forwarded-For", forged); a.ticket {
			places++
		}
	}
	if places != 3 {
		t.Fatalf("a client forging the left of X-Forwarded-For behind a trusted proxy made %d places, want its 3", places)
	}
}
