package gateway

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/foyer-dev/foyer/waitingroom"
)

// TestPageStates renders the embedded page for every state a fan can be in.
func TestPageStates(t *testing.T) {
	h := testHandler(t, Handler{}, nil)
	opens := time.Date(2026, 12, 1, 10, 0, 0, 0, time.UTC)
	pos, eta, idx := uint64(1234), int64(3700), uint64(7)
	cases := []struct {
		name  string
		st    waitingroom.Status
		wants []string
	}{
		{"queued", waitingroom.Status{State: waitingroom.StateQueued, Position: &pos, ETASeconds: &eta, RefreshSeconds: 9, Progress: .25},
			[]string{"You&#39;re in line", ">1,234<", "about 1 h 2 min", `aria-valuenow="25"`, `data-refresh="9"`}},
		{"awaiting the random draw", waitingroom.Status{State: waitingroom.StateQueued, AwaitingDraw: true, ETASeconds: &eta, RefreshSeconds: 9},
			[]string{"fair random draw", ">in the next draw<", "about 1 h 2 min", `class="bar indeterminate"`}},
		{"next", waitingroom.Status{State: waitingroom.StateQueued, Position: new(uint64), RefreshSeconds: 2},
			[]string{"You&#39;re next"}},
		{"prequeue with a draw", waitingroom.Status{State: waitingroom.StatePrequeue, OpensAt: &opens, DrawIndex: &idx, RefreshSeconds: 20},
			[]string{"registered", `<time datetime="2026-12-01T10:00:00Z">10:00 UTC on Tue 1 Dec</time>`, "fair random draw", "registration number is 7", `href="/_waiting-room/draw"`}},
		{"not open yet", waitingroom.Status{State: waitingroom.StateClosed, OpensAt: &opens, RefreshSeconds: 20},
			[]string{"Not open yet", `<time datetime="2026-12-01T10:00:00Z">`}},
		{"paused", waitingroom.Status{State: waitingroom.StatePaused, Position: &pos, RefreshSeconds: 13},
			[]string{"The line is paused", ">1,234<"}},
		{"back after a lapse, room full", waitingroom.Status{State: waitingroom.StateQueued, Position: new(uint64), Returned: true, RefreshSeconds: 2},
			[]string{"You&#39;re next", "while you were away", `data-variant="returned"`, `data-ws-url=""`, `data-status-url="/_waiting-room/status"`}},
		{"back after a lapse, room paused", waitingroom.Status{State: waitingroom.StatePaused, Position: new(uint64), Returned: true, RefreshSeconds: 13},
			[]string{"The line is paused", "go in first when it resumes"}},
		{"turn passed", waitingroom.Status{State: waitingroom.StateQueued, Position: &pos, TurnPassed: true, RefreshSeconds: 9},
			[]string{"has passed, so you have a new place", ">1,234<", `data-variant="queued"`, `data-ws-url="/_waiting-room/ws"`}},
		{"sold out", waitingroom.Status{State: waitingroom.StateSoldOut, RefreshSeconds: 60}, []string{"Sold out"}},
		{"closed", waitingroom.Status{State: waitingroom.StateClosed, RefreshSeconds: 60}, []string{"This sale is closed"}},
		{"reconnecting", waitingroom.Status{State: waitingroom.StateQueued, Position: &pos, Reconnecting: true, RefreshSeconds: 2},
			[]string{"Reconnecting"}},
		{"hostile title", waitingroom.Status{Title: `<script>alert(1)</script>`, State: waitingroom.StateSoldOut},
			[]string{"&lt;script&gt;alert(1)&lt;/script&gt;"}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			rec := httptest.NewRecorder()
			if err := h.renderPage(rec, 200, newPageData(tc.st, h.prefix, false, h.langs.def())); err != nil {
				t.Fatal(err)
			}
			body := rec.Body.String()
			for _, w := range tc.wants {
				if !strings.Contains(body, w) {
					t.Errorf("page lacks %q", w)
				}
			}
			if strings.Contains(body, "<script>alert") {
				t.Error("the title was not escaped")
			}
		})
	}
}

// TestPagePollCarriesTheWords: the page's own poll (status?page) carries the
// words a render of the same status shows, and is answered 200 even where
// JSON clients of a waiting fan get 429: a 429 is a console error for every
// poll of the page.
func TestPagePollCarriesTheWords(t *testing.T) {
	h := testHandler(t, Handler{QueuedStatusCode: http.StatusTooManyRequests, Settings: waitingroom.Settings{QueueAll: true}}, nil)
	ticket := cookieFrom(serve(h, &origin{}, get("/events/42")), "foyer_ticket")
	serve(h, &origin{}, get("/events/42")) // a second fan, behind the first
	if ticket == nil {
		t.Fatal("no ticket")
	}
	api := serve(h, &origin{}, get("/_waiting-room/status", ticket))
	if api.Code != http.StatusTooManyRequests || strings.Contains(api.Body.String(), `"page"`) {
		t.Fatalf("a JSON client: %d %s; want 429 and the status alone", api.Code, api.Body)
	}
	rec := serve(h, &origin{}, get("/_waiting-room/status?page", ticket))
	if rec.Code != http.StatusOK {
		t.Fatalf("the page's poll: %d, want 200", rec.Code)
	}
	var got struct {
		waitingroom.Status
		Page pageView `json:"page"`
	}
	if err := json.Unmarshal(rec.Body.Bytes(), &got); err != nil {
		t.Fatalf("%v: %s", err, rec.Body)
	}
	want := newPageData(got.Status, h.prefix, false, h.langs.def())
	if got.Page.Variant != variantQueueAll || got.Page.Variant != want.Variant || got.Page.Headline != want.Headline ||
		got.Page.Position != want.Position || got.Page.ETA != want.ETA || got.Page.Progress != want.Progress {
		t.Errorf("the poll says %+v, a render of its status %+v", got.Page, want)
	}
	if !got.QueueAll || got.State != waitingroom.StatePaused {
		t.Errorf("status %+v: want paused with queue_all", got.Status)
	}
}

// TestEveryVariantIsWorded: every variant the page can be in has a headline
// and a lead in every language, and every live one a word for a wait it
// cannot estimate.
func TestEveryVariantIsWorded(t *testing.T) {
	ls := allLanguages(t)
	for _, l := range ls.locales {
		for name := range fanShapes {
			text := l.texts[name]
			if text.Headline == "" || text.Lead == "" {
				t.Errorf("%s %s: headline %q, lead %q", l.Code, name, text.Headline, text.Lead)
			}
			if text.Figures && text.NoETA == "" {
				t.Errorf("%s %s shows a wait with no word for none", l.Code, name)
			}
		}
	}
}

// TestPageLanguageAndRefresh: the page is in the browser's language, right
// to left for Arabic; the menu links choose another; without JavaScript the
// page reloads on a timer only when the fan asked it to (a timed refresh is
// a time limit, WCAG 2.2.1), and always offers to check now.
func TestPageLanguageAndRefresh(t *testing.T) {
	h := testHandler(t, Handler{Settings: waitingroom.Settings{QueueAll: true}}, nil)
	for accept, want := range map[string]string{
		"ar":              `<html lang="ar" dir="rtl">`,
		"de-CH, fr;q=0.8": `<html lang="de" dir="ltr">`,
		"sw-TZ;q=0.1, th": `<html lang="en" dir="ltr">`,
	} {
		req := get("/events/42")
		req.Header.Set("Accept-Language", accept)
		if body := serve(h, &origin{}, req).Body.String(); !strings.Contains(body, want) {
			t.Errorf("Accept-Language %q: the page lacks %s", accept, want)
		}
	}
	req := get("/events/42?section=A")
	req.Header.Set("Accept-Language", "ja")
	body := serve(h, &origin{}, req).Body.String()
	for _, want := range []string{`href="/events/42?lang=de&amp;section=A"`, `aria-current="true">日本語</a>`,
		`href="/events/42?section=A">今すぐ順番を確認</a>`, `href="/events/42?autorefresh=on&amp;section=A"`} {
		if !strings.Contains(body, want) {
			t.Errorf("the page lacks %s", want)
		}
	}
	if strings.Contains(body, `http-equiv="refresh"`) {
		t.Error("the page reloads itself without the fan asking")
	}
	rec := serve(h, &origin{}, get("/events/42?autorefresh=on"))
	if !strings.Contains(rec.Body.String(), `<noscript><meta http-equiv="refresh"`) || cookieFrom(rec, "foyer_autorefresh") == nil {
		t.Errorf("?autorefresh=on: no refresh (%v) or no cookie", strings.Contains(rec.Body.String(), `http-equiv="refresh"`))
	}
	if body := serve(h, &origin{}, get("/events/42", cookieFrom(rec, "foyer_autorefresh"))).Body.String(); !strings.Contains(body, `http-equiv="refresh"`) || !strings.Contains(body, "Stop checking automatically") {
		t.Error("the cookie does not keep the refresh on")
	}
}
