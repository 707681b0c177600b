package cutproxy

import (
	"bufio"
	"net"
	"testing"
	"time"
)

// TestCutAndRestore: a line goes through, a cut drops the connection and
// refuses new ones, a restore lets them through again.
func TestCutAndRestore(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			go func() { // echo lines
				defer c.Close()
				r := bufio.NewReader(c)
				for {
					l, err := r.ReadString('\n')
					if err != nil {
						return
					}
					c.Write([]byte(l))
				}
			}()
		}
	}()
	p := Start(t, ln.Addr().String())
	echo := func() error {
		c, err := net.DialTimeout("tcp", p.Addr(), time.Second)
		if err != nil {
			return err
		}
		defer c.Close()
		c.SetDeadline(time.Now().Add(2 * time.Second))
		if _, err := c.Write([]byte("hi\n")); err != nil {
			return err
		}
		_, err = bufio.NewReader(c).ReadString('\n')
		return err
	}
	if err := echo(); err != nil {
		t.Fatalf("through the proxy: %v", err)
	}
	p.Cut()
	if err := echo(); err == nil {
		t.Fatal("a cut proxy let a connection through")
	}
	p.Restore()
	if err := echo(); err != nil {
		t.Fatalf("after restore: %v", err)
	}
}
