package main

import (
	"bytes"
	"io"
	"net/http"
	"testing"
	"time"
)

// TestFaultBodiesOutsideTheRoomThroughGateway: the order-link paths (and the
// storefront's files) are outside the room, so anyone reaches them without a
// place or a pass. An outsider posting big bodies there, with a length or
// chunked, gets a clear 405 naming the methods these paths take (JSON on the
// API), never a 502: the booking service answers without reading the body,
// and a reset there would show as a 502 through the proxy.
func TestFaultBodiesOutsideTheRoomThroughGateway(t *testing.T) {
	base, _ := demoStack(t, "outside-body-admin")
	c := &http.Client{Timeout: 30 * time.Second}
	body := bytes.Repeat([]byte("a"), 3<<20)
	for _, path := range []string{"/api/tickets/ord_x.y", "/tickets/ord_x.y", "/storefront/app.js", "/favicon.ico"} {
		for _, chunked := range []bool{false, true} {
			var rd io.Reader = bytes.NewReader(body)
			if chunked {
				rd = io.MultiReader(rd)
			}
			req, _ := http.NewRequest(http.MethodPost, base+path, rd)
			resp, err := c.Do(req)
			if err != nil {
				t.Fatalf("POST %s (chunked %v): %v", path, chunked, err)
			}
			got, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			api := path == "/api/tickets/ord_x.y"
			if resp.StatusCode != http.StatusMethodNotAllowed || resp.Header.Get("Allow") == "" || (api && !bytes.Contains(got, []byte(`"method_not_allowed"`))) {
				t.Errorf("POST 3 MB to %s (chunked %v): %d Allow %q %.200s; want 405 with Allow (and a JSON error on the API)", path, chunked, resp.StatusCode, resp.Header.Get("Allow"), got)
			}
		}
	}
}
