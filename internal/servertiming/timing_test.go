package servertiming

import (
	"context"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"
	"time"
)

func TestHeaderRoundTrip(t *testing.T) {
	f := Figures{PoolWait: 1500 * time.Microsecond, DB: 3250 * time.Microsecond, RoundTrips: 3, Total: 7 * time.Millisecond}
	h := f.Header()
	if want := `pool;dur=1.500, db;dur=3.250;desc="3 round trips", total;dur=7.000`; h != want {
		t.Fatalf("Header() = %s, want %s", h, want)
	}
	got, ok := Parse(h)
	if !ok || got != f {
		t.Fatalf("Parse(%q) = %+v, %v; want %+v", h, got, ok, f)
	}
	// A proxy in front may add its own metrics: ours are still read.
	if got, ok := Parse(`cdn;dur=4, ` + h + `, edge;desc="x"`); !ok || got != f {
		t.Errorf("with foreign metrics: %+v, %v", got, ok)
	}
	for _, bad := range []string{"", "cdn;dur=4", "db;dur=abc", "total;dur=-1"} {
		if _, ok := Parse(bad); ok {
			t.Errorf("Parse(%q): want not ok", bad)
		}
	}
}

func TestTimingAddsUpConcurrentQueries(t *testing.T) {
	ctx, tm := Start(context.Background())
	if From(ctx) != tm || From(context.Background()) != nil {
		t.Fatal("From does not find the request's Timing, or finds one where none was started")
	}
	var wg sync.WaitGroup
	for range 16 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for range 100 {
				tm.AddRoundTrip(time.Microsecond)
				tm.AddPoolWait(2 * time.Microsecond)
			}
		}()
	}
	wg.Wait()
	f := tm.Figures(tm.start.Add(time.Second))
	if f.RoundTrips != 1600 || f.DB != 1600*time.Microsecond || f.PoolWait != 3200*time.Microsecond || f.Total != time.Second {
		t.Fatalf("figures %+v", f)
	}
}

func TestMiddlewareSetsHeaderBeforeItIsSent(t *testing.T) {
	h := Middleware(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		From(r.Context()).AddRoundTrip(2 * time.Millisecond)
		w.WriteHeader(http.StatusCreated)
		// After the header is gone a change cannot reach the client, and
		// a second WriteHeader must not set it again.
		From(r.Context()).AddRoundTrip(time.Hour)
		w.WriteHeader(http.StatusOK)
	}))
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, httptest.NewRequest(http.MethodGet, "/", nil))
	f, ok := Parse(rec.Header().Get(HeaderName))
	if !ok || f.RoundTrips != 1 || f.DB != 2*time.Millisecond || rec.Code != http.StatusCreated {
		t.Fatalf("status %d, header %q: %+v", rec.Code, rec.Header().Get(HeaderName), f)
	}

	// A handler that writes without WriteHeader gets the header too.
	h = Middleware(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { _, _ = w.Write([]byte("ok")) }))
	rec = httptest.NewRecorder()
	h.ServeHTTP(rec, httptest.NewRequest(http.MethodGet, "/", nil))
	if _, ok := Parse(rec.Header().Get(HeaderName)); !ok {
		t.Fatalf("no Server-Timing on an implicit 200: %q", rec.Header())
	}
}
