package storefront

import (
	"io/fs"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"testing"
	"testing/fstest"

	"github.com/foyer-dev/foyer/internal/i18n"
	"github.com/foyer-dev/foyer/static"
)

// shopLanguages are the languages the storefront ships.
var shopLanguages = []string{"en", "ar", "he", "ja", "ko", "zh-Hans", "hi", "de", "fr", "es", "pt", "it", "nl", "pl", "tr"}

func shopFiles(t *testing.T) fs.FS {
	t.Helper()
	files, err := fs.Sub(static.Storefront, "storefront")
	if err != nil {
		t.Fatal(err)
	}
	return files
}

// Every storefront catalog has every key English has and every plural form
// its language needs (i18n.ReadDir checks both), and the fifteen are there.
func TestStorefrontCatalogsComplete(t *testing.T) {
	cats, err := i18n.ReadDir(shopFiles(t), "messages")
	if err != nil {
		t.Fatal(err)
	}
	for _, code := range shopLanguages {
		if cats[code] == nil {
			t.Errorf("no storefront catalog for %s", code)
		}
	}
}

// A catalog that lacks a key English has, or a plural form its language
// needs, is refused, naming the file and the key.
func TestStorefrontCatalogGapsRefused(t *testing.T) {
	en, _ := fs.ReadFile(shopFiles(t), "messages/en.json")
	pl, _ := fs.ReadFile(shopFiles(t), "messages/pl.json")
	for name, tc := range map[string]struct{ file, data, want string }{
		"missing key": {"messages/pl.json", strings.Replace(string(pl), `"site.skip"`, `"site.skipped"`, 1), `messages/pl.json: key "site.skip": missing`},
		"polish few":  {"messages/pl.json", strings.Replace(string(pl), `"few": "{n} bilety",`, ``, 1), `messages/pl.json: key "order.tickets": lacks the plural form "few"`},
	} {
		t.Run(name, func(t *testing.T) {
			fsys := fstest.MapFS{"messages/en.json": {Data: en}, tc.file: {Data: []byte(tc.data)}}
			_, err := i18n.ReadDir(fsys, "messages")
			if err == nil {
				t.Fatalf("%s: accepted", name)
			}
			if tc.want != "" && !strings.Contains(err.Error(), tc.want) {
				t.Errorf("%s: error %q, want it to say %q", name, err, tc.want)
			}
		})
	}
}

// The language: Accept-Language through CLDR's matcher, ?lang= from the
// menu (remembered), the cookie; RTL languages marked so.
func TestStorefrontChoosesLanguage(t *testing.T) {
	set, err := i18n.NewSet(shopFiles(t), "messages", LangCookie)
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct{ accept, query, cookie, want, dir string }{
		{"ar", "", "", "ar", "rtl"},
		{"he-IL", "", "", "he", "rtl"},
		{"de-CH, fr;q=0.8", "", "", "de", "ltr"},
		{"zh-CN", "", "", "zh-Hans", "ltr"},
		{"sw", "", "", "en", "ltr"},
		{"", "", "", "en", "ltr"},
		{"ar", "ja", "", "ja", "ltr"},
		{"ar", "", "ko", "ko", "ltr"},
	} {
		r := httptest.NewRequest("GET", "/?lang="+tc.query, nil)
		r.Header.Set("Accept-Language", tc.accept)
		if tc.cookie != "" {
			r.Header.Set("Cookie", LangCookie+"="+tc.cookie)
		}
		w := httptest.NewRecorder()
		l := set.Choose(w, r)
		if l.Code != tc.want || l.Dir != tc.dir {
			t.Errorf("Accept-Language %q, lang=%q, cookie %q: %s %s, want %s %s", tc.accept, tc.query, tc.cookie, l.Code, l.Dir, tc.want, tc.dir)
		}
		if tc.query != "" && !slices.ContainsFunc(w.Result().Cookies(), func(c *http.Cookie) bool { return c.Name == LangCookie && c.Value == tc.want }) {
			t.Errorf("lang=%s: not remembered in a cookie", tc.query)
		}
	}
}
