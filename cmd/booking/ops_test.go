package main

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"testing"
	"time"
)

// TestOpsAddr: with -ops-addr, /metrics and /readyz answer there and not on
// the public listener (which a gateway in front exposes to every fan);
// /healthz answers on both.
func TestOpsAddr(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	opsAddr := fmt.Sprintf("127.0.0.1:%d", freePort(t))
	cfg, err := parseConfig([]string{"-dev-passes", "-addr", ln.Addr().String(), "-ops-addr", opsAddr}, func(string) string { return "" }, io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- serve(ctx, cfg, slog.New(slog.DiscardHandler), ln) }()
	t.Cleanup(func() {
		cancel()
		if err := <-done; err != nil {
			t.Errorf("serve: %v", err)
		}
	})
	public, ops := "http://"+ln.Addr().String(), "http://"+opsAddr
	status := func(url string) int {
		deadline := time.Now().Add(10 * time.Second)
		for {
			resp, err := http.Get(url)
			if err == nil {
				resp.Body.Close()
				return resp.StatusCode
			}
			if time.Now().After(deadline) {
				t.Fatalf("GET %s: %v", url, err)
			}
			time.Sleep(20 * time.Millisecond)
		}
	}
	for _, c := range []struct {
		url  string
		want int
	}{
		{ops + "/metrics", 200}, {ops + "/readyz", 200}, {ops + "/healthz", 200},
		{public + "/healthz", 200}, {public + "/metrics", 404}, {public + "/readyz", 404},
	} {
		if got := status(c.url); got != c.want {
			t.Errorf("GET %s = %d, want %d", c.url, got, c.want)
		}
	}
}
