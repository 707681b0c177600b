package loadgen

import (
	"context"
	"fmt"
	"net"
)

// LoopbackDialer refuses anything but loopback: load never leaves this machine.
func LoopbackDialer(ctx context.Context, network, addr string) (net.Conn, error) {
	host, _, err := net.SplitHostPort(addr)
	if err != nil {
		return nil, err
	}
	ip := net.ParseIP(host)
	if host != "localhost" && (ip == nil || !ip.IsLoopback()) {
		return nil, fmt.Errorf("refusing to send load to %s: loopback only", addr)
	}
	var d net.Dialer
	return d.DialContext(ctx, network, addr)
}
