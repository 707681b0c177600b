package gateway

import (
	"crypto/tls"
	"fmt"
	"io"
	"net"
	"net/netip"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/caddyserver/caddy/v2"
	"github.com/caddyserver/caddy/v2/caddyconfig/caddyfile"
	"go.uber.org/zap"
)

func init() {
	caddy.RegisterModule(ConnLimit{})
}

// Defaults of the connection limit. A fan's browser holds one to six
// connections to a site; 256 per address leaves room for a few dozen fans
// behind one NAT (a campus, an office, a carrier's gateway) while one address
// can no longer hold thousands. IPv6 addresses are grouped by /64, the block
// one subscriber is given, since a client that owns a /64 can pick a new
// address for every connection.
const (
	defaultConnsPerAddress = 256
	defaultIPv6Prefix      = 64
	// connRefusalLogEvery spaces the log lines about refused connections: in
	// a flood there are thousands a second, and a line for each would cost
	// more than refusing them.
	connRefusalLogEvery = 10 * time.Second
)

// ConnLimit is the caddy.listeners.foyer_conn_limit listener wrapper. It caps
// the connections one client address holds open at once, and optionally all
// of them together, so that idle connections opened by the thousand cannot
// use up the node's file descriptors and lock fans out (see docs/bots.md,
// "Connection floods"). A connection over a cap is closed as soon as it is
// accepted, before a byte of it is read and before any TLS handshake, with a
// reset rather than an orderly close so that the node keeps no state for it.
//
// List it first among the listener wrappers, before tls, so that a refused
// connection costs no handshake. The address it counts is the connection's
// peer: behind a load balancer every connection comes from the balancer, so
// there the cap belongs on the balancer instead.
//
// The header-read and idle timeouts of the server (servers { timeouts { ... } })
// are what frees the connections that stay within the caps: this wrapper
// bounds how many one client holds, the timeouts how long.
type ConnLimit struct {
	// PerAddress is the most connections one client address holds open at
	// once; IPv6 addresses count together by IPv6Prefix. Default: 256.
	PerAddress int `json:"per_address,omitempty"`

	// Total is the most connections held open at once over every address,
	// per listener. Keep it under the process's file descriptor limit (ulimit
	// -n), leaving room for the connections to origins and stores. Default: 0,
	// no total cap.
	Total int `json:"total,omitempty"`

	// IPv6Prefix is the prefix length by which IPv6 addresses are grouped.
	// Default: 64.
	IPv6Prefix int `json:"ipv6_prefix,omitempty"`

	logger *zap.Logger
}

// CaddyModule returns the Caddy module information.
func (ConnLimit) CaddyModule() caddy.ModuleInfo {
	return moduleInfo[ConnLimit]("caddy.listeners.foyer_conn_limit")
}

// Provision sets the defaults and warns when the total cap is above what the
// process may open, where it would never take effect.
func (cl *ConnLimit) Provision(ctx caddy.Context) error {
	cl.logger = ctx.Logger()
	if cl.PerAddress == 0 {
		cl.PerAddress = defaultConnsPerAddress
	}
	if cl.IPv6Prefix == 0 {
		cl.IPv6Prefix = defaultIPv6Prefix
	}
	if limit, ok := openFileLimit(); ok && uint64(cl.Total) >= limit {
		cl.logger.Warn("the total connection cap is not below the file descriptor limit, so a flood can still use up every descriptor",
			zap.Int("total", cl.Total), zap.Uint64("ulimit_n", limit))
	}
	return nil
}

// Validate checks the caps.
func (cl *ConnLimit) Validate() error {
	if cl.PerAddress < 1 {
		return fmt.Errorf("per_address: %d; it must be at least 1", cl.PerAddress)
	}
	if cl.Total < 0 {
		return fmt.Errorf("total: %d; it must be positive, or 0 for no total cap", cl.Total)
	}
	if cl.IPv6Prefix < 1 || cl.IPv6Prefix > 128 {
		return fmt.Errorf("ipv6_prefix: %d; it must be between 1 and 128", cl.IPv6Prefix)
	}
	return nil
}

// WrapListener counts the listener's connections. Each listener keeps its
// own counts; a reload starts new ones, which is safe because the old
// generation's server closes its idle connections as it shuts down.
func (cl *ConnLimit) WrapListener(ln net.Listener) net.Listener {
	return &connLimitListener{
		Listener: ln,
		counts: &connCounts{
			perAddress: int32(min(cl.PerAddress, 1<<30)),
			total:      cl.Total,
			v6Bits:     cl.IPv6Prefix,
			byAddr:     make(map[netip.Addr]int32),
		},
		logger: cl.logger,
	}
}

// UnmarshalCaddyfile sets up the wrapper from Caddyfile tokens. Syntax:
//
//	foyer_conn_limit [<per_address>] {
//		per_address <connections>
//		total       <connections>
//		ipv6_prefix <bits>
//	}
func (cl *ConnLimit) UnmarshalCaddyfile(d *caddyfile.Dispenser) error {
	d.Next() // the wrapper's name
	if d.NextArg() {
		n, err := strconv.Atoi(d.Val())
		if err != nil {
			return d.Errf("per_address: %q is not a whole number", d.Val())
		}
		cl.PerAddress = n
		if d.NextArg() {
			return d.ArgErr()
		}
	}
	for d.NextBlock(0) {
		name := d.Val()
		var field *int
		switch name {
		case "per_address":
			field = &cl.PerAddress
		case "total":
			field = &cl.Total
		case "ipv6_prefix":
			field = &cl.IPv6Prefix
		default:
			return d.Errf("unrecognized foyer_conn_limit option %q", name)
		}
		if !d.NextArg() {
			return d.ArgErr()
		}
		n, err := strconv.Atoi(d.Val())
		if err != nil {
			return d.Errf("%s: %q is not a whole number", name, d.Val())
		}
		*field = n
		if d.NextArg() {
			return d.ArgErr()
		}
	}
	return nil
}

// connCounts is how many connections each address holds, and all of them.
// One mutex guards it: Accept takes it once per connection and Close once,
// which is far below what contends, and a flood's refusals take it only once
// each as well.
type connCounts struct {
	perAddress int32
	total      int
	v6Bits     int

	mu     sync.Mutex
	byAddr map[netip.Addr]int32
	open   int
}

// key is the address a connection counts against: its IPv4 address, or its
// IPv6 address's prefix. A peer that is not an IP address (a Unix socket)
// counts toward the total only.
func (c *connCounts) key(addr net.Addr) (netip.Addr, bool) {
	tcp, ok := addr.(*net.TCPAddr)
	if !ok {
		return netip.Addr{}, false
	}
	ip := tcp.AddrPort().Addr().Unmap().WithZone("")
	if ip.Is6() {
		p, err := ip.Prefix(c.v6Bits)
		if err != nil {
			return netip.Addr{}, false
		}
		ip = p.Addr()
	}
	return ip, ip.IsValid()
}

// acquire counts a new connection if it fits under both caps.
func (c *connCounts) acquire(ip netip.Addr, keyed bool) bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.total > 0 && c.open >= c.total {
		return false
	}
	if keyed {
		n := c.byAddr[ip]
		if n >= c.perAddress {
			return false
		}
		c.byAddr[ip] = n + 1
	}
	c.open++
	return true
}

// release uncounts a closed connection; an address with none left is
// forgotten, so the map is only as large as the addresses connected now.
func (c *connCounts) release(ip netip.Addr, keyed bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.open--
	if keyed {
		if n := c.byAddr[ip] - 1; n > 0 {
			c.byAddr[ip] = n
		} else {
			delete(c.byAddr, ip)
		}
	}
}

// connLimitListener refuses the connections over the caps in Accept itself,
// so that a flood's connections never reach the HTTP server: no goroutine, no
// buffers, no timer is spent on them.
type connLimitListener struct {
	net.Listener
	counts *connCounts
	logger *zap.Logger

	refused atomic.Uint64 // since the last log line
	lastLog atomic.Int64  // unix nanoseconds of the last log line
}

// Accept returns the next connection within the caps, closing those over
// them on the way. It returns an error only when the listener does, so a
// flood never makes the HTTP server back off its accept loop.
func (l *connLimitListener) Accept() (net.Conn, error) {
	for {
		conn, err := l.Listener.Accept()
		if err != nil {
			return nil, err
		}
		ip, keyed := l.counts.key(conn.RemoteAddr())
		if l.counts.acquire(ip, keyed) {
			return newLimitedConn(conn, l.counts, ip, keyed), nil
		}
		resetConn(conn)
		l.noteRefused(ip)
	}
}

// noteRefused counts a refusal and logs, at most once per
// connRefusalLogEvery, how many there were.
func (l *connLimitListener) noteRefused(ip netip.Addr) {
	n := l.refused.Add(1)
	now := time.Now().UnixNano()
	last := l.lastLog.Load()
	if now-last < int64(connRefusalLogEvery) || !l.lastLog.CompareAndSwap(last, now) {
		return
	}
	n = l.refused.Swap(0)
	if l.logger != nil {
		l.logger.Warn("connections refused over the connection caps",
			zap.Uint64("refused", n), zap.String("last_address", ip.String()),
			zap.Int32("per_address", l.counts.perAddress), zap.Int("total", l.counts.total))
	}
}

// resetConn closes a refused connection with a reset: with no linger the
// kernel drops the socket at once instead of keeping it in TIME_WAIT.
func resetConn(conn net.Conn) {
	if tcp, ok := conn.(*net.TCPConn); ok {
		_ = tcp.SetLinger(0)
	}
	_ = conn.Close()
}

// limitedConn releases its count when it is first closed, whether by the HTTP
// server, by a handler that hijacked it (a WebSocket), or by a timeout.
type limitedConn struct {
	net.Conn
	counts *connCounts
	ip     netip.Addr
	keyed  bool
	closed atomic.Bool
}

func newLimitedConn(conn net.Conn, counts *connCounts, ip netip.Addr, keyed bool) net.Conn {
	lc := &limitedConn{Conn: conn, counts: counts, ip: ip, keyed: keyed}
	if _, ok := conn.(connectionStater); ok {
		// Placed after tls, the wrapper must let Caddy see the TLS state.
		return &limitedTLSConn{lc}
	}
	return lc
}

// Close closes the connection and, the first time, releases its count.
func (c *limitedConn) Close() error {
	err := c.Conn.Close()
	if c.closed.CompareAndSwap(false, true) {
		c.counts.release(c.ip, c.keyed)
	}
	return err
}

// ReadFrom keeps the kernel's file copy (sendfile, splice) that net/http uses
// when the connection it writes to offers it.
func (c *limitedConn) ReadFrom(r io.Reader) (int64, error) {
	return io.Copy(c.Conn, r)
}

// NetConn returns the connection this one wraps.
func (c *limitedConn) NetConn() net.Conn { return c.Conn }

// connectionStater is a connection that carries a TLS state.
type connectionStater interface {
	ConnectionState() tls.ConnectionState
}

// limitedTLSConn is a limitedConn over a TLS connection.
type limitedTLSConn struct{ *limitedConn }

// ConnectionState returns the TLS state of the wrapped connection.
func (c *limitedTLSConn) ConnectionState() tls.ConnectionState {
	return c.Conn.(connectionStater).ConnectionState()
}

// Interface guards.
var (
	_ caddy.Provisioner     = (*ConnLimit)(nil)
	_ caddy.Validator       = (*ConnLimit)(nil)
	_ caddy.ListenerWrapper = (*ConnLimit)(nil)
	_ caddyfile.Unmarshaler = (*ConnLimit)(nil)
	_ io.ReaderFrom         = (*limitedConn)(nil)
)
