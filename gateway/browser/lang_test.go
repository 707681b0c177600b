package browser

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/caddyserver/caddy/v2/modules/caddyhttp"
	"github.com/chromedp/cdproto/emulation"
	"github.com/chromedp/cdproto/network"
	"github.com/chromedp/chromedp"

	"github.com/foyer-dev/foyer/gateway"
	"github.com/foyer-dev/foyer/internal/browsertest"
	"github.com/foyer-dev/foyer/waitingroom"
	"github.com/foyer-dev/foyer/waitingroom/memstore"
	"github.com/foyer-dev/foyer/waitingroom/storetest"
)

// The languages the browser tests walk the page in: one written right to
// left, one in a script without spaces, one with long words.
var browserLanguages = []struct{ code, dir string }{{"ar", "rtl"}, {"ja", "ltr"}, {"de", "ltr"}}

// axe runs axe-core's WCAG 2.0–2.2 A and AA rules on the tab's page and fails
// the test for each violation. A tab with JavaScript off has it turned on for
// the check: the page was parsed and laid out without it, and turning it on
// runs none of the page's own scripts.
func (f *tab) axe(src, when string) {
	f.t.Helper()
	if !f.js {
		if _, err := chromedp.Call(f.ctx, emulation.SetScriptExecutionDisabled, emulation.SetScriptExecutionDisabledParams{Value: false}); err != nil {
			f.t.Fatal(err)
		}
		defer func() {
			_, _ = chromedp.Call(f.ctx, emulation.SetScriptExecutionDisabled, emulation.SetScriptExecutionDisabledParams{Value: true})
		}()
	}
	loaded, err := chromedp.Run(f.ctx, chromedp.Evaluate[bool](`typeof window.axe === "object"`))
	if err != nil {
		f.t.Fatalf("%s: %v", f.name, err)
	}
	if !loaded {
		if _, err := chromedp.Run(f.ctx, chromedp.Evaluate[bool](src+"\n;true")); err != nil {
			f.t.Fatalf("%s: loading axe-core: %v", f.name, err)
		}
	}
	tags, _ := json.Marshal(browsertest.AxeTags)
	out, err := chromedp.Run(f.ctx, chromedp.Evaluate[string](`axe.run(document, {runOnly: {type: "tag", values: `+string(tags)+`}, resultTypes: ["violations"]})
		.then((r) => JSON.stringify(r.violations))`, chromedp.EvalAwaitPromise))
	if err != nil {
		f.t.Fatalf("%s: axe: %v", f.name, err)
	}
	var vs []browsertest.Violation
	if err := json.Unmarshal([]byte(out), &vs); err != nil {
		f.t.Fatalf("axe's answer: %v", err)
	}
	for _, v := range vs {
		f.t.Errorf("%s, %s: axe: %s", f.name, when, v)
	}
}

// langOf reads the page's language and direction.
func (f *tab) langOf() (string, string) {
	f.t.Helper()
	s, err := chromedp.Run(f.ctx, chromedp.Evaluate[string](`document.documentElement.lang + " " + document.documentElement.dir`))
	if err != nil {
		f.t.Fatalf("%s: %v", f.name, err)
	}
	lang, dir, _ := strings.Cut(s, " ")
	return lang, dir
}

// acceptLanguage makes the tab's requests say the browser's language.
func (f *tab) acceptLanguage(v string) {
	f.t.Helper()
	if _, err := chromedp.Call(f.ctx, network.Enable, network.EnableParams{}); err != nil {
		f.t.Fatalf("%s: network: %v", f.name, err)
	}
	if _, err := chromedp.Call(f.ctx, network.SetExtraHTTPHeaders, network.SetExtraHTTPHeadersParams{Headers: network.Headers{"Accept-Language": v}}); err != nil {
		f.t.Fatalf("%s: Accept-Language: %v", f.name, err)
	}
}

// TestBrowserWaitingPageInLanguages walks a fan through the waiting page's
// states (held by queue_all, moving, next, paused, the store away, sold out)
// in Arabic (chosen by the browser's Accept-Language), Japanese and German
// (chosen from the page's menu), at a phone's and a desktop's width, with
// JavaScript on and off. In every state the page is in the language and
// direction asked for, says the catalog's headline, passes axe-core's WCAG
// 2.0–2.2 A and AA rules (meta-refresh among them) and writes no error to
// the console; a screenshot of each is kept.
func TestBrowserWaitingPageInLanguages(t *testing.T) {
	if testing.Short() {
		t.Skip("starts a browser")
	}
	t.Parallel()
	browser := headlessBrowser(t)
	axeSrc := browsertest.AxeSource(t)
	dir := artifactDir(t)
	for _, lang := range browserLanguages {
		for _, w := range pageWidths {
			t.Run(lang.code+"-"+w.name, func(t *testing.T) {
				clock := newTestClock()
				flaky := storetest.NewFlaky(memstore.New())
				h := newRoom(t, gateway.Handler{Settings: waitingroom.Settings{
					Title: "Browser night", NewUsersPerMinute: 60, TotalActiveUsers: 4, SessionDuration: time.Hour, QueueAll: true,
				}}, flaky, clock.Now)
				room := h.LiveRoom()
				ctx := context.Background()
				for range 4 {
					if _, err := room.Join(ctx); err != nil {
						t.Fatal(err)
					}
				}
				tick := func(n int) {
					for range n {
						clock.Advance(time.Second)
						_ = room.Tick(ctx)
					}
				}
				patch := func(s waitingroom.Settings, names ...string) {
					t.Helper()
					if _, err := room.Patch(ctx, waitingroom.OverridesOf(s, names...)); err != nil {
						t.Fatal(err)
					}
					tick(1)
				}
				site := serveHandler(t, h)
				name := lang.code + "-" + w.name
				fan := newBrowserFan(t, browser, name, w.width, true)
				url := site + "/events/42"
				if lang.code == "ar" {
					fan.acceptLanguage("ar-EG,ar;q=0.9,en;q=0.5")
					fan.open(url)
				} else {
					fan.open(url + "?lang=" + lang.code) // the menu's link; the cookie keeps it
				}
				noJS := fan.sibling(name+" without JavaScript", w.width, false)
				if lang.code == "ar" {
					noJS.acceptLanguage("ar-EG,ar;q=0.9,en;q=0.5")
				}
				check := func(step, variant string) {
					t.Helper()
					live := fan.await(variant, func(s shown) bool { return s.Variant == variant })
					want := headline(h, lang.code, strings.TrimSuffix(variant, variantReconnecting))
					if live.Headline != want {
						t.Errorf("%s: headline %q, want %q", step, live.Headline, want)
					}
					if l, d := fan.langOf(); l != lang.code || d != lang.dir {
						t.Errorf("%s: lang=%q dir=%q, want %q %q", step, l, d, lang.code, lang.dir)
					}
					fan.axe(axeSrc, step)
					fan.shot(dir, fmt.Sprintf("%s-js-%s", name, step))
					fan.noErrors(step)

					noJS.open(url)
					plain := noJS.read()
					if plain.Headline != want || plain.Variant != live.Variant || plain.Position != live.Position {
						t.Errorf("%s: without JavaScript the page reads %+v, with it %+v", step, plain, live)
					}
					if l, d := noJS.langOf(); l != lang.code || d != lang.dir {
						t.Errorf("%s without JavaScript: lang=%q dir=%q", step, l, d)
					}
					noJS.axe(axeSrc, step+" without JavaScript")
					noJS.shot(dir, fmt.Sprintf("%s-nojs-%s", name, step))
					noJS.noErrors(step)
				}

				check("queue_all", variantQueueAll)
				patch(waitingroom.Settings{}, "queue_all")
				check("queued", variantQueued)
				tick(4)
				check("next", variantNext)
				patch(waitingroom.Settings{Paused: true}, "paused")
				check("paused", variantPaused)
				flaky.SetDown(true)
				tick(3)
				check("reconnecting", variantPaused+variantReconnecting)
				flaky.SetDown(false)
				tick(1) // the node sees the store again before the operator acts
				patch(waitingroom.Settings{SoldOut: true}, "sold_out")
				check("sold_out", variantSoldOut)
			})
		}
	}
}

// TestBrowserRefusalsInLanguages opens the pages a newcomer may meet before
// they have a place: not open yet, the store away (503), the slow-down page
// (429, over join_limit) and the puzzle's page without JavaScript, in each
// language at both widths: in the language asked for, with axe-core's WCAG
// rules passing (no timed refresh: meta-refresh) and no console error but
// the document's own status.
func TestBrowserRefusalsInLanguages(t *testing.T) {
	if testing.Short() {
		t.Skip("starts a browser")
	}
	t.Parallel()
	browser := headlessBrowser(t)
	axeSrc := browsertest.AxeSource(t)
	dir := artifactDir(t)
	// Each case runs a room on a clock of its own, from the moment its
	// settings are written for.
	now := time.Now().Truncate(time.Second)
	limit, err := waitingroom.ParseJoinLimit("1/h")
	if err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		name     string
		settings waitingroom.Settings
		prepare  func(h *gateway.Handler, clock *testClock, flaky *storetest.Flaky)
		status   int
		js       bool
		// headline is the catalog key of the page's heading.
		headline string
	}{
		{name: "not_open", settings: waitingroom.Settings{PrequeueStart: now.Add(time.Hour), EventStart: now.Add(2 * time.Hour)}, js: true, headline: "not_open.headline"},
		{name: "not_open-nojs", settings: waitingroom.Settings{PrequeueStart: now.Add(time.Hour), EventStart: now.Add(2 * time.Hour)}, headline: "not_open.headline"},
		{name: "unavailable", status: http.StatusServiceUnavailable, js: true, headline: "unavailable.headline",
			prepare: func(h *gateway.Handler, clock *testClock, flaky *storetest.Flaky) {
				flaky.SetDown(true)
				for range 3 {
					clock.Advance(time.Second)
					_ = h.LiveRoom().Tick(context.Background())
				}
			}},
		{name: "slow_down", status: http.StatusTooManyRequests, settings: waitingroom.Settings{JoinLimit: limit}, headline: "slowdown.title",
			prepare: func(h *gateway.Handler, _ *testClock, _ *storetest.Flaky) {
				// Another browser on the fan's network took the hour's place.
				req := httptest.NewRequest(http.MethodGet, "http://example.test/events/42", nil)
				req.RemoteAddr = "127.0.0.1:1"
				rec := httptest.NewRecorder()
				if err := h.ServeHTTP(rec, req, caddyhttp.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) error {
					_, err := w.Write([]byte("origin"))
					return err
				})); err != nil || rec.Code != http.StatusOK {
					panic(fmt.Sprint(rec.Code, err))
				}
			}},
		{name: "challenge-nojs", settings: waitingroom.Settings{Challenge: waitingroom.Challenge{PoWBits: waitingroom.DefaultPoWBits}}, headline: "challenge.headline"},
	}
	for _, lang := range browserLanguages {
		for _, w := range pageWidths {
			for _, tc := range cases {
				name := lang.code + "-" + w.name + "-" + tc.name
				t.Run(name, func(t *testing.T) {
					flaky := storetest.NewFlaky(memstore.New())
					s := tc.settings
					s.Title = "Browser night"
					clock := newTestClockAt(now)
					h := newRoom(t, gateway.Handler{Settings: s}, flaky, clock.Now)
					if tc.prepare != nil {
						tc.prepare(h, clock, flaky)
					}
					site := serveHandler(t, h)
					fan := newBrowserFan(t, browser, name, w.width, tc.js)
					fan.acceptLanguage(lang.code)
					fan.open(site + "/events/42")
					want := h.Message(lang.code, tc.headline)
					got, err := chromedp.Run(fan.ctx, chromedp.Evaluate[string](`document.querySelector("h1").textContent`))
					if err != nil || got != want {
						t.Errorf("heading %q (%v), want %q", got, err, want)
					}
					if l, d := fan.langOf(); l != lang.code || d != lang.dir {
						t.Errorf("lang=%q dir=%q, want %q %q", l, d, lang.code, lang.dir)
					}
					fan.axe(axeSrc, tc.name)
					fan.shot(dir, name)
					if tc.status != 0 {
						fan.noErrors(tc.name, tc.status)
					} else {
						fan.noErrors(tc.name)
					}
				})
			}
		}
	}
}

// TestBrowserChallengeExplainsSlowDown: a second browser on the same network,
// over join_limit, solves the puzzle and is refused 429: the page says, in
// its language, how long it waits before it tries again by itself, and the
// console stays clean (the page's answer is told the refusal with 200 and
// the error in the body, as its polls are). Before, it read "That did not
// work. Trying again in 2 s…" and logged the 429.
func TestBrowserChallengeExplainsSlowDown(t *testing.T) {
	if testing.Short() {
		t.Skip("starts a browser")
	}
	t.Parallel()
	limit, err := waitingroom.ParseJoinLimit("1/m")
	if err != nil {
		t.Fatal(err)
	}
	// The room reads the wall clock: the test moves no time of its own.
	h := newRoom(t, gateway.Handler{Settings: waitingroom.Settings{
		Title: "Puzzle night", TotalActiveUsers: 1, NewUsersPerMinute: 60, JoinLimit: limit,
		Challenge: waitingroom.Challenge{PoWBits: waitingroom.DefaultPoWBits},
	}}, nil, nil)
	site := serveHandler(t, h)
	browser := headlessBrowser(t)
	first := newBrowserFan(t, browser, "first", 1280, true)
	first.open(site + "/events/42?lang=de")
	if err := chromedp.Do(first.ctx, chromedp.WaitVisible("#shop")); err != nil {
		t.Fatalf("the first fan never reached the shop: %v", err)
	}
	second := newBrowserFan(t, browser, "second", 390, true)
	second.open(site + "/events/42?lang=de")
	words := h.Message("de", "challenge.too_many")
	before, _, _ := strings.Cut(words, "{s}")
	deadline := time.Now().Add(30 * time.Second)
	var msg string
	for time.Now().Before(deadline) {
		msg, _ = chromedp.Run(second.ctx, chromedp.Evaluate[string](`(document.getElementById("challenge-message") || {}).textContent || ""`))
		if strings.HasPrefix(msg, before) {
			break
		}
		time.Sleep(100 * time.Millisecond)
	}
	if !strings.HasPrefix(msg, before) {
		t.Fatalf("the refused fan reads %q, want the catalog's %q", msg, words)
	}
	var secs int
	if _, err := fmt.Sscanf(strings.TrimPrefix(msg, before), "%d", &secs); err != nil || secs < 1 || secs > 60 {
		t.Errorf("the wait in %q: %d %v, want Retry-After's seconds", msg, secs, err)
	}
	second.noErrors("refused over join_limit")
	first.noErrors("in the shop")
}
