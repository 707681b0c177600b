package storefront

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"sync"
	"testing"

	"github.com/foyer-dev/foyer/booking"
)

// recordingAPI stands in for the booking API: it answers a hold with 201 and
// records what reached it, so a test can say what a form wrote.
type recordingAPI struct {
	mu    sync.Mutex
	calls []*http.Request
}

func (a *recordingAPI) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	a.mu.Lock()
	a.calls = append(a.calls, r.Clone(r.Context()))
	a.mu.Unlock()
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(http.StatusCreated)
	_, _ = w.Write([]byte(`{"id":"hld_1","status":"active"}`))
}

// What each bad hold form gets, with script off (a page that names the field)
// and as JSON for an app ({"error","field","message"}); none of them reaches
// the API, so nothing is held. A good form reaches it once, with the form's
// idempotency key, and the fan is sent on to the hold.
func TestHoldFormBadInput(t *testing.T) {
	api := &recordingAPI{}
	h, err := New(Config{API: api, Files: shopFiles(t), MaxPerCustomer: 6})
	if err != nil {
		t.Fatal(err)
	}
	post := func(form url.Values, accept string) *httptest.ResponseRecorder {
		r := httptest.NewRequest(http.MethodPost, "/events/1/hold", strings.NewReader(form.Encode()))
		r.Header.Set("Content-Type", "application/x-www-form-urlencoded")
		if accept != "" {
			r.Header.Set("Accept", accept)
		}
		w := httptest.NewRecorder()
		h.ServeHTTP(w, r)
		return w
	}
	cases := []struct {
		name  string
		form  url.Values
		field string
	}{
		{"no key", url.Values{"section": {"A"}, "quantity": {"2"}}, "key"},
		{"key too long", url.Values{"key": {strings.Repeat("k", booking.MaxIdempotencyKeyLength+1)}, "section": {"A"}, "quantity": {"2"}}, "key"},
		{"neither section nor zone", url.Values{"key": {"k1"}, "quantity": {"2"}}, "section"},
		{"both section and zone", url.Values{"key": {"k1"}, "section": {"A"}, "zone": {"FLOOR"}, "quantity": {"2"}}, "zone"},
		{"quantity not a number", url.Values{"key": {"k1"}, "section": {"A"}, "quantity": {"two"}}, "quantity"},
		{"quantity zero", url.Values{"key": {"k1"}, "section": {"A"}, "quantity": {"0"}}, "quantity"},
		{"quantity over the limit", url.Values{"key": {"k1"}, "section": {"A"}, "quantity": {"7"}}, "quantity"},
	}
	for _, tc := range cases {
		page := post(tc.form, "")
		if page.Code != http.StatusBadRequest || !strings.HasPrefix(page.Header().Get("Content-Type"), "text/html") || !strings.Contains(page.Body.String(), "<h1") {
			t.Errorf("%s, as a page: %d %s, want a 400 page", tc.name, page.Code, page.Header().Get("Content-Type"))
		}
		js := post(tc.form, "application/json")
		var e struct{ Error, Field, Message string }
		if js.Code != http.StatusBadRequest || json.Unmarshal(js.Body.Bytes(), &e) != nil || e.Error != booking.CodeInvalidRequest || e.Field != tc.field || e.Message == "" {
			t.Errorf("%s, as JSON: %d %s, want 400 invalid_request naming %q", tc.name, js.Code, js.Body, tc.field)
		}
	}
	if n := len(api.calls); n != 0 {
		t.Fatalf("bad forms reached the API %d times, want none", n)
	}
	good := post(url.Values{"key": {"k-good"}, "section": {"A"}, "quantity": {"2"}}, "")
	if good.Code != http.StatusSeeOther || !strings.HasPrefix(good.Header().Get("Location"), "/holds/") {
		t.Fatalf("a good form: %d Location %q, want 303 to the hold", good.Code, good.Header().Get("Location"))
	}
	if n := len(api.calls); n != 1 || api.calls[0].Header.Get(booking.IdempotencyHeader) == "" {
		t.Fatalf("a good form reached the API %d times (idempotency key %q), want once with the form's key", n, api.calls[0].Header.Get(booking.IdempotencyHeader))
	}
}

// A form posted from another site (a page elsewhere submitting to the
// storefront with the fan's cookies) is refused with 403 before it reaches
// the API, as a page and as JSON; the same form from the storefront's own
// pages, or from a client that sends no browser headers, goes through.
func TestFormsRefuseCrossSitePosts(t *testing.T) {
	api := &recordingAPI{}
	h, err := New(Config{API: api, Files: shopFiles(t), MaxPerCustomer: 6})
	if err != nil {
		t.Fatal(err)
	}
	form := url.Values{"key": {"k1"}, "section": {"A"}, "quantity": {"2"}}.Encode()
	post := func(path string, header map[string]string) *httptest.ResponseRecorder {
		r := httptest.NewRequest(http.MethodPost, "http://shop.example"+path, strings.NewReader(form))
		r.Header.Set("Content-Type", "application/x-www-form-urlencoded")
		for k, v := range header {
			r.Header.Set(k, v)
		}
		w := httptest.NewRecorder()
		h.ServeHTTP(w, r)
		return w
	}
	for _, path := range []string{"/events/1/hold", "/holds/hld_1/checkout", "/holds/hld_1/release"} {
		for _, c := range []struct {
			name   string
			header map[string]string
		}{
			{"fetch metadata", map[string]string{"Sec-Fetch-Site": "cross-site"}},
			{"origin only", map[string]string{"Origin": "https://evil.example"}},
			{"as JSON", map[string]string{"Sec-Fetch-Site": "cross-site", "Accept": "application/json"}},
		} {
			w := post(path, c.header)
			if w.Code != http.StatusForbidden {
				t.Errorf("%s, %s: %d, want 403", path, c.name, w.Code)
			}
			if c.header["Accept"] == "application/json" {
				var e struct{ Error, Message string }
				if err := json.Unmarshal(w.Body.Bytes(), &e); err != nil || e.Error != booking.CodeCrossOrigin || e.Message == "" {
					t.Errorf("%s, %s: body %s", path, c.name, w.Body)
				}
			}
		}
	}
	if len(api.calls) != 0 {
		t.Fatalf("%d cross-site posts reached the API", len(api.calls))
	}
	for _, c := range []map[string]string{{"Sec-Fetch-Site": "same-origin"}, {"Origin": "http://shop.example"}, nil} {
		if w := post("/events/1/hold", c); w.Code != http.StatusSeeOther {
			t.Errorf("same-site post %v: %d, want 303", c, w.Code)
		}
	}
	if len(api.calls) != 3 {
		t.Fatalf("%d same-site posts reached the API, want 3", len(api.calls))
	}
}
