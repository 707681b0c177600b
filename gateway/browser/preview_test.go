package browser

import (
	"net"
	"net/http"
	"net/url"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/chromedp/chromedp"

	"github.com/foyer-dev/foyer/gateway"
	"github.com/foyer-dev/foyer/internal/browsertest"
	"github.com/foyer-dev/foyer/waitingroom"
)

// TestBrowserPreviews opens every preview of a room in a real browser, in
// English and Arabic, each by its link on the previews' index: each passes
// axe-core's WCAG rules, logs no console error, and its page asks nothing of
// the site beyond the preview itself (no poll, live connection, join or
// puzzle answer).
func TestBrowserPreviews(t *testing.T) {
	if testing.Short() {
		t.Skip("starts a browser")
	}
	t.Parallel()
	browser := headlessBrowser(t)
	axeSrc := browsertest.AxeSource(t)
	dir := artifactDir(t)
	h := newRoom(t, gateway.Handler{Room: "preview", Languages: []string{"en", "ar"}, Settings: waitingroom.Settings{Title: "Preview night"}}, nil, nil)
	previews := gateway.StandalonePreviews(h)
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
		previews.ServeHTTP(w, r)
	})}
	go func() { _ = srv.Serve(l) }()
	t.Cleanup(func() { _ = srv.Close() })
	site := "http://" + l.Addr().String() + "/ops/"

	operator := newBrowserFan(t, browser, "operator", pageWidths[0].width, true)
	operator.open(site + "?format=preview&room=preview")
	operator.axe(axeSrc, "index")
	operator.noErrors("index")
	// The index links every state's preview in each language the room
	// offers.
	links, err := chromedp.Run(operator.ctx, chromedp.Evaluate[[]string](`Array.from(document.querySelectorAll("a[href*='&state='][href*='&lang=']")).map((a) => a.href)`))
	if err != nil {
		t.Fatal(err)
	}
	states := map[string]bool{}
	for _, lang := range []string{"en", "ar"} {
		for _, link := range links {
			u, err := url.Parse(link)
			if err != nil {
				t.Fatal(err)
			}
			q := u.Query()
			if q.Get("lang") != lang {
				continue
			}
			state := q.Get("state")
			states[state] = true
			name := lang + "-" + state
			operator.open(link)
			got, err := chromedp.Run(operator.ctx, chromedp.Evaluate[string](`document.documentElement.lang + " " + document.querySelector("[data-foyer-preview]").textContent`))
			if err != nil || !strings.HasPrefix(got, lang+" Preview: "+state) {
				t.Errorf("%s: %q (%v)", name, got, err)
			}
			operator.axe(axeSrc, name)
			operator.shot(dir, name)
			operator.noErrors(name)
		}
	}
	if len(links) != 2*len(states) || !states["queued"] || !states["leave_confirm"] || !states["slow_down"] {
		t.Fatalf("the index links %d previews of %d states (%v), want each state in en and ar, the waiting page's and the others'", len(links), len(states), states)
	}
	if n := elsewhere.Load(); n != 0 {
		t.Fatalf("the previews' pages made %d requests beyond the previews", n)
	}
}
