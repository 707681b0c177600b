package gateway

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/foyer-dev/foyer/waitingroom"
	"github.com/foyer-dev/foyer/waitingroom/memstore"
)

// standaloneFor provisions cfg with NewStandalone on a memstore of its own.
func standaloneFor(t *testing.T, cfg Handler) *Handler {
	t.Helper()
	key, err := waitingroom.GenerateSigningKey()
	if err != nil {
		t.Fatal(err)
	}
	h, err := NewStandalone(context.Background(), cfg, StandaloneOptions{Store: memstore.New(), Key: key})
	if err != nil {
		t.Fatal(err)
	}
	return h
}

// TestStandalonePreviews: the previews of a standalone room list every state
// with a link per language the room offers, render one state in the
// language asked for, and answer each bad request with its JSON error: no
// room named among several (400), a room, state or language the handlers do
// not have (404, 404, 400), a method other than GET (405).
func TestStandalonePreviews(t *testing.T) {
	a := standaloneFor(t, Handler{Room: "night-a", Languages: []string{"en", "ar"}, Settings: waitingroom.Settings{Title: "Night A"}})
	b := standaloneFor(t, Handler{Room: "night-b"})
	previews := StandalonePreviews(a, b)
	call := func(method, target string) *httptest.ResponseRecorder {
		rec := httptest.NewRecorder()
		previews.ServeHTTP(rec, httptest.NewRequest(method, "http://ops.test/ops/"+target, nil))
		return rec
	}

	index := call(http.MethodGet, "?format=preview&room=night-a")
	if index.Code != http.StatusOK || !strings.HasPrefix(index.Header().Get("Content-Type"), "text/html") {
		t.Fatalf("index: %d %q", index.Code, index.Header().Get("Content-Type"))
	}
	for _, ps := range previewStates {
		for _, lang := range []string{"en", "ar"} {
			if link := strings.ReplaceAll(previewURL("night-a", ps.Name, lang), "&", "&amp;"); !strings.Contains(index.Body.String(), `href="`+link+`"`) {
				t.Errorf("the index has no link to %s", link)
			}
		}
	}
	page := call(http.MethodGet, "?format=preview&room=night-a&state=queued&lang=ar")
	if page.Code != http.StatusOK || !strings.Contains(page.Body.String(), `lang="ar"`) || !strings.Contains(page.Body.String(), a.Message("ar", "queued.headline")) {
		t.Fatalf("queued in Arabic: %d %s", page.Code, page.Body)
	}

	for _, tc := range []struct {
		method, target string
		code           int
		errCode        string
	}{
		{http.MethodGet, "?format=preview", http.StatusBadRequest, "room_required"},
		{http.MethodGet, "?format=preview&room=night-c", http.StatusNotFound, "unknown_room"},
		{http.MethodGet, "?format=preview&room=night-a&state=dancing", http.StatusNotFound, "unknown_state"},
		{http.MethodGet, "?format=preview&room=night-a&state=queued&lang=fr", http.StatusBadRequest, "unknown_language"},
		{http.MethodPost, "?format=preview&room=night-a", http.StatusMethodNotAllowed, "method_not_allowed"},
	} {
		rec := call(tc.method, tc.target)
		var e apiError
		if err := json.Unmarshal(rec.Body.Bytes(), &e); err != nil || rec.Code != tc.code || e.Error != tc.errCode || e.Message == "" {
			t.Errorf("%s %s: %d %s, want %d and %q", tc.method, tc.target, rec.Code, rec.Body, tc.code, tc.errCode)
		}
	}
}

// TestHandlerMessage: a room words a key in the language asked for among
// those it offers, in its default language for any other, and a key no
// catalog has as itself.
func TestHandlerMessage(t *testing.T) {
	h := standaloneFor(t, Handler{Room: "words", Languages: []string{"en", "ar"}})
	en, ar := h.Message("en", "sold_out.headline"), h.Message("ar", "sold_out.headline")
	if en == "" || en == "sold_out.headline" || ar == en {
		t.Fatalf("sold_out.headline: en %q, ar %q", en, ar)
	}
	if want := h.langs.lookup("ar").texts[variantSoldOut].Headline; ar != want {
		t.Errorf("Arabic: %q, want the page's %q", ar, want)
	}
	if got := h.Message("de", "sold_out.headline"); got != en {
		t.Errorf("German, not offered: %q, want the default's %q", got, en)
	}
	if got := h.Message("en", "no.such.key"); got != "no.such.key" {
		t.Errorf("an unknown key: %q", got)
	}
}
