package browser

import (
	"context"
	"crypto/rand"
	"crypto/sha256"
	"encoding/binary"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/cdproto/emulation"
	"github.com/chromedp/cdproto/network"
	"github.com/chromedp/chromedp"

	"github.com/foyer-dev/foyer/gateway"
	"github.com/foyer-dev/foyer/waitingroom"
)

// powSite serves a room that asks newcomers for the default proof of work,
// in front of a page that says which URL it was asked for. Its room reads
// the wall clock: these tests move no time of their own.
func powSite(t *testing.T) (*gateway.Handler, string) {
	t.Helper()
	h := newRoom(t, gateway.Handler{Settings: waitingroom.Settings{
		Title: "Puzzle night", TotalActiveUsers: 1, NewUsersPerMinute: 60,
		Challenge: waitingroom.Challenge{PoWBits: waitingroom.DefaultPoWBits},
	}}, nil, nil)
	return h, serveSite(t, h, shopPage, nil)
}

func browserCookie(t *testing.T, ctx context.Context, name string) string {
	t.Helper()
	cookies, err := chromedp.Call(ctx, network.GetCookies, network.GetCookiesParams{})
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range cookies.Cookies {
		if c.Name == name {
			return c.Value
		}
	}
	return ""
}

// TestBrowserSolvesTheChallenge: a real browser on a room asking the default
// proof of work is shown the puzzle page, solves it in a Web Worker, answers,
// and is let in to the URL it asked for with a ticket and a pass, with no
// click. A second browser, with the room full, solves its own and waits in
// line holding a ticket. Then the worker's speed is measured on the page, for
// the figures of docs/bots.md.
func TestBrowserSolvesTheChallenge(t *testing.T) {
	if testing.Short() {
		t.Skip("starts a browser")
	}
	t.Parallel()
	h, site := powSite(t)
	room := h.LiveRoom()
	headless := headlessBrowser(t)

	first := newFanContext(t, headless)
	start := time.Now()
	if err := chromedp.Do(first, chromedp.Navigate(site+"/events/42")); err != nil {
		t.Fatalf("first fan: %v", err)
	}
	if err := chromedp.Do(first, chromedp.WaitVisible("#shop")); err != nil {
		t.Fatalf("first fan never reached the shop: %v", err)
	}
	t.Logf("first fan: puzzle page to shop in %v", time.Since(start))
	text, err := chromedp.Run(first, chromedp.Text("#shop"))
	if err != nil || text != "Seats for /events/42" {
		t.Fatalf("first fan sees %q %v, want the shop at the URL asked for", text, err)
	}
	if _, err := room.CheckPass(browserCookie(t, first, "foyer_pass")); err != nil {
		t.Fatalf("first fan's pass: %v", err)
	}
	if browserCookie(t, first, "foyer_ticket") == "" {
		t.Fatal("first fan holds no ticket")
	}

	second := newFanContext(t, headless)
	if err := chromedp.Do(second, chromedp.Navigate(site+"/events/42?section=A")); err != nil {
		t.Fatalf("second fan: %v", err)
	}
	if err := chromedp.Do(second, chromedp.WaitVisible("#position")); err != nil {
		t.Fatalf("second fan never reached the line: %v", err)
	}
	headline, err := chromedp.Run(second, chromedp.Text("h1"))
	if err != nil || !strings.Contains(headline, "next") && !strings.Contains(headline, "in line") {
		t.Fatalf("second fan's page says %q %v, want the line", headline, err)
	}
	tk, err := room.OpenTicket(browserCookie(t, second, "foyer_ticket"))
	if err != nil {
		t.Fatalf("second fan's ticket: %v", err)
	}
	if tk.Key != 1 {
		t.Fatalf("second fan's place %d, want 1 (behind the first)", tk.Key)
	}
	if n := room.Stats().Joins.Load(); n != 2 {
		t.Fatalf("%d places made for two fans", n)
	}

	// The worker's speed: the page's own solver, on fresh random seeds of
	// the real length, at the default bits.
	const runs = 8
	got, err := chromedp.Run(first, chromedp.Evaluate[[]float64](`(async () => {
		const out = [];
		for (let i = 0; i < `+strconv.Itoa(runs)+`; i++) {
			const seed = new Uint8Array(38); crypto.getRandomValues(seed);
			const b64 = btoa(String.fromCharCode(...seed)).replace(/\+/g, "-").replace(/\//g, "_").replace(/=+$/, "");
			const w = new Worker("/_waiting-room/pow-worker.js");
			const r = await new Promise(res => { w.onmessage = ev => { if (ev.data.nonce !== undefined) res(ev.data); }; w.postMessage({seed: b64, bits: `+strconv.Itoa(waitingroom.DefaultPoWBits)+`}); });
			w.terminate();
			out.push(r.tries, r.ms);
		}
		return out;
	})()`, chromedp.EvalAwaitPromise))
	if err != nil {
		t.Fatalf("measuring the worker: %v", err)
	}
	var tries, ms float64
	for i := 0; i+1 < len(got); i += 2 {
		tries += got[i]
		ms += got[i+1]
	}
	browserRate := tries / ms * 1000
	// A bot's rate in the same run: Go's SHA-256 on one core, the same
	// kind of seeds and bits, as a client of the contract would write it.
	goTries, goStart := 0, time.Now()
	for range runs {
		msg := make([]byte, 38, 64)
		_, _ = rand.Read(msg)
		for n := int64(0); ; n++ {
			goTries++
			sum := sha256.Sum256(strconv.AppendInt(msg, n, 10))
			if lead := binary.BigEndian.Uint32(sum[:4]); lead>>(32-waitingroom.DefaultPoWBits) == 0 {
				break
			}
		}
	}
	goRate := float64(goTries) / time.Since(goStart).Seconds()
	expect := func(rate float64) float64 { return float64(uint64(1)<<waitingroom.DefaultPoWBits) / rate * 1000 }
	t.Logf("at %d bits: headless Chromium's worker %.2f M hashes/s (%.0f ms a place on average), Go on one core %.2f M hashes/s (%.0f ms); the bot is %.1fx the browser",
		waitingroom.DefaultPoWBits, browserRate/1e6, expect(browserRate), goRate/1e6, expect(goRate), goRate/browserRate)
}

// TestBrowserWithoutJavaScriptIsToldTheSaleNeedsIt: with scripts off, the
// puzzle page says that this sale needs JavaScript, and no place is made.
func TestBrowserWithoutJavaScriptIsToldTheSaleNeedsIt(t *testing.T) {
	if testing.Short() {
		t.Skip("starts a browser")
	}
	t.Parallel()
	h, site := powSite(t)
	ctx := newFanContext(t, headlessBrowser(t))
	if _, err := chromedp.Call(ctx, emulation.SetScriptExecutionDisabled, emulation.SetScriptExecutionDisabledParams{Value: true}); err != nil {
		t.Fatal(err)
	}
	if err := chromedp.Do(ctx, chromedp.Navigate(site+"/events/42")); err != nil {
		t.Fatal(err)
	}
	if err := chromedp.Do(ctx, chromedp.WaitVisible("#needs-js")); err != nil {
		t.Fatalf("no notice that the sale needs JavaScript: %v", err)
	}
	text, err := chromedp.Run(ctx, chromedp.Text("#needs-js"))
	if err != nil || !strings.Contains(text, "This sale needs JavaScript") {
		t.Fatalf("notice %q %v", text, err)
	}
	// The page's script shows the solver's progress at once; it never ran.
	if attr, err := chromedp.Run(ctx, chromedp.AttributeValue("#challenge-work", "hidden")); err != nil || !attr.Exists {
		t.Fatalf("the solver's progress is shown (%v) without JavaScript", err)
	}
	if n := h.LiveRoom().Stats().Joins.Load(); n != 0 || browserCookie(t, ctx, "foyer_ticket") != "" {
		t.Fatalf("%d places made for a browser without JavaScript", n)
	}
}
