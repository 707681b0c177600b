package gateway

import (
	"net/http"
	"net/http/httptest"
	"testing"
)

// The in-process costs of the gateway's hot paths; `onsale bench` measures the
// same paths through a real Caddy against its own baselines.

func BenchmarkStatusPoll(b *testing.B) {
	h := testHandler(&testing.T{}, Handler{QueueAll: true}, nil)
	ticket := cookieFrom(serve(h, &origin{}, get("/")), "foyer_ticket")
	req := get("/_waiting-room/status", ticket)
	req.Header.Set("Accept", "application/json")
	b.ReportAllocs()
	b.ResetTimer()
	for b.Loop() {
		rec := httptest.NewRecorder()
		_ = h.ServeHTTP(rec, req, &origin{})
		if rec.Code != http.StatusOK {
			b.Fatal(rec.Code)
		}
	}
}

func BenchmarkAdmittedRequest(b *testing.B) {
	h := testHandler(&testing.T{}, Handler{}, nil)
	pass := cookieFrom(serve(h, &origin{}, get("/")), "foyer_pass")
	req := get("/events/42", pass)
	o := &origin{}
	b.ReportAllocs()
	b.ResetTimer()
	for b.Loop() {
		rec := httptest.NewRecorder()
		_ = h.ServeHTTP(rec, req, o)
	}
}
