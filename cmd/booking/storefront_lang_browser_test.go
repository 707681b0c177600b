package main

import (
	"testing"
	"time"

	"github.com/chromedp/chromedp"
	"github.com/chromedp/chromedp/kb"

	"github.com/foyer-dev/foyer/internal/browsertest"
)

// TestStorefrontLanguagesInBrowser walks the storefront behind the demo
// gateway in Arabic (right to left) and English, at a phone's and a
// desktop's width, JavaScript on and off: every state passes axe-core with
// no console error; a fan with JavaScript off buys best-available seats
// with the server's forms alone; a fan with it on picks seats with the
// arrow keys and reaches "Hold" in a few keys; on a phone the map opens on
// the stage.
func TestStorefrontLanguagesInBrowser(t *testing.T) {
	exe := browsertest.Chromium(t)
	s := shopChecks{t: t, axe: browsertest.AxeSource(t)}
	d := startDemo(t, "storefront-lang-admin")

	for _, lang := range []string{"ar", "en"} {
		fan := browsertest.NewBrowser(t, exe)

		// JavaScript off: choose a language from the menu's link, then buy.
		noJS := fan.Page(t, false)
		noJS.Do(chromedp.Navigate(d.base + "/?lang=" + lang))
		wantLang(t, noJS, lang)
		s.checkNoJS(noJS, lang+"-events")
		noJS.Do(chromedp.Navigate(d.base + "/events/1"))
		wantLang(t, noJS, lang) // remembered in the cookie
		s.checkNoJS(noJS, lang+"-event")
		noJS.Do(chromedp.SetValue(`#ba-qty`, "2"), chromedp.Click(`section[aria-labelledby="ba-h"] button`))
		waitFor(t, noJS, "the hold page", `location.pathname.startsWith("/holds/") && document.querySelector(".hold li")`)
		if n := browsertest.Eval[int](noJS, `document.querySelectorAll(".hold li").length`); n != 2 {
			t.Errorf("%s: the no-script hold shows %d seats, want 2", lang, n)
		}
		s.checkNoJS(noJS, lang+"-hold")
		noJS.Do(chromedp.Click(`form[action$="/checkout"] button`))
		waitFor(t, noJS, "the pay page", `document.querySelector('button[value="pay"]')`)
		noJS.Do(chromedp.Click(`button[value="pay"]`))
		waitFor(t, noJS, "the order page", `location.pathname.startsWith("/orders/") && document.querySelector("main h1")`)
		deadline := time.Now().Add(15 * time.Second)
		for !browsertest.Eval[bool](noJS, `document.querySelectorAll(".ticket code").length === 2`) {
			if time.Now().After(deadline) {
				t.Fatalf("%s: the no-script order never showed its two tickets: %s", lang, browsertest.Eval[string](noJS, `document.body.innerText`))
			}
			time.Sleep(300 * time.Millisecond)
			noJS.Do(chromedp.Navigate(browsertest.Eval[string](noJS, `location.href`)))
		}
		if browsertest.Eval[string](noJS, `document.getElementById("back-note") ? document.getElementById("back-note").innerText : ""`) == "" {
			t.Errorf("%s: after buying, the way back to the event does not say it leads into the line", lang)
		}
		s.checkNoJS(noJS, lang+"-order")

		// JavaScript on: a keyboard-only pick.
		p := browsertest.NewBrowser(t, exe).Page(t, true)
		p.Do(chromedp.Navigate(d.base + "/events/1?lang=" + lang))
		waitFor(t, p, "the seat map", `document.querySelector('rect.seat[tabindex="0"]')`)
		wantLang(t, p, lang)
		if n := browsertest.Eval[int](p, `document.querySelectorAll('.map [tabindex="0"]').length`); n != 1 {
			t.Errorf("%s: the seat map has %d Tab stops, want 1", lang, n)
		}
		// On a phone the map opens on the stage, its section labels in view.
		p.Width(390)
		p.Do(chromedp.Reload())
		waitFor(t, p, "the seat map", `document.querySelector('rect.seat[tabindex="0"]')`)
		if off := browsertest.Eval[float64](p, `(() => {
			const box = document.querySelector(".seat-scroll").getBoundingClientRect();
			const st = document.querySelector(".stage-label").getBoundingClientRect();
			return Math.abs((st.left + st.right) / 2 - (box.left + box.right) / 2);
		})()`); off > 30 {
			t.Errorf("%s: on a phone the stage is %.0f px off the map's middle", lang, off)
		}
		s.check(p, lang+"-event")
		p.Width(1280)
		// Into the grid by Tab alone: skip link, home, menu, back, then the map.
		browsertest.Eval[bool](p, `(document.querySelector('rect.seat[tabindex="0"]').focus(), true)`)
		p.Do(chromedp.KeyEvent(" "), chromedp.KeyEvent(kb.ArrowRight), chromedp.KeyEvent(" "), chromedp.KeyEvent(kb.ArrowDown), chromedp.KeyEvent("\t"))
		waitFor(t, p, "two seats picked by the arrow keys", `document.querySelectorAll('rect.seat[aria-selected="true"]').length === 2`)
		if got := browsertest.Eval[string](p, `document.activeElement.closest('section[aria-labelledby="pick-h"]') ? "hold" : document.activeElement.outerHTML.slice(0, 80)`); got != "hold" {
			t.Errorf("%s: Tab from the seat map lands on %s, want the Hold button", lang, got)
		}
		p.Do(chromedp.KeyEvent("\r"))
		waitFor(t, p, "the hold", `document.getElementById("hold-h")`)
		s.check(p, lang+"-held")
	}
}

// wantLang checks the page is in lang, and right to left for Arabic.
func wantLang(t *testing.T, p *browsertest.Page, lang string) {
	t.Helper()
	got := browsertest.Eval[string](p, `document.documentElement.lang + " " + document.documentElement.dir`)
	want := lang + " ltr"
	if lang == "ar" || lang == "he" {
		want = lang + " rtl"
	}
	if got != want {
		t.Errorf("the page is lang/dir %q, want %q", got, want)
	}
}
