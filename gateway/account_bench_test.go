package gateway

import (
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/foyer-dev/foyer/waitingroom"
)

// BenchmarkStatusPollAccount: what the account block adds to a waiting fan's
// poll (reading the token and a cache lookup of its verification), as a ratio
// to the same poll in a room without the block, measured in alternating
// rounds of the same run.
func BenchmarkStatusPollAccount(b *testing.B) {
	t := &testing.T{}
	l := newLogin(t)
	plain := testHandler(t, Handler{Settings: waitingroom.Settings{QueueAll: true}}, nil)
	acct := testHandler(t, Handler{Room: "acct", Settings: waitingroom.Settings{QueueAll: true},
		Account: &AccountConfig{PublicKey: l.pemPath, Cookie: "site_session", Issuer: loginIssuer, Audience: loginAudience}}, nil)
	token := &http.Cookie{Name: "site_session", Value: l.token(t, "alice", nil)}
	poll := func(h *Handler) func() {
		ticket := cookieFrom(serve(h, &origin{}, get("/", token)), "foyer_ticket")
		req := get("/_waiting-room/status", ticket, token)
		req.Header.Set("Accept", "application/json")
		return func() {
			rec := httptest.NewRecorder()
			_ = h.ServeHTTP(rec, req, &origin{})
			if rec.Code != http.StatusOK {
				b.Fatal(rec.Code)
			}
		}
	}
	base, withAccount := poll(plain), poll(acct)
	const round = 2000
	var tBase, tAcct time.Duration
	b.ReportAllocs()
	b.ResetTimer()
	for b.Loop() {
		start := time.Now()
		for range round {
			base()
		}
		mid := time.Now()
		for range round {
			withAccount()
		}
		tBase += mid.Sub(start)
		tAcct += time.Since(mid)
	}
	b.ReportMetric(float64(tAcct.Nanoseconds())/float64(b.N*round), "ns/poll")
	b.ReportMetric(float64(tBase.Nanoseconds())/float64(tAcct.Nanoseconds()), "polls/s_vs_plain")
}
