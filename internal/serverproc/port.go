package serverproc

import (
	"errors"
	"math/rand/v2"
	"net"
	"slices"
	"strconv"
)

// Ports handed out by FreePort lie below the kernel's ephemeral range
// (32768–60999 by default on Linux). A port taken from that range ("port 0")
// is free when asked, but the server binds it a moment later, and in between
// any outgoing connection on the machine may take it as its local port: with
// a test suite opening thousands of connections, that happens. Below the
// range only a listener can take it, and FreePort checks none holds it.
const (
	lowPort  = 20000
	highPort = 32000
)

// FreePort returns a port no listener holds now, on any interface, outside
// the range the kernel gives outgoing connections.
func FreePort() (int, error) {
	for range 100 {
		port := lowPort + rand.IntN(highPort-lowPort)
		l, err := net.Listen("tcp", ":"+strconv.Itoa(port))
		if err != nil {
			continue
		}
		l.Close()
		return port, nil
	}
	return 0, errors.New("serverproc: no free port found below the ephemeral range")
}

// FreePorts returns n distinct ports as FreePort does: a server that listens
// on several gets them in one call, never the same port twice.
func FreePorts(n int) ([]int, error) {
	ports := make([]int, 0, n)
	for len(ports) < n {
		p, err := FreePort()
		if err != nil {
			return nil, err
		}
		if !slices.Contains(ports, p) {
			ports = append(ports, p)
		}
	}
	return ports, nil
}
