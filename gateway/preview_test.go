package gateway

import (
	"context"
	"io/fs"
	"net/http"
	"strings"
	"testing"

	"github.com/foyer-dev/foyer/static"
	"github.com/foyer-dev/foyer/waitingroom"
	"github.com/foyer-dev/foyer/waitingroom/memstore"
)

// previewDashboard is a dashboard over the handlers' rooms, whose previews
// render with those handlers.
func previewDashboard(hs ...*Handler) *Dashboard {
	var rs []*waitingroom.Room
	for _, h := range hs {
		rs = append(rs, h.room)
	}
	d := testDashboard(rs...)
	d.handlerOf = func(r *waitingroom.Room) *Handler {
		for _, h := range hs {
			if h.room == r {
				return h
			}
		}
		return nil
	}
	return d
}

// previewVariant is the variant a waiting-page preview renders, as the page
// says it in data-variant.
func previewVariant(h *Handler, ps previewState) string {
	st := ps.status(h, h.room.Settings(), now())
	v := variantOf(st, ps.Unavailable)
	if st.Reconnecting && !ps.Unavailable {
		v += variantReconnecting
	}
	return v
}

// TestEveryVariantHasAPreview: every variant of the waiting page, the
// reconnecting one too, and every page of static/waiting has a preview on
// the dashboard; a new variant without one fails here.
func TestEveryVariantHasAPreview(t *testing.T) {
	h := testHandler(t, Handler{}, nil)
	covered := map[string]bool{}
	pages := map[previewPage]bool{}
	names := map[string]bool{}
	for _, ps := range previewStates {
		if names[ps.Name] {
			t.Errorf("two previews are named %q", ps.Name)
		}
		names[ps.Name] = true
		pages[ps.Page] = true
		if ps.Page == previewWaiting {
			v := previewVariant(h, ps)
			covered[v] = true
			if base, ok := strings.CutSuffix(v, variantReconnecting); ok {
				covered[variantReconnecting] = true
				covered[base] = true
			}
		}
	}
	for v := range fanShapes {
		if !covered[v] {
			t.Errorf("the page variant %q has no preview: add a row to previewStates", v)
		}
	}
	if !covered[variantReconnecting] {
		t.Errorf("no preview shows the %q notice", variantReconnecting)
	}
	// The pages themselves: each template of static/waiting, and the
	// refusals written in Go.
	byFile := map[string][]previewPage{
		static.WaitingPage: {previewWaiting},
		static.LeavePage:   {previewLeaveConfirm, previewLeft},
	}
	files, err := fs.Glob(static.Waiting, "waiting/*.html")
	if err != nil || len(files) == 0 {
		t.Fatalf("static/waiting: %v %v", files, err)
	}
	for _, f := range files {
		kinds, ok := byFile[f]
		if !ok {
			t.Errorf("%s has no preview: add its page to previewStates", f)
		}
		for _, k := range kinds {
			if !pages[k] {
				t.Errorf("%s: page %d has no preview", f, k)
			}
		}
	}
	if !pages[previewSlowDown] || !covered[variantUnavailable] {
		t.Error("the refusals (slow down: 429, unavailable: 503) need previews")
	}
}

// previewSnapshot is what a preview must leave as it was: the store's calls
// and the room's own counts and figures.
type previewSnapshot struct {
	calls   int64
	stats   nodeStats
	waiting uint64
	places  uint64
}

func snapshotForPreview(store *countingStore, h *Handler) previewSnapshot {
	in := h.room.Info()
	return previewSnapshot{calls: store.calls.Load(), stats: liveRoom{id: h.Room, rooms: []*waitingroom.Room{h.room}}.stats(), waiting: in.Waiting, places: in.Places}
}

// TestPreviewsChangeNothing walks every preview of a room in English and
// Arabic, with the embedded page and with a page of the operator's: each is
// the state's page, marked as a preview, unable to reach the room; and the
// store sees no call, the room's counts and line stay as they were.
func TestPreviewsChangeNothing(t *testing.T) {
	useTestClock(t)
	for _, page := range []string{"", "testdata/preview-page.html"} {
		t.Run("page="+page, func(t *testing.T) {
			store := &countingStore{Store: memstore.New()}
			h := testHandler(t, Handler{Room: "preview", Page: page, Languages: []string{"en", "ar"},
				Settings: waitingroom.Settings{Title: "Preview night", TotalActiveUsers: 1}}, store)
			joinFans(t, h, 3)
			if err := h.room.Tick(context.Background()); err != nil {
				t.Fatal(err)
			}
			d := previewDashboard(h)
			before := snapshotForPreview(store, h)

			index := dashGet(d, "/ops/?format=preview&room=preview")
			if index.Code != http.StatusOK || index.Header().Get("X-Robots-Tag") != "noindex" {
				t.Fatalf("index: %d %v", index.Code, index.Header())
			}
			for _, ps := range previewStates {
				if !strings.Contains(index.Body.String(), `href="?format=preview&amp;room=preview&amp;state=`+ps.Name+`&amp;lang=ar"`) {
					t.Errorf("the index does not link %s in Arabic", ps.Name)
				}
			}
			for _, lang := range []string{"en", "ar"} {
				for _, ps := range previewStates {
					rec := dashGet(d, "/ops/?format=preview&room=preview&state="+ps.Name+"&lang="+lang)
					body := rec.Body.String()
					if rec.Code != http.StatusOK {
						t.Fatalf("%s %s: %d %s", lang, ps.Name, rec.Code, body)
					}
					hdr := rec.Header()
					if hdr.Get("Cache-Control") != "no-store" || hdr.Get("X-Robots-Tag") != "noindex" ||
						!strings.Contains(hdr.Get("Content-Security-Policy"), "connect-src 'none'") ||
						!strings.Contains(hdr.Get("Content-Security-Policy"), "worker-src 'none'") ||
						!strings.Contains(hdr.Get("Content-Security-Policy"), "form-action 'none'") {
						t.Errorf("%s %s: headers %v", lang, ps.Name, hdr)
					}
					if c := hdr.Values("Set-Cookie"); len(c) > 0 {
						t.Errorf("%s %s: a preview sets cookies %q", lang, ps.Name, c)
					}
					if !strings.Contains(body, "<aside aria-label=\"Preview\"") || !strings.Contains(body, "Preview: "+ps.Name) {
						t.Errorf("%s %s: no preview banner", lang, ps.Name)
					}
					dir := map[string]string{"en": "ltr", "ar": "rtl"}[lang]
					if !strings.Contains(body, `lang="`+lang+`" dir="`+dir+`"`) {
						t.Errorf("%s %s: not in %s (%s): %.300s", lang, ps.Name, lang, dir, body)
					}
					switch ps.Page {
					case previewWaiting:
						if want := `data-variant="` + strings.ReplaceAll(previewVariant(h, ps), "+", "&#43;") + `"`; !strings.Contains(body, want) {
							t.Errorf("%s %s: lacks %s", lang, ps.Name, want)
						}
						if page == "" && !strings.Contains(body, " data-preview ") {
							t.Errorf("%s %s: the embedded page is not told it is a preview", lang, ps.Name)
						}
						if page != "" && !strings.Contains(body, `class="own-page"`) {
							t.Errorf("%s %s: not the operator's page", lang, ps.Name)
						}
					case previewSlowDown:
						if !strings.Contains(body, h.langs.match(lang).T("slowdown.title")) {
							t.Errorf("%s slow_down: %s", lang, body)
						}
					case previewLeaveConfirm:
						if !strings.Contains(body, `id="leave-confirm"`) {
							t.Errorf("%s leave_confirm: %s", lang, body)
						}
					case previewLeft:
						if !strings.Contains(body, `id="join-again"`) {
							t.Errorf("%s left: %s", lang, body)
						}
					}
				}
			}
			if after := snapshotForPreview(store, h); after != before {
				t.Fatalf("the previews changed the room: before %+v, after %+v", before, after)
			}
		})
	}
}

// TestPreviewRefusals: a preview of a room, state or language the node does
// not have is a 4xx with a JSON error; a node of one room needs no room named.
func TestPreviewRefusals(t *testing.T) {
	a := testHandler(t, Handler{Room: "a"}, nil)
	b := testHandler(t, Handler{Room: "b"}, nil)
	for target, want := range map[string]int{
		"/ops/?format=preview":                               http.StatusBadRequest,
		"/ops/?format=preview&room=nope":                     http.StatusNotFound,
		"/ops/?format=preview&room=a&state=nope":             http.StatusNotFound,
		"/ops/?format=preview&room=a&state=queued&lang=xx-q": http.StatusBadRequest,
		"/ops/?format=preview&room=b&state=queued":           http.StatusOK,
	} {
		rec := dashGet(previewDashboard(a, b), target)
		if rec.Code != want {
			t.Errorf("%s: %d %s, want %d", target, rec.Code, rec.Body, want)
		}
		if want != http.StatusOK && !strings.HasPrefix(rec.Header().Get("Content-Type"), "application/json") {
			t.Errorf("%s: Content-Type %q, want JSON", target, rec.Header().Get("Content-Type"))
		}
	}
	if rec := dashGet(previewDashboard(a), "/ops/?format=preview&state=sold_out"); rec.Code != http.StatusOK {
		t.Errorf("the only room, unnamed: %d %s", rec.Code, rec.Body)
	}
}
