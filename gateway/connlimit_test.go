package gateway

import (
	"errors"
	"net"
	"net/netip"
	"syscall"
	"testing"
	"time"

	"github.com/caddyserver/caddy/v2/caddyconfig/caddyfile"
)

// TestConnLimitCaddyfile parses the wrapper's Caddyfile forms and refuses the
// malformed ones.
func TestConnLimitCaddyfile(t *testing.T) {
	for src, want := range map[string]ConnLimit{
		"foyer_conn_limit":     {},
		"foyer_conn_limit 100": {PerAddress: 100},
		"foyer_conn_limit {\n per_address 64\n total 16000\n ipv6_prefix 56\n}": {PerAddress: 64, Total: 16000, IPv6Prefix: 56},
	} {
		var got ConnLimit
		if err := got.UnmarshalCaddyfile(caddyfile.NewTestDispenser(src)); err != nil {
			t.Fatalf("%q: %v", src, err)
		}
		if got.PerAddress != want.PerAddress || got.Total != want.Total || got.IPv6Prefix != want.IPv6Prefix {
			t.Fatalf("%q: %+v, want %+v", src, got, want)
		}
	}
	for _, src := range []string{
		"foyer_conn_limit many",
		"foyer_conn_limit 1 2",
		"foyer_conn_limit {\n total\n}",
		"foyer_conn_limit {\n total 1 2\n}",
		"foyer_conn_limit {\n backlog 5\n}",
	} {
		var got ConnLimit
		if err := got.UnmarshalCaddyfile(caddyfile.NewTestDispenser(src)); err == nil {
			t.Errorf("%q parsed as %+v, want an error", src, got)
		}
	}
	for _, bad := range []ConnLimit{{PerAddress: -1, IPv6Prefix: 64}, {PerAddress: 1, Total: -1, IPv6Prefix: 64}, {PerAddress: 1, IPv6Prefix: 129}} {
		if err := bad.Validate(); err == nil {
			t.Errorf("%+v validated", bad)
		}
	}
}

// TestConnLimitKeys groups IPv6 addresses by their prefix and keeps IPv4
// addresses apart, an IPv4-mapped IPv6 peer counting as its IPv4 address.
func TestConnLimitKeys(t *testing.T) {
	c := &connCounts{v6Bits: 64}
	key := func(s string) netip.Addr {
		t.Helper()
		k, ok := c.key(net.TCPAddrFromAddrPort(netip.MustParseAddrPort(s)))
		if !ok {
			t.Fatalf("%s: no key", s)
		}
		return k
	}
	if a, b := key("[2001:db8:1:2::1]:5000"), key("[2001:db8:1:2:ffff::9]:6000"); a != b {
		t.Errorf("two addresses of one /64 count apart: %s and %s", a, b)
	}
	if a, b := key("[2001:db8:1:2::1]:5000"), key("[2001:db8:1:3::1]:5000"); a == b {
		t.Errorf("two /64s count together: %s", a)
	}
	if a, b := key("192.0.2.1:5000"), key("192.0.2.2:5000"); a == b {
		t.Errorf("two IPv4 addresses count together: %s", a)
	}
	if a, b := key("[::ffff:192.0.2.1]:5000"), key("192.0.2.1:6000"); a != b {
		t.Errorf("an IPv4-mapped peer counts apart from its IPv4 address: %s and %s", a, b)
	}
	if _, ok := c.key(&net.UnixAddr{Name: "@", Net: "unix"}); ok {
		t.Error("a Unix socket peer has a per-address key")
	}
}

// TestConnLimitListener holds connections from one loopback address up to
// its cap: the next is reset at once, another address still gets in, and a
// closed connection frees its place. The total cap refuses every address.
func TestConnLimitListener(t *testing.T) {
	cl := &ConnLimit{PerAddress: 3, Total: 5, IPv6Prefix: 64}
	inner, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	ln := cl.WrapListener(inner)
	defer ln.Close()
	accepted := make(chan net.Conn, 16)
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				close(accepted)
				return
			}
			accepted <- c
		}
	}()
	dial := func(src string) net.Conn {
		t.Helper()
		d := net.Dialer{LocalAddr: &net.TCPAddr{IP: net.ParseIP(src)}, Timeout: 2 * time.Second}
		c, err := d.Dial("tcp", inner.Addr().String())
		if err != nil {
			t.Fatalf("dial from %s: %v", src, err)
		}
		t.Cleanup(func() { c.Close() })
		return c
	}
	take := func(src string) net.Conn {
		t.Helper()
		dial(src)
		select {
		case c := <-accepted:
			return c
		case <-time.After(2 * time.Second):
			t.Fatalf("a connection from %s within the caps was not accepted", src)
			return nil
		}
	}
	wantRefused := func(src string) {
		t.Helper()
		// The refusal is a reset sent as the connection is accepted; on a
		// busy machine it can reach the client before its connect returns,
		// and then the dial itself reports it.
		d := net.Dialer{LocalAddr: &net.TCPAddr{IP: net.ParseIP(src)}, Timeout: 2 * time.Second}
		c, err := d.Dial("tcp", inner.Addr().String())
		if err == nil {
			t.Cleanup(func() { c.Close() })
			_ = c.SetReadDeadline(time.Now().Add(2 * time.Second))
			_, err = c.Read(make([]byte, 1))
		} else if !errors.Is(err, syscall.ECONNRESET) {
			t.Fatalf("dial from %s: %v", src, err)
		}
		var ne net.Error
		if err == nil || errors.As(err, &ne) && ne.Timeout() {
			t.Fatalf("a connection from %s over the cap was not closed: %v", src, err)
		}
		select {
		case c := <-accepted:
			t.Fatalf("a connection over the cap reached the server: %v", c.RemoteAddr())
		default:
		}
	}

	first := take("127.0.0.1")
	take("127.0.0.1")
	take("127.0.0.1")
	wantRefused("127.0.0.1")
	take("127.0.0.2") // another address is not held back
	first.Close()
	first.Close() // a second close releases nothing more
	take("127.0.0.1")
	take("127.0.0.3") // the fifth: the total cap is reached
	wantRefused("127.0.0.4")
}
