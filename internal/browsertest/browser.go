package browsertest

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/chromedp/cdproto/emulation"
	"github.com/chromedp/chromedp"
)

// Widths are the two the pages are tried at: a desktop and a phone, in CSS
// pixels.
var Widths = []int{1280, 390}

// Chromium finds a headless-capable Chromium, or skips the test (fails it in
// CI, where scripts/deps.sh must have installed one).
func Chromium(t testing.TB) string {
	t.Helper()
	for _, name := range []string{"chromium", "chromium-browser", "google-chrome"} {
		if p, err := exec.LookPath(name); err == nil {
			return p
		}
	}
	if os.Getenv("CI") == "true" {
		t.Fatal("no Chromium found; scripts/deps.sh installs it (apt-get install -y chromium)")
	}
	t.Skip("SKIPPED, integration test not run: no Chromium found (apt-get install -y chromium)")
	return ""
}

// AllocatorOptions start headless Chromium at exe with a fresh profile in
// dir, and without the background connections (updates, sync, QUIC probes)
// that a machine with no network outside loopback refuses, many at a time.
func AllocatorOptions(exe, dir string) []chromedp.ExecAllocatorOption {
	return append(chromedp.DefaultExecAllocatorOptions[:],
		chromedp.ExecPath(exe),
		chromedp.NoSandbox,
		chromedp.DisableGPU,
		chromedp.UserDataDir(dir),
		chromedp.Flag("disable-quic", true),
		chromedp.Flag("disable-background-networking", true),
		chromedp.Flag("disable-component-update", true),
		chromedp.Flag("disable-sync", true),
	)
}

// Browser is one headless Chromium with its own profile: one fan, with their
// own cookies. Its pages (tabs) share them.
type Browser struct {
	ctx context.Context
}

// NewBrowser starts a browser that the test's cleanup stops.
func NewBrowser(t testing.TB, exe string) *Browser {
	t.Helper()
	opts := append(AllocatorOptions(exe, t.TempDir()), chromedp.Flag("hide-scrollbars", false))
	alloc, cancelAlloc := chromedp.NewExecAllocator(context.Background(), opts...)
	ctx, cancel := chromedp.NewContext(alloc)
	// The first Run starts the browser; it must not carry a timeout.
	if err := chromedp.Do(ctx); err != nil {
		cancel()
		cancelAlloc()
		t.Fatalf("starting %s: %v", exe, err)
	}
	t.Cleanup(func() { cancel(); cancelAlloc() })
	return &Browser{ctx: ctx}
}

// Page is one tab, with everything the page wrote to the console since it
// opened.
type Page struct {
	t   testing.TB
	Ctx context.Context
	JS  bool

	mu      sync.Mutex
	console []chromedp.ConsoleMessage
}

// Page opens a tab in the browser, with JavaScript on or off, 1280 px wide.
// Every action on it is bounded by two minutes in all.
func (b *Browser) Page(t testing.TB, js bool) *Page {
	t.Helper()
	tab, cancelTab := chromedp.NewContext(b.ctx)
	p := &Page{t: t, JS: js}
	if err := chromedp.Do(tab); err != nil {
		t.Fatalf("opening a tab: %v", err)
	}
	messages := chromedp.Console(tab)
	go func() {
		for m, err := range messages {
			if err != nil {
				return
			}
			p.mu.Lock()
			p.console = append(p.console, m)
			p.mu.Unlock()
		}
	}()
	ctx, cancelTimeout := context.WithTimeout(tab, 2*time.Minute)
	t.Cleanup(func() { cancelTimeout(); cancelTab() })
	p.Ctx = ctx
	if !js {
		p.scripts(false)
	}
	p.Width(Widths[0])
	return p
}

// scripts turns the page's JavaScript on or off.
func (p *Page) scripts(on bool) {
	p.t.Helper()
	if _, err := chromedp.Call(p.Ctx, emulation.SetScriptExecutionDisabled, emulation.SetScriptExecutionDisabledParams{Value: !on}); err != nil {
		p.t.Fatalf("turning JavaScript on=%v: %v", on, err)
	}
}

// Do runs the steps, failing the test on an error.
func (p *Page) Do(steps ...chromedp.Action[chromedp.Void]) {
	p.t.Helper()
	if err := chromedp.Do(p.Ctx, steps...); err != nil {
		p.t.Fatalf("browser: %v", err)
	}
}

// Eval evaluates a JavaScript expression in the page and awaits its promise.
// With the page's scripts off it still runs (DevTools evaluates it), but its
// timers and promises never settle.
func Eval[T any](p *Page, expr string) T {
	p.t.Helper()
	v, err := chromedp.Run(p.Ctx, chromedp.Evaluate[T](expr, chromedp.EvalAwaitPromise))
	if err != nil {
		p.t.Fatalf("evaluating %s: %v", firstLine(expr), err)
	}
	return v
}

// Width lays the page out at w CSS pixels: a phone's (mobile, touch) below
// 600, a desktop's otherwise.
func (p *Page) Width(w int) {
	p.t.Helper()
	if w < 600 {
		p.Do(chromedp.EmulateViewport(int64(w), 844, chromedp.EmulateMobile))
	} else {
		p.Do(chromedp.EmulateViewport(int64(w), 900))
	}
	// Lay the page out at the new width before anyone measures it.
	_ = Eval[int](p, `document.documentElement.getBoundingClientRect().width | 0`)
}

// ConsoleErrors returns the errors the page wrote to the console (uncaught
// exceptions, console.error, failed loads and policy violations in the
// browser's log) since the last call.
func (p *Page) ConsoleErrors() []string {
	p.mu.Lock()
	defer p.mu.Unlock()
	var out []string
	for _, m := range p.console {
		if m.Type == chromedp.ConsoleError || m.IsException() {
			out = append(out, fmt.Sprintf("%s (%s)", m.String(), m.URL))
		}
	}
	p.console = nil
	return out
}

func firstLine(s string) string {
	s, _, _ = strings.Cut(strings.TrimSpace(s), "\n")
	if len(s) > 80 {
		s = s[:80] + "…"
	}
	return s
}
