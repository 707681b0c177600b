package gateway

import (
	"fmt"
	"net/http"
	"path/filepath"
	"strings"
	"testing"

	"golang.org/x/crypto/bcrypt"
)

// TestCaddyPreviews: behind the dashboard's basic_auth, every preview of a
// room with the embedded page and of one with the operator's own, in English
// and Arabic, answers the state's page; nobody without the password sees
// one (refused as the dashboard refuses them), and the rooms count no visit
// and hand out no cookie.
func TestCaddyPreviews(t *testing.T) {
	hash, err := bcrypt.GenerateFromPassword([]byte(dashPassword), bcrypt.MinCost)
	if err != nil {
		t.Fatal(err)
	}
	own, err := filepath.Abs("testdata/preview-page.html")
	if err != nil {
		t.Fatal(err)
	}
	newCaddy(t, caddyConfig(t.TempDir(), `
	http://localhost:9080 {
		waiting_room /events/* {
			room      prev-default
			title     "Night A"
			languages en ar
		}
		waiting_room /other/* {
			room        prev-own
			path_prefix /_wr-b
			page        `+own+`
			languages   en ar
		}
		handle /ops/* {
			basic_auth {
				ops `+string(hash)+`
			}
			waiting_room_dashboard
		}
		respond "origin"
	}`))
	for range 2 {
		resp, err := http.Get(base + "/events/1")
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
	}
	// What a visit would change: the room's counts on this node, its line.
	counts := func() map[string]string {
		out := map[string]string{}
		for _, lr := range liveRooms() {
			_, in := lr.lead()
			out[lr.id] = fmt.Sprintf("%+v waiting %d places %d", lr.stats(), in.Waiting, in.Places)
		}
		return out
	}
	before := counts()
	if !strings.Contains(before["prev-default"], "Joins:2 ") {
		t.Fatalf("the fans did not join: %v", before)
	}

	dashResp, _ := dashRequest(t, base+"/ops/dashboard", false)
	for _, path := range []string{"/ops/dashboard?format=preview&room=prev-default", "/ops/dashboard?format=preview&room=prev-own&state=queued&lang=ar"} {
		resp, body := dashRequest(t, base+path, false)
		if resp.StatusCode != http.StatusUnauthorized || resp.StatusCode != dashResp.StatusCode ||
			resp.Header.Get("WWW-Authenticate") != dashResp.Header.Get("WWW-Authenticate") || strings.Contains(body, "Preview") {
			t.Fatalf("%s without the password: %d %v %q; the dashboard answers %d %v", path, resp.StatusCode, resp.Header, body, dashResp.StatusCode, dashResp.Header)
		}
	}
	_, dash := dashRequest(t, base+"/ops/dashboard", true)
	for _, room := range []string{"prev-default", "prev-own"} {
		if !strings.Contains(dash, `href="?format=preview&amp;room=`+room+`"`) {
			t.Errorf("the dashboard does not link %s's previews", room)
		}
		resp, index := dashRequest(t, base+"/ops/dashboard?format=preview&room="+room, true)
		if resp.StatusCode != http.StatusOK {
			t.Fatalf("%s index: %d %s", room, resp.StatusCode, index)
		}
		for _, ps := range previewStates {
			for _, lang := range []string{"en", "ar"} {
				link := "?format=preview&room=" + room + "&state=" + ps.Name + "&lang=" + lang
				if !strings.Contains(index, strings.ReplaceAll(link, "&", "&amp;")) {
					t.Errorf("%s index lacks %s", room, link)
				}
				resp, body := dashRequest(t, base+"/ops/dashboard"+link, true)
				dir := map[string]string{"en": "ltr", "ar": "rtl"}[lang]
				if resp.StatusCode != http.StatusOK || resp.Header.Get("X-Robots-Tag") != "noindex" || resp.Header.Get("Cache-Control") != "no-store" ||
					!strings.Contains(resp.Header.Get("Content-Security-Policy"), "connect-src 'none'") || len(resp.Cookies()) > 0 {
					t.Fatalf("%s %s %s: %d %v", room, ps.Name, lang, resp.StatusCode, resp.Header)
				}
				if !strings.Contains(body, `lang="`+lang+`" dir="`+dir+`"`) || !strings.Contains(body, "Preview: "+ps.Name) {
					t.Errorf("%s %s %s: %.400s", room, ps.Name, lang, body)
				}
				if ps.Page == previewWaiting {
					v := strings.ReplaceAll(previewVariant(handlerOf(roomByID(t, room)), ps), "+", "&#43;")
					if !strings.Contains(body, `data-variant="`+v+`"`) {
						t.Errorf("%s %s %s: not the %s variant", room, ps.Name, lang, v)
					}
					if own := strings.Contains(body, `class="own-page"`); own != (room == "prev-own") {
						t.Errorf("%s %s %s: the operator's page %v", room, ps.Name, lang, own)
					}
				}
			}
		}
	}
	after := counts()
	for id, b := range before {
		if a := after[id]; a != b {
			t.Errorf("%s changed: before %v, after %v", id, b, a)
		}
	}
}
