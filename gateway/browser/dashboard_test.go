package browser

import (
	"context"
	"encoding/base64"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/chromedp/cdproto/network"
	"github.com/chromedp/chromedp"
	"golang.org/x/crypto/bcrypt"
)

// consoleProblems collects what a page reports as errors: console errors and
// warnings, uncaught exceptions, and the browser's own log entries at those
// levels (failed loads, what the content security policy refused, ...).
type consoleProblems struct {
	mu   sync.Mutex
	list []string
}

// watch subscribes to the page's console now, so that nothing the page
// writes after it returns is missed, and collects until ctx ends.
func (c *consoleProblems) watch(ctx context.Context) {
	messages := chromedp.Console(ctx)
	go func() {
		for m, err := range messages {
			if err != nil {
				return
			}
			switch m.Type {
			case chromedp.ConsoleError, chromedp.ConsoleWarning, chromedp.ConsoleException:
				c.mu.Lock()
				c.list = append(c.list, m.String()+" "+m.URL)
				c.mu.Unlock()
			}
		}
	}()
}

func (c *consoleProblems) all() []string {
	c.mu.Lock()
	defer c.mu.Unlock()
	return append([]string(nil), c.list...)
}

// dashboardArtifacts is where the browser tests keep their screenshots:
// $FOYER_ARTIFACTS, or foyer-artifacts in the temporary directory. They are
// the run's record, never committed.
func dashboardArtifacts(t *testing.T) string {
	t.Helper()
	dir := os.Getenv("FOYER_ARTIFACTS")
	if dir == "" {
		dir = filepath.Join(os.TempDir(), "foyer-artifacts")
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	return dir
}

// dashboardSites is two rooms and the dashboard behind basic_auth, as
// docs/operations.md shows it (gateway/testdata/dashboard-sites.caddyfile).
func dashboardSites(t *testing.T) string {
	t.Helper()
	hash, err := bcrypt.GenerateFromPassword([]byte(dashPassword), bcrypt.MinCost)
	if err != nil {
		t.Fatal(err)
	}
	sites, err := os.ReadFile("../testdata/dashboard-sites.caddyfile")
	if err != nil {
		t.Fatal(err)
	}
	return strings.ReplaceAll(string(sites), "{hash}", string(hash))
}

const dashPassword = "correct horse"

// TestBrowserDashboard: an operator opens the dashboard in a real browser,
// behind basic_auth. It shows every room of the node, its figures follow fans
// joining without a reload, the charts are drawn, the markup names what a
// screen reader needs, and the page logs no error.
func TestBrowserDashboard(t *testing.T) {
	if testing.Short() {
		t.Skip("starts a browser")
	}
	t.Parallel()
	newCaddy(t, caddyConfig(t.TempDir(), dashboardSites(t)))
	for range 3 { // one let in, two waiting
		newFan(t).get(base + "/events/1")
	}

	ctx := newFanContext(t, headlessBrowser(t))
	var problems consoleProblems
	problems.watch(ctx)
	auth := "Basic " + base64.StdEncoding.EncodeToString([]byte("ops:"+dashPassword))
	if _, err := chromedp.Call(ctx, network.SetExtraHTTPHeaders, network.SetExtraHTTPHeadersParams{Headers: network.Headers{"Authorization": auth}}); err != nil {
		t.Fatal(err)
	}
	if err := chromedp.Do(ctx, chromedp.EmulateViewport(1280, 900), chromedp.Navigate(base+"/ops/dashboard")); err != nil {
		t.Fatal(err)
	}
	waitFor(t, ctx, "the live stream", `document.getElementById("conn").textContent.startsWith("Live")`)

	rooms, err := chromedp.Run(ctx, chromedp.Evaluate[[]string](`Array.from(document.querySelectorAll("section.room h2")).map(h => h.textContent.trim())`))
	if err != nil {
		t.Fatal(err)
	}
	if len(rooms) != 2 || rooms[0] != "dash-a Night A" || rooms[1] != "dash-b" {
		t.Fatalf("rooms shown: %q, want dash-a (Night A) and dash-b", rooms)
	}

	cell := func(room, key string) string {
		js := fmt.Sprintf(`document.querySelector('#rooms [data-room=%q] [data-key=%q]').textContent`, room, key)
		if key == "joins" {
			js = fmt.Sprintf(`document.querySelector('section[data-room=%q] [data-key="joins"]').textContent`, room)
		}
		s, err := chromedp.Run(ctx, chromedp.Evaluate[string](js))
		if err != nil {
			t.Fatal(err)
		}
		return s
	}
	waitFor(t, ctx, "two waiting in dash-a", `document.querySelector('#rooms [data-room="dash-a"] [data-key="waiting"]').textContent === "2"`)
	if got := cell("dash-a", "joins"); got != "3" {
		t.Fatalf("dash-a joins %q, want 3", got)
	}

	// Fans join while the operator watches: the page follows, with no reload.
	if _, err := chromedp.Run(ctx, chromedp.Evaluate[bool](`window.notReloaded = true`)); err != nil {
		t.Fatal(err)
	}
	for range 5 {
		newFan(t).get(base + "/events/1")
	}
	start := time.Now()
	waitFor(t, ctx, "seven waiting in dash-a", `document.querySelector('#rooms [data-room="dash-a"] [data-key="waiting"]').textContent === "7"`)
	t.Logf("the page showed the new fans %v after they joined", time.Since(start).Round(10*time.Millisecond))
	if got := cell("dash-a", "joins"); got != "8" {
		t.Fatalf("dash-a joins %q, want 8", got)
	}
	if kept, err := chromedp.Run(ctx, chromedp.Evaluate[bool](`window.notReloaded === true`)); err != nil || !kept {
		t.Fatalf("the page reloaded to show new figures (%v)", err)
	}
	waitFor(t, ctx, "the waiting line drawn", `!!document.querySelector('section[data-room="dash-a"] figure[data-chart="line"] svg path.s1')`)

	// Names and roles: one h1, a heading per room, every table named, every
	// chart an image named by its caption and described by its latest values.
	faults, err := chromedp.Run(ctx, chromedp.Evaluate[[]string](`(() => {
		const f = [];
		if (document.querySelectorAll("h1").length !== 1) f.push("not one h1");
		document.querySelectorAll("section").forEach(s => {
			const id = s.getAttribute("aria-labelledby");
			if (!id || !document.getElementById(id) || !/^H[23]$/.test(document.getElementById(id).tagName)) f.push("section without a heading: " + s.id);
		});
		document.querySelectorAll("table").forEach((t, i) => {
			const named = t.querySelector("caption") || (t.getAttribute("aria-labelledby") && document.getElementById(t.getAttribute("aria-labelledby")));
			if (!named) f.push("table " + i + " has no name");
			if (!t.querySelector("th[scope]")) f.push("table " + i + " has no header cells");
		});
		const charts = document.querySelectorAll("figure[data-chart] svg");
		if (charts.length !== 8) f.push(charts.length + " charts, want 8");
		charts.forEach((svg, i) => {
			if (svg.getAttribute("role") !== "img") f.push("chart " + i + " is not an image");
			const ids = (svg.getAttribute("aria-labelledby") || "").split(" ");
			const text = ids.map(id => (document.getElementById(id) || {}).textContent || "").join(" ").trim();
			if (ids.length < 2 || !text.includes("Now:") && !text.includes("No samples")) f.push("chart " + i + " is named " + JSON.stringify(text));
		});
		return f;
	})()`))
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range faults {
		t.Error(f)
	}

	dir := dashboardArtifacts(t)
	for _, width := range []int64{1280, 390} {
		if err := chromedp.Do(ctx, chromedp.EmulateViewport(width, 900)); err != nil {
			t.Fatal(err)
		}
		// Nothing but the rooms' table (a scrolling region of its own) is
		// wider than the screen.
		wide, err := chromedp.Run(ctx, chromedp.Evaluate[int64](`document.documentElement.scrollWidth`))
		if err != nil {
			t.Fatal(err)
		}
		if wide > width {
			t.Errorf("at %d px the page is %d px wide", width, wide)
		}
		png, err := chromedp.Run(ctx, chromedp.FullScreenshot(100))
		if err != nil {
			t.Fatal(err)
		}
		name := filepath.Join(dir, "dashboard-"+strconv.FormatInt(width, 10)+".png")
		if err := os.WriteFile(name, png, 0o644); err != nil {
			t.Fatal(err)
		}
		t.Logf("screenshot: %s", name)
	}
	if p := problems.all(); len(p) > 0 {
		t.Fatalf("the page logged %d problems:\n%s", len(p), strings.Join(p, "\n"))
	}
}

// waitFor waits up to 10 s for a JavaScript condition to hold in the page.
func waitFor(t *testing.T, ctx context.Context, what, cond string) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for {
		ok, err := chromedp.Run(ctx, chromedp.Evaluate[bool](cond))
		if err == nil && ok {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("waiting for %s: %v", what, err)
		}
		time.Sleep(100 * time.Millisecond)
	}
}
