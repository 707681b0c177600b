package gateway

import (
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/foyer-dev/foyer/waitingroom"
)

// The in-process costs of the gateway's hot paths; `onsale bench` measures the
// same paths through a real Caddy against its own baselines.

func BenchmarkStatusPoll(b *testing.B) {
	h := testHandler(&testing.T{}, Handler{Settings: waitingroom.Settings{QueueAll: true}}, nil)
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
	cookie := req.Header.Get("Cookie")
	o := &origin{}
	b.ReportAllocs()
	b.ResetTimer()
	for b.Loop() {
		// The gateway trims its cookies from the request it forwards, as each
		// real request arrives afresh; put them back.
		req.Header = http.Header{"Cookie": {cookie}}
		rec := httptest.NewRecorder()
		_ = h.ServeHTTP(rec, req, o)
	}
	if o.calls == 0 || o.lastReq.Header.Get(headerPass) == "" {
		b.Fatal("the admitted request did not reach the origin with its pass")
	}
}

// BenchmarkJoin is a newcomer's first status call: no cookie, a place made,
// a ticket sealed and set, the status answered.
func BenchmarkJoin(b *testing.B) {
	h := testHandler(&testing.T{}, Handler{Settings: waitingroom.Settings{QueueAll: true}}, nil)
	req := get("/_waiting-room/status")
	req.Header.Set("Accept", "application/json")
	b.ReportAllocs()
	b.ResetTimer()
	var rec *httptest.ResponseRecorder
	for b.Loop() {
		rec = httptest.NewRecorder()
		_ = h.ServeHTTP(rec, req, &origin{})
	}
	if rec.Code != http.StatusOK || len(rec.Result().Cookies()) != 1 {
		b.Fatal(rec.Code, rec.Result().Cookies())
	}
}
