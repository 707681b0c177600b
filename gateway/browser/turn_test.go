package browser

import (
	"context"
	"encoding/json"
	"fmt"
	"strconv"
	"strings"
	"testing"
	"time"

	cdpbrowser "github.com/chromedp/cdproto/browser"
	"github.com/chromedp/cdproto/network"
	"github.com/chromedp/cdproto/page"
	"github.com/chromedp/chromedp"

	"github.com/foyer-dev/foyer/gateway"
	"github.com/foyer-dev/foyer/internal/browsertest"
	"github.com/foyer-dev/foyer/waitingroom"
	"github.com/foyer-dev/foyer/waitingroom/memstore"
)

// hiddenTab makes the tab's pages report themselves hidden
// (document.hidden, visibilityState) until window.foyerTestShow() is called,
// which shows them and fires visibilitychange, as a fan coming back to the
// tab does. Headless Chromium shows every tab, so the visibility is emulated
// in the page, before the page's own script runs. The tab also records each
// notification the page raises (window.foyerTestNotes), which a headless
// browser shows nowhere.
const hiddenTab = `(function () {
  var hidden = true;
  Object.defineProperty(Document.prototype, "hidden", { configurable: true, get: function () { return hidden; } });
  Object.defineProperty(Document.prototype, "visibilityState", { configurable: true, get: function () { return hidden ? "hidden" : "visible"; } });
  window.foyerTestNotes = [];
  var N = window.Notification;
  if (N) {
    var Spy = function (title, opts) { window.foyerTestNotes.push(title + " | " + (opts && opts.body)); return new N(title, opts); };
    Object.defineProperty(Spy, "permission", { get: function () { return N.permission; } });
    Spy.requestPermission = N.requestPermission.bind(N);
    window.Notification = Spy;
  }
  window.foyerTestShow = function () { hidden = false; document.dispatchEvent(new Event("visibilitychange")); };
})();`

// turnShown is what a page shows of a fan's turn: the tab's title, its icon
// and the assertive live region.
type turnShown struct {
	Title string   `json:"title"`
	Icon  string   `json:"icon"`
	Alert string   `json:"alert"`
	Live  string   `json:"live"`
	Shop  bool     `json:"shop"`
	Notes []string `json:"notes"`
}

const readTurn = `JSON.stringify({
  title: document.title,
  icon: (document.querySelector("link[rel~=icon]") || {}).href || "",
  alert: (document.getElementById("turn-alert") || {}).textContent || "",
  live: (document.getElementById("turn-alert") || {getAttribute: function () { return ""; }}).getAttribute("aria-live") || "",
  shop: !!document.getElementById("shop"),
  notes: window.foyerTestNotes || []
})`

func (f *tab) turn() turnShown {
	f.t.Helper()
	var s turnShown
	raw, err := chromedp.Run(f.ctx, chromedp.Evaluate[string](readTurn))
	if err != nil {
		f.t.Fatalf("%s: %v", f.name, err)
	}
	if err := json.Unmarshal([]byte(raw), &s); err != nil {
		f.t.Fatalf("%s: %v", f.name, err)
	}
	return s
}

// setNotifications sets the fan's answer to the page's question about
// notifications (granted, denied, or not asked yet: prompt), so that no
// prompt is ever shown.
func (f *tab) setNotifications(site string, setting cdpbrowser.PermissionSetting) {
	f.t.Helper()
	c := chromedp.FromContext(f.ctx)
	if _, err := chromedp.CallBrowser(f.ctx, cdpbrowser.SetPermission, cdpbrowser.SetPermissionParams{
		Permission: &cdpbrowser.PermissionDescriptor{Name: "notifications"}, Setting: setting,
		Origin: site, BrowserContextID: c.BrowserContextID,
	}); err != nil {
		f.t.Fatalf("%s: notifications %s: %v", f.name, setting, err)
	}
}

// TestBrowserYourTurn: a fan waits, with JavaScript on, in a room held by
// queue_all; the operator lifts it and the fan's turn comes. In a tab in
// view, the page changes the tab's title and icon, says so in its assertive
// live region, and goes on to the site. In a hidden tab it does the same,
// raises the notification the fan allowed, and stays put until the fan comes
// back to the tab, then goes on to the site. The "Tell me when it's my turn"
// button is shown to a fan not yet asked, and reached with the Tab key. Every
// page passes axe-core and writes no error to the console.
func TestBrowserYourTurn(t *testing.T) {
	if testing.Short() {
		t.Skip("starts a browser")
	}
	t.Parallel()
	headless := headlessBrowser(t)
	axeSrc := browsertest.AxeSource(t)
	dir := artifactDir(t)
	clock := newTestClock()
	h := newRoom(t, gateway.Handler{Settings: waitingroom.Settings{
		Title: "Turn night", NewUsersPerMinute: 60, TotalActiveUsers: 10, SessionDuration: time.Hour, QueueAll: true,
	}}, memstore.New(), clock.Now)
	room := h.LiveRoom()
	ctx := context.Background()
	site := serveHandler(t, h)
	wantTitle := englishT(h, "turn.title") + " · Turn night"
	wantAlert := englishT(h, "turn.announce")

	// One fan looks at the page; the other has gone to another tab, after
	// allowing notifications.
	inView := newBrowserFan(t, headless, "in view", 1280, true)
	inView.setNotifications(site, cdpbrowser.PermissionSettingPrompt)
	away := newBrowserFan(t, headless, "away", 390, true)
	away.setNotifications(site, cdpbrowser.PermissionSettingGranted)
	if _, err := chromedp.Call(away.ctx, page.AddScriptToEvaluateOnNewDocument, page.AddScriptToEvaluateOnNewDocumentParams{Source: hiddenTab}); err != nil {
		t.Fatal(err)
	}
	for _, f := range []*tab{inView, away} {
		f.open(site + "/events/42")
		f.await(variantQueueAll, func(s shown) bool { return s.Variant == variantQueueAll })
		if s := f.turn(); s.Title == wantTitle || s.Alert != "" || strings.HasPrefix(s.Icon, "data:image/svg") || s.Live != "assertive" {
			t.Errorf("%s: before the turn the page shows %+v", f.name, s)
		}
		f.axe(axeSrc, "waiting")
	}

	// The button, for a fan not asked yet: shown, and reached by keyboard.
	if _, err := chromedp.Run(inView.ctx, chromedp.Evaluate[bool](`document.activeElement && document.activeElement.blur(), true`)); err != nil {
		t.Fatal(err)
	}
	reached := false
	for range 12 {
		if err := chromedp.Do(inView.ctx, chromedp.KeyEvent("\t")); err != nil {
			t.Fatal(err)
		}
		id, err := chromedp.Run(inView.ctx, chromedp.Evaluate[string](`document.activeElement ? document.activeElement.id : ""`))
		if err != nil {
			t.Fatal(err)
		}
		if id == "notify" {
			reached = true
			break
		}
	}
	label, err := chromedp.Run(inView.ctx, chromedp.Evaluate[string](`(function () { var b = document.getElementById("notify"); return b && !b.hidden && b.getBoundingClientRect().height > 0 ? b.textContent : ""; })()`))
	if err != nil {
		t.Fatal(err)
	}
	if label != englishT(h, "turn.notify_button") || !reached {
		t.Errorf("the notify button reads %q (want %q) and was reached by Tab: %v", label, englishT(h, "turn.notify_button"), reached)
	}
	inView.shot(dir, "waiting-notify-focused")

	// The operator lifts queue_all: the fan in view is told at once that
	// they are next (their page reloads into that variant), the hidden tab
	// that it is in line. The first step lets the fan in view in, and tells
	// the hidden tab it is next.
	if _, err := room.Patch(ctx, waitingroom.OverridesOf(waitingroom.Settings{}, "queue_all")); err != nil {
		t.Fatal(err)
	}
	inView.await(variantNext, func(s shown) bool { return s.Variant == variantNext })
	step := func() {
		clock.Advance(time.Second)
		if err := room.Tick(ctx); err != nil {
			t.Fatal(err)
		}
	}
	step()

	// In view: the page shows the turn for a moment, then goes to the site.
	var seen turnShown
	deadline := time.Now().Add(10 * time.Second)
	for !seen.Shop && time.Now().Before(deadline) {
		s := inView.turn()
		if s.Shop {
			seen.Shop = true
			break
		}
		if s.Title == wantTitle {
			seen.Title, seen.Icon, seen.Alert = s.Title, s.Icon, s.Alert
		}
		time.Sleep(50 * time.Millisecond)
	}
	if seen.Title != wantTitle || !strings.HasPrefix(seen.Icon, "data:image/svg+xml,") || seen.Alert != wantAlert {
		t.Errorf("in view, the turn was shown as %+v; want title %q, an SVG icon and %q", seen, wantTitle, wantAlert)
	}
	if !seen.Shop {
		t.Errorf("in view, the fan was not taken to the site: %+v", inView.turn())
	}
	inView.noErrors("your turn, in view")

	// The hidden tab heard it is next (a new variant of the page) but did
	// not reload: nobody looks at it, and were its reload to land after its
	// turn came, the fan's own URL would take them to the site behind their
	// back. Then the next steps let it in.
	if s := away.turn(); s.Shop {
		t.Fatal("the hidden tab went on to the site before its turn")
	}
	var hiddenPage shown
	if raw, err := chromedp.Run(away.ctx, chromedp.Evaluate[string](readPage)); err != nil || json.Unmarshal([]byte(raw), &hiddenPage) != nil {
		t.Fatalf("reading the hidden tab: %v", err)
	}
	if hiddenPage.Variant != variantQueueAll {
		t.Errorf("the hidden tab reloaded into %q while nobody looked at it", hiddenPage.Variant)
	}
	step()
	step()

	// Away: the page shows the turn, notifies, and waits for the fan.
	var got turnShown
	deadline = time.Now().Add(10 * time.Second)
	for time.Now().Before(deadline) {
		if got = away.turn(); got.Title == wantTitle || got.Shop {
			break
		}
		time.Sleep(100 * time.Millisecond)
	}
	if got.Shop {
		t.Fatal("the hidden tab went on to the site before the fan came back to it")
	}
	if got.Title != wantTitle || !strings.HasPrefix(got.Icon, "data:image/svg+xml,") || got.Alert != wantAlert {
		t.Errorf("in a hidden tab, the turn is shown as %+v; want title %q, an SVG icon and %q", got, wantTitle, wantAlert)
	}
	if want := wantTitle + " | " + wantAlert; len(got.Notes) != 1 || got.Notes[0] != want {
		t.Errorf("in a hidden tab, with notifications allowed, the page raised %q; want one: %q", got.Notes, want)
	}
	away.shot(dir, "your-turn-hidden")
	away.axe(axeSrc, "your turn, hidden")
	time.Sleep(2 * time.Second) // longer than a tab in view waits before it goes
	if s := away.turn(); s.Shop || s.Title != wantTitle {
		t.Errorf("the hidden tab did not wait for the fan: %+v", s)
	}
	if _, err := chromedp.Run(away.ctx, chromedp.Evaluate[bool](`window.foyerTestShow(), true`)); err != nil {
		t.Fatal(err)
	}
	if err := chromedp.Do(away.ctx, chromedp.WaitVisible("#shop")); err != nil {
		t.Fatalf("back at the tab, the fan was not taken to the site: %v", err)
	}
	away.noErrors("your turn, back at the tab")
}

// TestBrowserLeave: a fan with JavaScript off leaves the line from the
// waiting page, at a phone's and a desktop's width: the form asks them to
// confirm, confirming says they have left, their ticket cookie is gone, and
// coming back puts them at the back of the line, behind those who joined
// after them. Each page passes axe-core and writes no error to the console.
func TestBrowserLeave(t *testing.T) {
	if testing.Short() {
		t.Skip("starts a browser")
	}
	t.Parallel()
	headless := headlessBrowser(t)
	axeSrc := browsertest.AxeSource(t)
	dir := artifactDir(t)
	for _, w := range pageWidths {
		t.Run(w.name, func(t *testing.T) {
			clock := newTestClock()
			// One fan inside fills the room; two wait ahead of ours.
			h := newRoom(t, gateway.Handler{Settings: waitingroom.Settings{
				Title: "Leave night", NewUsersPerMinute: 60, TotalActiveUsers: 1, SessionDuration: time.Hour,
			}}, memstore.New(), clock.Now)
			room := h.LiveRoom()
			ctx := context.Background()
			join := func(n int) {
				for range n {
					if _, err := room.Join(ctx); err != nil {
						t.Fatal(err)
					}
				}
			}
			join(3)
			site := serveHandler(t, h)
			fan := newBrowserFan(t, headless, w.name, w.width, false)
			fan.open(site + "/events/42")
			before := fan.await(variantQueued, func(s shown) bool { return s.Variant == variantQueued })
			ticket := fan.cookie(site, "foyer_ticket")
			if ticket == "" {
				t.Fatal("no ticket cookie in line")
			}
			fan.axe(axeSrc, "waiting")
			join(2) // behind our fan

			fan.clickAndLoad(`#leave button[type=submit]`)
			if got := fan.text("h1"); got != englishT(h, "leave.confirm_headline") {
				t.Fatalf("after Leave the line, the page says %q, want %q", got, englishT(h, "leave.confirm_headline"))
			}
			if fan.cookie(site, "foyer_ticket") != ticket {
				t.Error("asking to confirm already gave the place up")
			}
			fan.shot(dir, w.name+"-leave-confirm")
			fan.axe(axeSrc, "confirm")

			fan.clickAndLoad(`#leave-confirm`)
			if got := fan.text("h1"); got != englishT(h, "leave.done_headline") {
				t.Fatalf("after confirming, the page says %q, want %q", got, englishT(h, "leave.done_headline"))
			}
			if c := fan.cookie(site, "foyer_ticket"); c != "" {
				t.Errorf("the ticket cookie is still there after leaving: %q", c)
			}
			fan.shot(dir, w.name+"-left")
			fan.axe(axeSrc, "left")

			clock.Advance(time.Second)
			if err := room.Tick(ctx); err != nil {
				t.Fatal(err)
			}
			fan.clickAndLoad(`#join-again`)
			after := fan.await(variantQueued, func(s shown) bool { return s.Variant == variantQueued })
			again := fan.cookie(site, "foyer_ticket")
			if again == "" || again == ticket {
				t.Errorf("coming back, the ticket is %q; want a new one", again)
			}
			// Two waited ahead and two joined behind: back, the fan is
			// behind all four.
			if want := fmt.Sprint(mustAtoi(t, before.Position) + 2); after.Position != want {
				t.Errorf("coming back, the fan is at %q; was at %q with two behind, so want %q", after.Position, before.Position, want)
			}
			fan.shot(dir, w.name+"-back")
			fan.axe(axeSrc, "back in line")
			fan.noErrors("leaving")
		})
	}
}

// cookie is the value of the tab's cookie name for site, "" when it has none.
func (f *tab) cookie(site, name string) string {
	f.t.Helper()
	res, err := chromedp.Call(f.ctx, network.GetCookies, network.GetCookiesParams{URLs: []string{site + "/"}})
	if err != nil {
		f.t.Fatal(err)
	}
	for _, c := range res.Cookies {
		if c.Name == name {
			return c.Value
		}
	}
	return ""
}

// clickAndLoad clicks the element (with the mouse, so that a form posts
// without JavaScript) and waits for the page it leads to.
func (f *tab) clickAndLoad(sel string) {
	f.t.Helper()
	if err := chromedp.Do(f.ctx, chromedp.Click(sel, chromedp.NodeVisible)); err != nil {
		f.t.Fatalf("%s: clicking %s: %v", f.name, sel, err)
	}
	deadline := time.Now().Add(10 * time.Second)
	for {
		gone, err := chromedp.Run(f.ctx, chromedp.Evaluate[bool](`document.readyState === "complete" && !document.querySelector(`+strconv.Quote(sel)+`)`))
		if err == nil && gone {
			return
		}
		if time.Now().After(deadline) {
			f.t.Fatalf("%s: clicking %s led nowhere (%v)", f.name, sel, err)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

func (f *tab) text(sel string) string {
	f.t.Helper()
	s, err := chromedp.Run(f.ctx, chromedp.Text(sel))
	if err != nil {
		f.t.Fatalf("%s: %s: %v", f.name, sel, err)
	}
	return strings.TrimSpace(s)
}

func mustAtoi(t *testing.T, s string) int {
	t.Helper()
	n, err := strconv.Atoi(s)
	if err != nil {
		t.Fatalf("position %q: %v", s, err)
	}
	return n
}
