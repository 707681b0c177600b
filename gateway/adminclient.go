package gateway

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"strings"
	"time"

	"github.com/caddyserver/caddy/v2"
)

// adminClient calls the waiting room admin API of a running Foyer, for the
// command line. Caddy's own helper for this reports an error response as its
// raw body; this one reads Foyer's {"error", "message"} and says the message.
type adminClient struct {
	addr   string
	base   string // scheme and host of request URLs
	origin string // the Origin header Caddy's admin endpoint expects, if any
	http   *http.Client
}

// adminClientTimeout bounds one command: a change waits at most this long on
// the store behind the admin API.
const adminClientTimeout = 30 * time.Second

// newAdminClient prepares calls to the admin endpoint at addr, in Caddy's
// network address notation ("localhost:2019", "unix//run/caddy-admin.sock").
func newAdminClient(addr string) (*adminClient, error) {
	na, err := caddy.ParseNetworkAddress(addr)
	if err != nil {
		return nil, fmt.Errorf("invalid admin address %q: %v", addr, err)
	}
	if na.PortRangeSize() > 1 {
		return nil, fmt.Errorf("invalid admin address %q: a port range", addr)
	}
	network, dial := na.Network, na.JoinHostPort(0)
	c := &adminClient{addr: addr, base: "http://" + dial, origin: "http://" + dial}
	if na.IsUnixNetwork() {
		// A socket path may carry its file mode after '|'; the host of the URL
		// is a placeholder that Caddy accepts for sockets.
		dial, _, _ = strings.Cut(na.Host, "|")
		c.base, c.origin = "http://127.0.0.1", ""
	}
	c.http = &http.Client{
		Timeout: adminClientTimeout,
		Transport: &http.Transport{
			DialContext: func(ctx context.Context, _, _ string) (net.Conn, error) {
				var d net.Dialer
				return d.DialContext(ctx, network, dial)
			},
		},
	}
	return c, nil
}

// do calls the API and returns the body of a successful answer. An error
// answer becomes an error carrying the API's message.
func (c *adminClient) do(method, path string, body any) ([]byte, error) {
	if body == nil {
		return c.send(method, path, "", nil)
	}
	b, err := json.Marshal(body)
	if err != nil {
		return nil, err
	}
	return c.send(method, path, "application/json", b)
}

// send is do with a body already encoded as contentType ("": none).
func (c *adminClient) send(method, path, contentType string, body []byte) ([]byte, error) {
	var rd io.Reader
	if contentType != "" {
		rd = bytes.NewReader(body)
	}
	req, err := http.NewRequest(method, c.base+path, rd)
	if err != nil {
		return nil, err
	}
	if c.origin != "" {
		req.Header.Set("Origin", c.origin)
	}
	if rd != nil {
		req.Header.Set("Content-Type", contentType)
	}
	req.Header.Set(operatorHeader, cliOperator())
	resp, err := c.http.Do(req)
	if err != nil {
		return nil, fmt.Errorf("reaching the admin API at %s: %w", c.addr, err)
	}
	defer resp.Body.Close()
	data, err := io.ReadAll(io.LimitReader(resp.Body, 8<<20))
	if err != nil {
		return nil, fmt.Errorf("reading the admin API's answer: %w", err)
	}
	if resp.StatusCode < 400 {
		return data, nil
	}
	var e apiError
	_ = json.Unmarshal(data, &e)
	switch {
	case e.Message != "":
		return nil, fmt.Errorf("%s (HTTP %d %s)", e.Message, resp.StatusCode, e.Error)
	case e.Error != "":
		// Caddy's own errors are {"error": "<message>"}.
		return nil, fmt.Errorf("%s (HTTP %d)", e.Error, resp.StatusCode)
	}
	return nil, fmt.Errorf("HTTP %d: %s", resp.StatusCode, strings.TrimSpace(string(data)))
}
