package main

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
	"github.com/chromedp/chromedp/kb"

	"github.com/foyer-dev/foyer/internal/browsertest"
)

// The storefront as fans meet it: the demo Caddyfile's gateway in front of
// the booking service, a real headless Chromium at a desktop's and a phone's
// width, with JavaScript on and off. Every page state is checked the same
// way (shopChecks.check) and kept as a screenshot of each width.

// jsNotice is what the storefront said without JavaScript before its pages
// were rendered on the server: a dead end no page may show again.
const jsNotice = "needs JavaScript"

// shopChecks checks page states and keeps their screenshots.
type shopChecks struct {
	t   *testing.T
	axe string
}

// check looks at the page as it is, at each width: axe's WCAG rules (contrast,
// names, roles, target size), seats of at least 24 × 24 px whose colours stand
// out 3:1 from the map, a page no wider than the screen, no stray "null" or
// "undefined" on screen, no console error; and keeps a screenshot.
//
// expected names URLs whose refusal is what the state is about: the browser
// logs every 4xx answer to a fetch as a console error, the page's own
// handling of it aside.
func (s shopChecks) check(p *browsertest.Page, state string, expected ...string) {
	t := s.t
	t.Helper()
	suffix := ""
	if !p.JS {
		suffix = "-nojs"
	}
	for _, w := range browsertest.Widths {
		p.Width(w)
		name := fmt.Sprintf("%s%s-%d", state, suffix, w)
		p.Screenshot(name)
		// Ticket codes are random letters: they may spell anything.
		text := browsertest.Eval[string](p, `[...document.querySelectorAll("code")].reduce((t, c) => t.replace(c.innerText, ""), document.body.innerText)`)
		if m := regexp.MustCompile(`\b(null|undefined|NaN)\b`).FindString(text); m != "" {
			t.Errorf("%s: the page shows %q:\n%s", name, m, text)
		}
		for _, v := range p.Axe(s.axe) {
			t.Errorf("%s: accessibility: %s", name, v)
		}
		small := browsertest.Eval[[]string](p, `[...document.querySelectorAll("rect.seat")]
			.map((r) => [r, r.getBoundingClientRect()])
			.filter(([, b]) => b.width < 24 || b.height < 24)
			.map(([r, b]) => r.getAttribute("aria-label") + ": " + b.width.toFixed(1) + " × " + b.height.toFixed(1) + " px")`)
		if len(small) > 0 {
			t.Errorf("%s: %d seats are smaller than 24 × 24 px to touch, such as %s", name, len(small), small[0])
		}
		// The page reflows to the width (WCAG 1.4.10): only the seat map
		// may scroll sideways, inside its own box.
		if wide := browsertest.Eval[int](p, `document.documentElement.scrollWidth`); wide > w {
			t.Errorf("%s: the page is %d px wide on a %d px screen, so it scrolls sideways", name, wide, w)
		}
		for class, ratio := range browsertest.Eval[map[string]float64](p, seatContrast) {
			if ratio < 3 {
				t.Errorf("%s: seats %q stand out %.2f:1 from the map, want 3:1", name, class, ratio)
			}
		}
	}
next:
	for _, e := range p.ConsoleErrors() {
		for _, url := range expected {
			if strings.HasSuffix(e, "("+url+")") {
				continue next
			}
		}
		t.Errorf("%s%s: console error: %s", state, suffix, e)
	}
}

// seatContrast is, for each kind of seat on the map and in its legend, the
// contrast of its colour against the map's background (WCAG 2.1's formula).
const seatContrast = `(() => {
	const lum = (c) => {
		const [r, g, b] = c.match(/[\d.]+/g).slice(0, 3).map((v) => {
			v = Number(v) / 255;
			return v <= 0.03928 ? v / 12.92 : Math.pow((v + 0.055) / 1.055, 2.4);
		});
		return 0.2126 * r + 0.7152 * g + 0.0722 * b;
	};
	const ratio = (a, b) => { const [x, y] = [lum(a), lum(b)].sort((p, q) => q - p); return (x + 0.05) / (y + 0.05); };
	const map = document.querySelector(".map");
	const out = {};
	if (!map) return out;
	const bg = getComputedStyle(map).backgroundColor;
	for (const r of map.querySelectorAll("rect.seat")) {
		const k = r.getAttribute("class");
		if (!(k in out)) out[k] = ratio(getComputedStyle(r).fill, bg);
	}
	// The legend shows every kind, those no seat has right now too.
	for (const i of map.querySelectorAll(".legend i")) {
		out["legend " + i.className] = ratio(getComputedStyle(i).backgroundColor, bg);
	}
	return out;
})()`

// waitFor polls a JavaScript condition until it holds, failing after 30 s.
func waitFor(t *testing.T, p *browsertest.Page, what, cond string) {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for !browsertest.Eval[bool](p, `!!(`+cond+`)`) {
		if time.Now().After(deadline) {
			text := browsertest.Eval[string](p, `location.pathname + "\n" + document.body.innerText`)
			t.Fatalf("waiting for %s: not within 30 s; the page is at %s", what, text)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// tapped waits up to wait for the third picked seat.
func tapped(p *browsertest.Page, wait time.Duration) bool {
	deadline := time.Now().Add(wait)
	for !browsertest.Eval[bool](p, `document.querySelectorAll('rect.seat[aria-selected="true"]').length === 3`) {
		if time.Now().After(deadline) {
			return false
		}
		time.Sleep(100 * time.Millisecond)
	}
	return true
}

func pageShows(text string) string {
	q, _ := json.Marshal(text)
	return `document.querySelector("main") && document.querySelector("main").innerText.includes(` + string(q) + `)`
}

// checkNoJS looks at a page loaded with JavaScript off: it has its own
// heading, no dead end asking for JavaScript, and nothing claims to be
// loading.
func (s shopChecks) checkNoJS(p *browsertest.Page, state string) {
	t := s.t
	t.Helper()
	if h1 := strings.TrimSpace(browsertest.Eval[string](p, `document.querySelector("main h1") ? document.querySelector("main h1").innerText : ""`)); h1 == "" {
		t.Errorf("%s without JavaScript: no h1", state)
	}
	body := browsertest.Eval[string](p, `document.body.innerText`)
	if strings.Contains(body, jsNotice) || strings.Contains(body, "Loading") {
		t.Errorf("%s without JavaScript: the page asks for JavaScript or says it is loading:\n%s", state, body)
	}
	s.check(p, state)
}

func firstWords(s string) string {
	if len(s) > 60 {
		return s[:60] + "…"
	}
	return s
}

// TestStorefrontInBrowser walks two fans through the storefront behind the
// demo gateway. One picks seats by keyboard and by touch, holds, pays and gets
// tickets; once they are delivered the origin revokes the session, and the
// page, reloaded, still shows the order and tickets from its signed link, with
// no join and no slot taken. The other's payment is declined. A tampered
// link, or one of another order, is refused.
func TestStorefrontInBrowser(t *testing.T) {
	exe := browsertest.Chromium(t)
	s := shopChecks{t: t, axe: browsertest.AxeSource(t)}
	// Webhooks are held back, so the order page shows its pending state long
	// enough to be reloaded and looked at on a busy machine.
	d := startDemo(t, "storefront-admin", "-fake-pay-delay", "10s")

	fan := browsertest.NewBrowser(t, exe)
	p := fan.Page(t, true)
	p.Do(chromedp.Navigate(d.base + "/"))
	waitFor(t, p, "the events", pageShows("On sale now"))
	s.check(p, "events")

	noJS := fan.Page(t, false)
	noJS.Do(chromedp.Navigate(d.base + "/"))
	s.checkNoJS(noJS, "events")

	p.Do(chromedp.Click(`a[href^="/events/"]`))
	waitFor(t, p, "the seat map", `document.querySelector('rect.seat.a[tabindex="0"]')`)
	s.check(p, "event")
	eventPath := browsertest.Eval[string](p, `location.pathname`)
	noJS.Do(chromedp.Navigate(d.base + eventPath))
	s.checkNoJS(noJS, "event")

	// The keyboard path: Space picks the focused seat, an arrow moves to the
	// next.
	p.Width(1280)
	// Focused from the page itself, in one step: the map is redrawn as seats
	// change, and a node looked up first and focused after may be gone.
	browsertest.Eval[bool](p, `(document.querySelector('rect.seat[tabindex="0"]').focus(), true)`)
	p.Do(chromedp.KeyEvent(" "), chromedp.KeyEvent(kb.ArrowRight), chromedp.KeyEvent(" "))
	waitFor(t, p, "two seats picked by keyboard", `document.querySelectorAll('rect.seat[aria-selected="true"]').length === 2`)
	// Touch, on a phone: a tap on a free seat picks it. The point is taken
	// once the narrowed page has settled (two frames, the seat where it was,
	// and the seat the topmost element there), and a tap the page did not
	// see (one CI run lost it to a layout still moving) is tried again on
	// a free seat: a tap that lands picks exactly one seat, so three stays
	// the count to reach.
	p.Width(390)
	for try := 1; ; try++ {
		tap := browsertest.Eval[[]float64](p, `(async () => {
			const frame = () => new Promise((r) => requestAnimationFrame(() => requestAnimationFrame(r)));
			for (let i = 0; i < 50; i++) {
				const r = document.querySelectorAll('rect.seat.a[aria-selected="false"]')[4];
				r.scrollIntoView({block: "center", inline: "center"});
				const b = r.getBoundingClientRect();
				await frame();
				const c = r.getBoundingClientRect();
				const x = c.x + c.width / 2, y = c.y + c.height / 2;
				if (r.isConnected && b.x === c.x && b.y === c.y && document.elementFromPoint(x, y) === r) return [x, y];
			}
			return [];
		})()`)
		if len(tap) != 2 {
			t.Fatal("no free seat settled under its own point to tap")
		}
		p.Do(chromedp.TapXY(tap[0], tap[1]))
		if tapped(p, 5*time.Second) || try == 3 {
			break
		}
		t.Logf("tap %d at (%.0f, %.0f) picked no seat; tapping again", try, tap[0], tap[1])
	}
	waitFor(t, p, "a third seat picked by touch", `document.querySelectorAll('rect.seat[aria-selected="true"]').length === 3`)
	s.check(p, "picked")

	// Clicked from the page itself: a click at the button's coordinates can
	// land on the seat map when it is redrawn in between, picking a fourth
	// seat instead of holding (seen in one CI run).
	browsertest.Eval[bool](p, `(document.querySelector('section[aria-labelledby="pick-h"] button').click(), true)`)
	waitFor(t, p, "the hold", `document.getElementById("hold-h")`)
	s.check(p, "held")

	p.Do(chromedp.Click(`.hold button:not(.secondary)`))
	waitFor(t, p, "the pay page", `document.querySelector('button[value="pay"]')`)
	s.check(p, "pay")
	p.Do(chromedp.Click(`button[value="pay"]`))
	waitFor(t, p, "the pending order", pageShows("Waiting for the payment"))
	// Reloaded while the payment is pending, the page is still the fan's:
	// their session goes on (and ends when the tickets are shown), no join.
	pending := d.room(t)
	p.Do(chromedp.Reload())
	waitFor(t, p, "the pending order after a reload", pageShows("Waiting for the payment"))
	if now := d.room(t); now != pending {
		t.Errorf("reloading the pending order: room went from %+v to %+v", pending, now)
	}
	s.check(p, "order-pending")
	waitFor(t, p, "the tickets", `document.querySelectorAll(".ticket code").length === 3`)
	s.check(p, "order-paid")

	// Delivered: the origin revoked the session, and the slot is free.
	deadline := time.Now().Add(10 * time.Second)
	for d.room(t).Slots != 0 {
		if time.Now().After(deadline) {
			t.Fatalf("the fan's slot was not freed after delivery: %+v", d.room(t))
		}
		time.Sleep(100 * time.Millisecond)
	}
	link := browsertest.Eval[string](p, `location.pathname`)
	if !strings.HasPrefix(link, "/tickets/") {
		t.Errorf("after delivery the page is at %s, want its signed order link /tickets/…", link)
	}
	before := d.room(t)

	p.Do(chromedp.Reload())
	waitFor(t, p, "the tickets after a reload", `document.querySelectorAll(".ticket code").length === 3`)
	s.check(p, "order-link")
	noJS.Do(chromedp.Navigate(d.base + link))
	s.checkNoJS(noJS, "order-link")
	if after := d.room(t); after != before {
		t.Errorf("reloading the order after the session ended: room went from %+v to %+v, want no join and no slot", before, after)
	}

	// The link works with no cookie at all, and only as it was signed.
	orderID, mac, _ := strings.Cut(strings.TrimPrefix(link, "/tickets/"), ".")
	var order struct {
		ID      string `json:"id"`
		Tickets []struct {
			Delivery *struct {
				Code string `json:"code"`
			} `json:"delivery"`
		} `json:"tickets"`
	}
	status, body := get(t, d.base+"/api/tickets/"+orderID+"."+mac)
	if err := json.Unmarshal(body, &order); status != http.StatusOK || err != nil || order.ID != orderID || len(order.Tickets) != 3 || order.Tickets[0].Delivery == nil {
		t.Errorf("GET the order link without a pass = %d %s", status, body)
	}
	tampered := orderID + "." + flipLast(mac)
	wantRefused(t, d.base+"/api/tickets/"+tampered)
	wantRefused(t, d.base+"/api/tickets/"+orderID)
	wantRefused(t, d.base+"/api/tickets/"+orderID+".")
	wantRefused(t, d.base+"/api/tickets/not-an-order."+mac)
	p.Do(chromedp.Navigate(d.base + "/tickets/" + tampered))
	waitFor(t, p, "the refusal of a tampered link", pageShows("This link does not open an order"))
	s.check(p, "order-link-invalid", d.base+"/api/tickets/"+tampered, d.base+"/tickets/"+tampered)

	// A second fan, whose payment is declined.
	other := browsertest.NewBrowser(t, exe).Page(t, true)
	other.Do(chromedp.Navigate(d.base + eventPath))
	waitFor(t, other, "the seat map", `document.querySelector("rect.seat")`)
	other.Do(chromedp.Click(`section[aria-labelledby="ba-h"] button`))
	waitFor(t, other, "the hold", `document.getElementById("hold-h")`)
	other.Do(chromedp.Click(`.hold button:not(.secondary)`))
	waitFor(t, other, "the pay page", `document.querySelector('button[value="decline"]')`)
	other.Do(chromedp.Click(`button[value="decline"]`))
	waitFor(t, other, "the declined order", pageShows("declined"))
	s.check(other, "order-declined")
	otherID, _, _ := strings.Cut(strings.TrimPrefix(browsertest.Eval[string](other, `location.pathname`), "/tickets/"), ".")
	otherID = strings.TrimPrefix(otherID, "/orders/")
	// The first order's signature does not open the second order.
	wantRefused(t, d.base+"/api/tickets/"+otherID+"."+mac)

	for _, url := range []string{d.base + "/favicon.ico", d.booking.url + "/favicon.ico"} {
		before := d.room(t)
		resp, err := http.Get(url)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != http.StatusOK || !strings.HasPrefix(resp.Header.Get("Content-Type"), "image/") {
			t.Errorf("GET %s = %d %s, want an icon", url, resp.StatusCode, resp.Header.Get("Content-Type"))
		}
		if after := d.room(t); after != before {
			t.Errorf("GET %s joined the room: %+v → %+v", url, before, after)
		}
	}
}

func get(t *testing.T, url string) (int, []byte) {
	t.Helper()
	resp, err := (&http.Client{Timeout: 10 * time.Second}).Get(url)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, body
}

// wantRefused: a bad order link gets a 4xx with a JSON error, and shows no
// order.
func wantRefused(t *testing.T, url string) {
	t.Helper()
	status, body := get(t, url)
	var e struct {
		Error string `json:"error"`
		ID    string `json:"id"`
	}
	if err := json.Unmarshal(body, &e); err != nil || status < 400 || status > 499 || e.Error == "" || e.ID != "" {
		t.Errorf("GET %s = %d %s, want a 4xx JSON error", url, status, body)
	}
}

func flipLast(s string) string {
	if s == "" {
		return "A"
	}
	last := s[len(s)-1]
	if last == 'A' {
		last = 'B'
	} else {
		last = 'A'
	}
	return s[:len(s)-1] + string(last)
}
