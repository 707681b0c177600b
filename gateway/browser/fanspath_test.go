package browser

import (
	"context"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/chromedp/cdproto/network"
	"github.com/chromedp/chromedp"

	"github.com/foyer-dev/foyer/gateway"
	"github.com/foyer-dev/foyer/waitingroom"
)

// TestBrowserWalksTheFansPath: a real browser joins, waits on the page, is taken
// to the site the moment its turn comes, with no click, and reaches the origin.
func TestBrowserWalksTheFansPath(t *testing.T) {
	if testing.Short() {
		t.Skip("starts a browser")
	}
	t.Parallel()
	clock := newTestClock()
	h := newRoom(t, gateway.Handler{Settings: waitingroom.Settings{Title: "Browser night", TotalActiveUsers: 1, NewUsersPerMinute: 60}}, nil, clock.Now)
	room := h.LiveRoom()
	site := serveSite(t, h, shopPage, nil)
	headless := headlessBrowser(t)

	first := newFanContext(t, headless)
	if err := chromedp.Do(first, chromedp.Navigate(site+"/events/42")); err != nil {
		t.Fatalf("first fan: %v", err)
	}
	text, err := chromedp.Run(first, chromedp.Text("#shop"))
	if err != nil {
		t.Fatalf("first fan: %v", err)
	}
	if text != "Seats for /events/42" {
		t.Fatalf("first fan sees %q, want the shop", text)
	}

	second := newFanContext(t, headless)
	if err := chromedp.Do(second, chromedp.Navigate(site+"/events/42?section=A")); err != nil {
		t.Fatalf("second fan: %v", err)
	}
	headline, err := chromedp.Run(second, chromedp.Text("h1"))
	if err != nil {
		t.Fatalf("second fan: %v", err)
	}
	if !strings.Contains(headline, "next") && !strings.Contains(headline, "in line") {
		t.Fatalf("second fan's page says %q, want the waiting page", headline)
	}

	// The first fan finishes; the second is let in by the next controller step
	// and their page takes them to the URL they asked for, by itself.
	script, err := chromedp.Run(first, chromedp.Evaluate[string](`document.cookie`))
	if err != nil {
		t.Fatal(err)
	}
	if script != "" {
		t.Fatalf("the fan's cookies are readable from JavaScript: %q", script)
	}
	cookies, err := chromedp.Call(first, network.GetCookies, network.GetCookiesParams{})
	if err != nil {
		t.Fatal(err)
	}
	var pass string
	for _, c := range cookies.Cookies {
		if c.Name == "foyer_pass" {
			pass = c.Value
		}
	}
	p, err := room.CheckPass(pass)
	if err != nil {
		t.Fatalf("the first fan's pass: %v", err)
	}
	if err := room.Revoke(context.Background(), p); err != nil {
		t.Fatal(err)
	}
	clock.Advance(time.Second)
	if err := room.Tick(context.Background()); err != nil {
		t.Fatal(err)
	}
	start := time.Now()
	if err := chromedp.Do(second, chromedp.WaitVisible("#shop")); err != nil {
		t.Fatalf("second fan was not taken to the shop: %v", err)
	}
	t.Logf("taken to the shop %v after the step", time.Since(start))
	if text, err = chromedp.Run(second, chromedp.Text("#shop")); err != nil {
		t.Fatal(err)
	}
	if text != "Seats for /events/42" {
		t.Fatalf("second fan landed on %q, want the URL they asked for", text)
	}
}

// TestBrowserReturnerWaitsOnThePage: a fan whose turn lapsed comes back, in a
// real browser, while the one slot is taken. The page says they are next, and
// asks the room by polling (each poll keeps the slot held for them), without
// reloading itself over and over; when the slot frees it takes them to the
// site, ahead of the fan who waits behind them.
func TestBrowserReturnerWaitsOnThePage(t *testing.T) {
	if testing.Short() {
		t.Skip("starts a browser")
	}
	t.Parallel()
	clock := newTestClock()
	h := newRoom(t, gateway.Handler{Settings: waitingroom.Settings{Title: "Returners", TotalActiveUsers: 1, NewUsersPerMinute: 60}}, nil, clock.Now)
	room := h.LiveRoom()
	var mu sync.Mutex
	pages, sockets, polls := 0, 0, 0
	site := serveSite(t, h, func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/html")
		_, _ = w.Write([]byte(`<!doctype html><title>Shop</title><h1 id="shop">Shop</h1>`))
	}, func(r *http.Request) {
		mu.Lock()
		defer mu.Unlock()
		switch {
		case strings.HasSuffix(r.URL.Path, "/ws"):
			sockets++
		case strings.HasSuffix(r.URL.Path, "/status"):
			polls++
		case r.URL.Path == "/events/42" && strings.Contains(r.Header.Get("Accept"), "text/html"):
			pages++
		}
	})
	tick := func(seconds int) {
		for range seconds {
			clock.Advance(time.Second)
			if err := room.Tick(context.Background()); err != nil {
				t.Fatal(err)
			}
		}
	}
	passOf := func(f *fan) waitingroom.Pass {
		p, err := room.CheckPass(f.cookie(site, "foyer_pass"))
		if err != nil {
			t.Fatalf("pass: %v", err)
		}
		return p
	}

	holder, lapsed := newFan(t), newFan(t)
	if _, body := holder.get(site + "/events/42"); body != `<!doctype html><title>Shop</title><h1 id="shop">Shop</h1>` {
		t.Fatalf("first fan: %q, want the shop", body)
	}
	lapsed.get(site + "/events/42")
	if err := room.Revoke(context.Background(), passOf(holder)); err != nil {
		t.Fatal(err)
	}
	tick(1) // the second fan's turn; they are away
	tick(int(waitingroom.DefaultAdmissionGrace/time.Second) + 1)
	inside := newFan(t) // walks into the free slot
	if _, body := inside.get(site + "/events/42"); !strings.Contains(body, `id="shop"`) {
		t.Fatalf("newcomer with a free slot: %q, want the shop", body)
	}
	behind := newFan(t)
	behind.get(site + "/events/42")

	ticket := lapsed.cookie(site, "foyer_ticket")
	ctx := newFanContext(t, headlessBrowser(t))
	if _, err := chromedp.Call(ctx, network.SetCookie, network.SetCookieParams{Name: "foyer_ticket", Value: ticket, URL: site + "/"}); err != nil {
		t.Fatal(err)
	}
	if err := chromedp.Do(ctx, chromedp.Navigate(site+"/events/42")); err != nil {
		t.Fatal(err)
	}
	headline, err := chromedp.Run(ctx, chromedp.Text("h1"))
	if err != nil || !strings.Contains(headline, "next") {
		t.Fatalf("returner's page: %q %v, want next", headline, err)
	}
	time.Sleep(3 * time.Second) // real time: the page's own polling
	mu.Lock()
	p, s, q := pages, sockets, polls
	mu.Unlock()
	if p != 1 || s != 0 || q < 1 {
		t.Fatalf("in 3 s the returner's page loaded %d times, opened %d live connections and polled %d times; want 1, 0 and at least 1", p, s, q)
	}
	if err := room.Revoke(context.Background(), passOf(inside)); err != nil {
		t.Fatal(err)
	}
	tick(1)
	if err := chromedp.Do(ctx, chromedp.WaitVisible("#shop")); err != nil {
		t.Fatalf("the returner was not taken to the shop: %v", err)
	}
	if st := behind.status(site); st.State == waitingroom.StateAdmitted {
		t.Fatal("the fan behind was let in with the returner")
	}
}
