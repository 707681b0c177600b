package loadgen

import (
	"context"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"
)

func TestLoadStaysOnLoopback(t *testing.T) {
	for _, addr := range []string{"10.0.0.1:80", "93.184.216.34:443", "example.com:80", "[2001:db8::1]:80"} {
		if _, err := LoopbackDialer(context.Background(), "tcp", addr); err == nil || !strings.Contains(err.Error(), "loopback only") {
			t.Errorf("dialing %s: %v, want a refusal", addr, err)
		}
	}
}

func TestLoadIsBounded(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { _, _ = w.Write([]byte("ok")) }))
	defer srv.Close()
	req := func(w, i int) *http.Request { r, _ := http.NewRequest(http.MethodGet, srv.URL, nil); return r }
	start := time.Now()
	res, err := Run(4, time.Minute, 50, req, nil)
	if err != nil {
		t.Fatal(err)
	}
	if res.Requests != 50 {
		t.Fatalf("%d requests sent, want the bound of 50", res.Requests)
	}
	if time.Since(start) > 30*time.Second {
		t.Fatal("a load bounded to 50 requests ran on toward its time bound")
	}
	res, err = Run(2, 200*time.Millisecond, 1<<30, req, nil)
	if err != nil {
		t.Fatal(err)
	}
	if res.Elapsed > 5*time.Second || res.Requests == 0 {
		t.Fatalf("a 200 ms load ran %v with %d requests", res.Elapsed, res.Requests)
	}
	if q := res.Quantile(.99); q <= 0 {
		t.Fatalf("p99 %v", q)
	}
}
