package browser

import (
	"context"
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/cdproto/network"
	"github.com/chromedp/cdproto/storage"
	"github.com/chromedp/chromedp"
)

// TestBrowserEmbeddedRoomIsAdmitted: a real browser that blocks third-party
// cookies opens an artist's page (shop.test) that shows the room (room.test,
// another site) in an iframe, both over HTTPS with Caddy's own CA. The fan
// waits inside the iframe, keeps their place from poll to poll, and is taken
// to the site inside the iframe once the line moves: the room's cookies are
// partitioned under the artist's site, and an unpartitioned cookie from the
// same iframe is dropped, which shows the browser really blocks third-party
// cookies. Without cookie_partitioned the fan is a newcomer on every poll and
// never gets in.
func TestBrowserEmbeddedRoomIsAdmitted(t *testing.T) {
	if testing.Short() {
		t.Skip("starts a browser and Caddy")
	}
	t.Parallel()
	port := freePort()
	shop := "https://shop.test:" + strconv.Itoa(port)
	roomSite := "https://room.test:" + strconv.Itoa(port)
	newCaddy(t, caddyConfig(t.TempDir(), fmt.Sprintf(`
	%[1]s {
		tls internal
		header Content-Type "text/html; charset=utf-8"
		respond `+"`"+`<!doctype html><title>Artist</title>
<script>window.got = []; addEventListener("message", e => { if (e.origin === "%[2]s") window.got.push(e.data) })</script>
<iframe id="room" src="%[2]s/events/1" width="600" height="400"></iframe>
<iframe id="probe" src="%[2]s/probe"></iframe>`+"`"+` 200
	}
	%[2]s {
		tls internal
		@probe path /probe
		route {
			header @probe Set-Cookie "probe=1; Path=/; Max-Age=600; SameSite=None; Secure"
			respond @probe "probe" 200
			waiting_room {
				room embed
				queue_all
				cookie_samesite none
				cookie_partitioned
			}
			header Content-Type "text/html; charset=utf-8"
			respond `+"`"+`<!doctype html><title>Shop</title><p>In.</p><script>parent.postMessage("admitted " + location.pathname, "*")</script>`+"`"+` 200
		}
	}`, shop, roomSite)))

	ctx := headlessBrowserWith(t,
		chromedp.Flag("host-resolver-rules", "MAP shop.test 127.0.0.1, MAP room.test 127.0.0.1"),
		chromedp.Flag("ignore-certificate-errors", true),
		chromedp.Flag("test-third-party-cookie-phaseout", true),
	)
	ctx, cancelTimeout := context.WithTimeout(ctx, 90*time.Second)
	defer cancelTimeout()
	if _, err := chromedp.Call(ctx, network.SetCookieControls, network.SetCookieControlsParams{EnableThirdPartyCookieRestriction: true}); err != nil {
		t.Fatalf("blocking third-party cookies: %v", err)
	}
	if err := chromedp.Do(ctx, chromedp.Navigate(shop+"/")); err != nil {
		t.Fatalf("opening the artist's page: %v", err)
	}

	cookies := func() map[string]*network.Cookie {
		res, err := chromedp.Call(ctx, storage.GetCookies, storage.GetCookiesParams{})
		if err != nil {
			t.Fatalf("reading the cookies: %v", err)
		}
		out := map[string]*network.Cookie{}
		for _, c := range res.Cookies {
			out[c.Name] = c
		}
		return out
	}
	// The fan waits with a ticket, partitioned under the artist's site.
	var jar map[string]*network.Cookie
	for deadline := time.Now().Add(20 * time.Second); ; {
		if jar = cookies(); jar["foyer_ticket"] != nil || time.Now().After(deadline) {
			break
		}
		time.Sleep(100 * time.Millisecond)
	}
	ticket := jar["foyer_ticket"]
	if ticket == nil {
		t.Fatalf("no ticket was stored for the embedded room; cookies %v", names(jar))
	}
	if ticket.PartitionKey == nil || ticket.PartitionKey.TopLevelSite != "https://shop.test" || !ticket.Secure || ticket.SameSite != network.CookieSameSiteNone {
		t.Fatalf("ticket %+v (partition %+v), want SameSite=None, Secure, partitioned under https://shop.test", ticket, ticket.PartitionKey)
	}
	if _, ok := jar["probe"]; ok {
		t.Fatal("the browser kept an unpartitioned third-party cookie: it does not block them, and the test proves nothing")
	}
	if got, err := chromedp.Run(ctx, chromedp.Evaluate[string](`window.got.join(",")`)); err != nil || got != "" {
		t.Fatalf("the fan reached the site while queue_all holds everyone: %q %v", got, err)
	}

	// The line moves: the page in the iframe claims a session with the
	// ticket it kept, and goes on to the site with the pass.
	if code, body := adminCall(t, http.MethodPatch, "/waiting-room/embed", `{"queue_all": false}`); code != http.StatusOK {
		t.Fatalf("PATCH queue_all: %d %s", code, body)
	}
	var got string
	for deadline := time.Now().Add(40 * time.Second); time.Now().Before(deadline); time.Sleep(200 * time.Millisecond) {
		v, err := chromedp.Run(ctx, chromedp.Evaluate[string](`window.got.join(",")`))
		if err != nil {
			t.Fatalf("reading the artist's page: %v", err)
		}
		if got = v; got != "" {
			break
		}
	}
	if got != "admitted /events/1" {
		t.Fatalf("the embedded fan reached %q, want the site at /events/1", got)
	}
	jar = cookies()
	pass := jar["foyer_pass"]
	if pass == nil || pass.PartitionKey == nil || pass.PartitionKey.TopLevelSite != "https://shop.test" {
		t.Fatalf("pass %+v, want one partitioned under https://shop.test; cookies %v", pass, names(jar))
	}
	for name, c := range jar {
		if strings.HasPrefix(name, "foyer_") && c.PartitionKey == nil {
			t.Errorf("%s is not partitioned", name)
		}
	}
}

func names(jar map[string]*network.Cookie) []string {
	var out []string
	for n, c := range jar {
		out = append(out, n+"@"+c.Domain)
	}
	return out
}
