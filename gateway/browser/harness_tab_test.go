package browser

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/chromedp/cdproto/emulation"
	"github.com/chromedp/chromedp"

	"github.com/foyer-dev/foyer/gateway"
	"github.com/foyer-dev/foyer/internal/browsertest"
)

// The widths every page state is tried at: a desktop and a phone.
var pageWidths = []struct {
	name          string
	width, height int64
	mobile        bool
}{
	{"desktop", 1280, 800, false},
	{"phone", 390, 844, true},
}

// artifactDir is where a browser test keeps its screenshots: under
// $FOYER_ARTIFACTS, else under the temporary directory, never in the
// repository. The path is logged so that a failed run can be looked at.
func artifactDir(t *testing.T) string {
	t.Helper()
	root := os.Getenv("FOYER_ARTIFACTS")
	if root == "" {
		root = filepath.Join(os.TempDir(), "foyer-artifacts")
	}
	dir := filepath.Join(root, regexp.MustCompile(`[^A-Za-z0-9_.-]+`).ReplaceAllString(t.Name(), "_"))
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	t.Logf("screenshots in %s", dir)
	return dir
}

// maxBrowsers bounds the Chromiums the suite runs at once: each is several
// processes, heavy on a machine of two cores, and tests crowding it would
// only wait longer for their pages, and time out.
const maxBrowsers = 2

// browsers holds a slot for each Chromium running.
var browsers = make(chan struct{}, maxBrowsers)

// headlessBrowser starts one Chromium for a test, once one of maxBrowsers
// slots is free; each fan gets a browser context of their own in it (their
// own cookies), which is much cheaper than a browser each. The test's
// cleanup stops it and frees the slot.
func headlessBrowser(t *testing.T) context.Context {
	t.Helper()
	return headlessBrowserWith(t)
}

// headlessBrowserWith is headlessBrowser with Chromium's command line
// extended by opts.
func headlessBrowserWith(t *testing.T, opts ...chromedp.ExecAllocatorOption) context.Context {
	t.Helper()
	exe := browsertest.Chromium(t)
	browsers <- struct{}{}
	t.Cleanup(func() { <-browsers })
	alloc, cancelAlloc := chromedp.NewExecAllocator(context.Background(), append(browsertest.AllocatorOptions(exe, t.TempDir()), opts...)...)
	ctx, cancel := chromedp.NewContext(alloc)
	if err := chromedp.Do(ctx); err != nil { // start the browser
		cancel()
		cancelAlloc()
		t.Fatalf("starting Chromium: %v", err)
	}
	t.Cleanup(func() { cancel(); cancelAlloc() })
	return ctx
}

// newFanContext opens a tab in a browser context of its own (a fan, with
// their own cookies) at Chromium's own window size, every action on it
// bounded by a minute in all.
func newFanContext(t *testing.T, browser context.Context) context.Context {
	t.Helper()
	ctx, cancel := chromedp.NewContext(browser, chromedp.WithNewBrowserContext())
	ctx, cancelTimeout := context.WithTimeout(ctx, 60*time.Second)
	t.Cleanup(func() { cancelTimeout(); cancel() })
	return ctx
}

// tab is one browser tab, with everything its pages wrote to the console.
type tab struct {
	t      *testing.T
	ctx    context.Context
	name   string
	js     bool
	mu     sync.Mutex
	errors []string
}

// newBrowserFan opens a tab in a browser context of its own: a new fan.
func newBrowserFan(t *testing.T, browser context.Context, name string, width int64, js bool) *tab {
	t.Helper()
	ctx, cancel := chromedp.NewContext(browser, chromedp.WithNewBrowserContext())
	t.Cleanup(cancel)
	return openTab(t, ctx, name, width, js)
}

// sibling opens another tab of the same fan (the same cookies).
func (f *tab) sibling(name string, width int64, js bool) *tab {
	ctx, cancel := chromedp.NewContext(f.ctx)
	f.t.Cleanup(cancel)
	return openTab(f.t, ctx, name, width, js)
}

func openTab(t *testing.T, ctx context.Context, name string, width int64, js bool) *tab {
	t.Helper()
	f := &tab{t: t, ctx: ctx, name: name, js: js}
	var w struct {
		width, height int64
		mobile        bool
	}
	for _, pw := range pageWidths {
		if pw.width == width {
			w.width, w.height, w.mobile = pw.width, pw.height, pw.mobile
		}
	}
	opts := []chromedp.EmulateViewportOption{}
	if w.mobile {
		opts = append(opts, chromedp.EmulateMobile, chromedp.EmulateTouch, chromedp.EmulatePortrait, chromedp.EmulateScale(2))
	}
	if err := chromedp.Do(ctx, chromedp.EmulateViewport(w.width, w.height, opts...)); err != nil {
		t.Fatalf("%s: viewport: %v", name, err)
	}
	if !js {
		if _, err := chromedp.Call(ctx, emulation.SetScriptExecutionDisabled, emulation.SetScriptExecutionDisabledParams{Value: true}); err != nil {
			t.Fatalf("%s: turning JavaScript off: %v", name, err)
		}
	}
	messages := chromedp.Console(ctx)
	go func() {
		for m, err := range messages {
			if err != nil {
				return
			}
			if m.Type == chromedp.ConsoleError || m.IsException() {
				f.mu.Lock()
				f.errors = append(f.errors, fmt.Sprintf("%s (%s)", m, m.URL))
				f.mu.Unlock()
			}
		}
	}()
	return f
}

func (f *tab) open(url string) {
	f.t.Helper()
	if err := chromedp.Do(f.ctx, chromedp.Navigate(url)); err != nil {
		f.t.Fatalf("%s: opening %s: %v", f.name, url, err)
	}
}

func (f *tab) reload() {
	f.t.Helper()
	if err := chromedp.Do(f.ctx, chromedp.Reload()); err != nil {
		f.t.Fatalf("%s: reloading: %v", f.name, err)
	}
}

// shown is what a page shows a fan, read from the DOM.
type shown struct {
	Variant  string `json:"variant"`
	Text     string `json:"text"`
	Headline string `json:"headline"`
	Position string `json:"position"`
	ETA      string `json:"eta"`
	Bar      string `json:"bar"`
	Valuenow string `json:"valuenow"`
	Notice   bool   `json:"notice"`
	Live     string `json:"live"`
	// Ready is the document's readyState: a page read while it loads
	// shows only its first part.
	Ready string `json:"ready"`
}

const readPage = `(function () {
  var m = document.getElementById("room");
  if (!m) { return JSON.stringify({text: document.body ? document.body.innerText : "", ready: document.readyState}); }
  var t = function (id) { var e = document.getElementById(id); return e ? e.textContent : ""; };
  var bar = document.getElementById("progress");
  var pb = document.querySelector("[role=progressbar]");
  return JSON.stringify({
    variant: m.getAttribute("data-variant") || "", text: m.innerText,
    headline: t("headline"), position: t("position"), eta: t("eta"),
    bar: bar ? bar.style.width : "", valuenow: pb ? (pb.getAttribute("aria-valuenow") || "") : "",
    notice: Array.prototype.some.call(document.querySelectorAll(".notice"), function (e) { return !e.hidden && e.textContent !== ""; }),
    live: m.getAttribute("data-ws-url") || "",
    ready: document.readyState
  });
})()`

// read reads the page once it has loaded.
func (f *tab) read() shown {
	f.t.Helper()
	return f.await("a loaded page", func(shown) bool { return true })
}

// await reads the page until ok holds, for up to 15 s of real time (a live
// update of figures alone waits up to wsMinGap).
func (f *tab) await(what string, ok func(shown) bool) shown {
	f.t.Helper()
	deadline := time.Now().Add(15 * time.Second)
	for {
		var s shown
		raw, err := chromedp.Run(f.ctx, chromedp.Evaluate[string](readPage))
		if err == nil && json.Unmarshal([]byte(raw), &s) == nil && s.Ready == "complete" && ok(s) {
			return s
		}
		if time.Now().After(deadline) {
			f.t.Fatalf("%s: the page never showed %s; it shows %+v (%v)", f.name, what, s, err)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// shot keeps a screenshot of the whole page (quality 100: a PNG).
func (f *tab) shot(dir, name string) {
	f.t.Helper()
	png, err := chromedp.Run(f.ctx, chromedp.FullScreenshot(100))
	if err != nil {
		f.t.Fatalf("%s: screenshot: %v", f.name, err)
	}
	if err := os.WriteFile(filepath.Join(dir, name+".png"), png, 0o644); err != nil {
		f.t.Fatal(err)
	}
}

// noErrors fails the test for anything the tab's pages wrote to the console
// as an error, or threw. Chromium logs an error status of the document itself
// as a console error; the busy page is answered 503 on purpose (docs/operations.md, "What
// survives what": newcomers get 503 with Retry-After, which load balancers and
// monitors read), so that one line is allowed for it, and nothing else.
func (f *tab) noErrors(when string, allowStatus ...int) {
	f.t.Helper()
	f.mu.Lock()
	defer f.mu.Unlock()
	for _, e := range f.errors {
		allowed := false
		for _, code := range allowStatus {
			allowed = allowed || strings.HasPrefix(e, fmt.Sprintf("error: Failed to load resource: the server responded with a status of %d ", code)) && strings.HasSuffix(e, "/events/42)")
		}
		if !allowed {
			f.t.Errorf("%s, %s: console: %s", f.name, when, e)
		}
	}
	f.errors = nil
}

// serveHandler serves h on a loopback port, with an origin that answers a page
// saying where the fan landed. It returns the site's URL.
func serveHandler(t *testing.T, h *gateway.Handler) string {
	t.Helper()
	return serveSite(t, h, func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/html")
		_, _ = w.Write([]byte(`<!doctype html><title>Shop</title><link rel="icon" href="data:,"><h1 id="shop">Seats for ` + r.URL.Path + `</h1>`))
	}, nil)
}

// sameView compares a live page with a fresh load, field by field.
func sameView(live, fresh shown) []string {
	var diffs []string
	add := func(field, a, b string) {
		if a != b {
			diffs = append(diffs, fmt.Sprintf("%s: live %q, fresh %q", field, a, b))
		}
	}
	add("variant", live.Variant, fresh.Variant)
	add("headline", live.Headline, fresh.Headline)
	add("position", live.Position, fresh.Position)
	add("eta", live.ETA, fresh.ETA)
	add("bar", live.Bar, fresh.Bar)
	add("aria-valuenow", live.Valuenow, fresh.Valuenow)
	add("text", strings.TrimSpace(live.Text), strings.TrimSpace(fresh.Text))
	return diffs
}
