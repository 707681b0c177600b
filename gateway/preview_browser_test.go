package gateway

import (
	"net"
	"net/http"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/chromedp/chromedp"

	"github.com/foyer-dev/foyer/internal/browsertest"
	"github.com/foyer-dev/foyer/waitingroom"
)

// TestBrowserPreviews opens every preview of a room in a real browser, in
// English and Arabic: each passes axe-core's WCAG rules, logs no console
// error, and its page asks nothing of the site beyond the preview itself
// (no poll, live connection, join or puzzle answer).
func TestBrowserPreviews(t *testing.T) {
	if testing.Short() {
		t.Skip("starts a browser")
	}
	browser := headlessBrowser(t)
	axeSrc := browsertest.AxeSource(t)
	dir := artifactDir(t)
	h := testHandler(t, Handler{Room: "preview", Languages: []string{"en", "ar"}, Settings: waitingroom.Settings{Title: "Preview night"}}, nil)
	d := previewDashboard(h)
	var elsewhere atomic.Int64
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	srv := &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != "/ops/" || r.URL.Query().Get("format") != "preview" {
			elsewhere.Add(1)
			http.NotFound(w, r)
			return
		}
		_ = d.ServeHTTP(w, r, nil)
	})}
	go func() { _ = srv.Serve(l) }()
	t.Cleanup(func() { _ = srv.Close() })
	site := "http://" + l.Addr().String() + "/ops/"

	operator := newBrowserFan(t, browser, "operator", pageWidths[0].width, true)
	operator.open(site + "?format=preview&room=preview")
	operator.axe(axeSrc, "index")
	operator.noErrors("index")
	for _, lang := range []string{"en", "ar"} {
		for _, ps := range previewStates {
			name := lang + "-" + ps.Name
			operator.open(site + previewURL("preview", ps.Name, lang))
			got, err := chromedp.Run(operator.ctx, chromedp.Evaluate[string](`document.documentElement.lang + " " + document.querySelector("[data-foyer-preview]").textContent`))
			if err != nil || !strings.HasPrefix(got, lang+" Preview: "+ps.Name) {
				t.Errorf("%s: %q (%v)", name, got, err)
			}
			operator.axe(axeSrc, name)
			operator.shot(dir, name)
			operator.noErrors(name)
		}
	}
	if n := elsewhere.Load(); n != 0 {
		t.Fatalf("the previews' pages made %d requests beyond the previews", n)
	}
}
