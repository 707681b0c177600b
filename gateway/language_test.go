package gateway

import (
	"encoding/json"
	"maps"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/caddyserver/caddy/v2"
	"github.com/caddyserver/caddy/v2/caddyconfig/caddyfile"
	"golang.org/x/text/feature/plural"
	"golang.org/x/text/language"
	xmessage "golang.org/x/text/message"
	"golang.org/x/text/number"

	"github.com/foyer-dev/foyer/internal/i18n"
	"github.com/foyer-dev/foyer/waitingroom"
)

// allLanguages is every built-in catalog, English first.
func allLanguages(t testing.TB) *langSet {
	t.Helper()
	ls, err := newLangSet("", nil, "", "foyer_lang")
	if err != nil {
		t.Fatal(err)
	}
	return ls
}

// TestBuiltinCatalogsAreComplete: every built-in catalog has every key
// English has and no other, the same placeholders, and every plural form its
// language's numbers take; at least the fifteen languages docs/waiting-page.md lists.
func TestBuiltinCatalogsAreComplete(t *testing.T) {
	all, err := builtinCatalogs()
	if err != nil {
		t.Fatal(err)
	}
	ref := all[i18n.Reference]
	for code, c := range all {
		if code == i18n.Reference {
			continue
		}
		if err := c.Check(ref); err != nil {
			t.Errorf("%v", err)
		}
	}
	for _, want := range []string{"en", "ar", "he", "ja", "ko", "zh-Hans", "hi", "de", "fr", "es", "pt", "it", "nl", "pl", "tr"} {
		if all[want] == nil {
			t.Errorf("no built-in catalog for %s", want)
		}
	}
	ls := allLanguages(t)
	for _, l := range ls.locales {
		if want := map[string]string{"ar": "rtl", "he": "rtl"}[l.Code]; (want == "rtl") != (l.Dir == "rtl") {
			t.Errorf("%s is written %s", l.Code, l.Dir)
		}
	}
}

// TestCatalogCheckNamesFileAndKey: a catalog that lacks a key English has,
// or a plural form its language needs, or brings a placeholder of its own,
// is refused with the file and the key named.
func TestCatalogCheckNamesFileAndKey(t *testing.T) {
	all, err := builtinCatalogs()
	if err != nil {
		t.Fatal(err)
	}
	ref := all[i18n.Reference]
	for _, tc := range []struct {
		name, lang string
		edit       func(c *i18n.Catalog)
		want       string
	}{
		{"a key missing", "de", func(c *i18n.Catalog) { delete(c.Msgs, "queued.headline") }, `de.json: key "queued.headline": missing`},
		{"a plural form Polish needs", "pl", func(c *i18n.Catalog) {
			m := c.Msgs["eta.minutes"]
			m.Forms[plural.Few] = ""
			c.Msgs["eta.minutes"] = m
		}, `pl.json: key "eta.minutes": lacks the plural form "few"`},
		{"Arabic's dual", "ar", func(c *i18n.Catalog) {
			m := c.Msgs["slowdown.body"]
			m.Forms[plural.Two] = ""
			c.Msgs["slowdown.body"] = m
		}, `ar.json: key "slowdown.body": lacks the plural form "two"`},
		{"a text for a plural", "ja", func(c *i18n.Catalog) {
			c.Msgs["eta.minutes"] = i18n.Message{Forms: c.Msgs["eta.minutes"].Forms}
		}, `ja.json: key "eta.minutes": must be an object of texts by plural form`},
		{"a lost placeholder", "fr", func(c *i18n.Catalog) {
			m := c.Msgs["not_open.lead"]
			m.Forms[0] = "La file ouvre bientôt."
			c.Msgs["not_open.lead"] = m
		}, `fr.json: key "not_open.lead": has placeholders [], want [{when}]`},
		{"an unknown key", "it", func(c *i18n.Catalog) { c.Msgs["queued.headlin"] = i18n.Message{Forms: c.Msgs["queued.headline"].Forms} }, `it.json: key "queued.headlin": not a key of`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			src := all[tc.lang]
			c := &i18n.Catalog{File: src.File, Tag: src.Tag, Msgs: maps.Clone(src.Msgs)}
			tc.edit(c)
			err := c.Check(ref)
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("error %v, want one saying %s", err, tc.want)
			}
		})
	}
}

// TestAcceptLanguage: the browser's languages go through CLDR's matcher, not
// a prefix: a Swiss German browser reads German, Brazilian Portuguese reads
// Portuguese, mainland Chinese reads Simplified Chinese, and a language the
// room does not offer reads the room's default.
func TestAcceptLanguage(t *testing.T) {
	ls := allLanguages(t)
	for accept, want := range map[string]string{
		"de-CH, fr;q=0.8":         "de",
		"ar":                      "ar",
		"ar-EG,ar;q=0.9,en;q=0.5": "ar",
		"he-IL":                   "he",
		"iw":                      "he",
		"pt-BR,pt;q=0.9":          "pt",
		"zh-CN,zh;q=0.9":          "zh-Hans",
		"ja-JP":                   "ja",
		"fr-CA;q=0.9, de;q=0.5":   "fr",
		"sw":                      "en",
		"":                        "en",
		"garbage;;;":              "en",
		"nb, da;q=0.9":            "en",
	} {
		if got := ls.fromHeader(accept).Code; got != want {
			t.Errorf("Accept-Language %q: %s, want %s", accept, got, want)
		}
	}
	// The room's default is the first of languages.
	ls, err := newLangSet("auto", []string{"es", "en", "de"}, "", "foyer_lang")
	if err != nil {
		t.Fatal(err)
	}
	if got := ls.fromHeader("th").Code; got != "es" {
		t.Errorf("an unknown language in a room whose default is es: %s", got)
	}
	if got := ls.fromHeader("ja").Code; got != "es" {
		t.Errorf("a language the room does not offer: %s, want es", got)
	}
}

// TestLanguageChoice: ?lang= (the menu) wins and is remembered in a cookie;
// the cookie then wins over Accept-Language; a fixed language wins over
// Accept-Language but not over the fan's own choice.
func TestLanguageChoice(t *testing.T) {
	ls := allLanguages(t)
	req := httptest.NewRequest(http.MethodGet, "/events/42?lang=ja", nil)
	req.Header.Set("Accept-Language", "de")
	rec := httptest.NewRecorder()
	if got := ls.choose(rec, req).Code; got != "ja" {
		t.Fatalf("?lang=ja: %s", got)
	}
	cookies := rec.Result().Cookies()
	if len(cookies) != 1 || cookies[0].Name != "foyer_lang" || cookies[0].Value != "ja" {
		t.Fatalf("cookies %v, want foyer_lang=ja", cookies)
	}
	req = httptest.NewRequest(http.MethodGet, "/events/42", nil)
	req.Header.Set("Accept-Language", "de")
	req.AddCookie(cookies[0])
	if got := ls.choose(httptest.NewRecorder(), req).Code; got != "ja" {
		t.Errorf("the remembered choice: %s, want ja", got)
	}
	req = httptest.NewRequest(http.MethodGet, "/events/42?lang=xx-nonsense", nil)
	req.Header.Set("Accept-Language", "de")
	if got := ls.choose(httptest.NewRecorder(), req).Code; got != "de" {
		t.Errorf("?lang= of no offered language: %s, want the browser's de", got)
	}

	fixed, err := newLangSet("it", nil, "", "foyer_lang")
	if err != nil {
		t.Fatal(err)
	}
	req = httptest.NewRequest(http.MethodGet, "/", nil)
	req.Header.Set("Accept-Language", "de")
	if got := fixed.choose(httptest.NewRecorder(), req).Code; got != "it" {
		t.Errorf("language it: %s", got)
	}
	req = httptest.NewRequest(http.MethodGet, "/?lang=de", nil)
	if got := fixed.choose(httptest.NewRecorder(), req).Code; got != "de" {
		t.Errorf("language it, ?lang=de: %s", got)
	}
}

// TestLanguageSettingsRefused: the settings' errors name the setting.
func TestLanguageSettingsRefused(t *testing.T) {
	for _, tc := range []struct {
		lang    string
		offered []string
		want    string
	}{
		{"klingon!", nil, "language: "},
		{"de", []string{"en", "fr"}, "language: de is not among the languages offered"},
		{"", []string{"en", "sv"}, "languages: no catalog for sv"},
		{"", []string{"not a tag"}, "languages: "},
	} {
		if _, err := newLangSet(tc.lang, tc.offered, "", "c"); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("language %q languages %v: %v, want %q", tc.lang, tc.offered, err, tc.want)
		}
	}
}

// TestNumberFormatAgreesWithXText: the per-language number format a poll
// uses writes what golang.org/x/text/number writes.
func TestNumberFormatAgreesWithXText(t *testing.T) {
	ls := allLanguages(t)
	for _, l := range ls.locales {
		p := xmessage.NewPrinter(l.Tag)
		for _, n := range []uint64{0, 1, 7, 12, 999, 1000, 1234, 12345, 123456, 1234567, 987654321, 1 << 40} {
			if got, want := l.Uint(n), p.Sprint(number.Decimal(n)); got != want {
				t.Errorf("%s: %d is %q, x/text writes %q", l.Code, n, got, want)
			}
		}
	}
	if got := allLanguages(t).lookup("ar").Uint(1234); got != "١٬٢٣٤" {
		t.Errorf("Arabic 1234: %q", got)
	}
}

// TestPluralForms: the plural forms come from CLDR's rules.
func TestPluralForms(t *testing.T) {
	ls := allLanguages(t)
	for _, tc := range []struct {
		lang string
		n    uint64
		want string
	}{
		{"en", 1, "about 1 minute"},
		{"en", 2, "about 2 minutes"},
		{"pl", 2, "około 2 minut"},
		{"pl", 22, "około 22 minut"},
		{"ar", 2, "نحو دقيقتين"},
		{"ar", 3, "نحو ٣ دقائق"},
		{"ar", 11, "نحو ١١ دقيقة"},
		{"ja", 5, "約5分"},
		{"de", 1, "etwa 1 Minute"},
	} {
		if got := ls.lookup(tc.lang).Count("eta.minutes", tc.n); got != tc.want {
			t.Errorf("%s %d: %q, want %q", tc.lang, tc.n, got, tc.want)
		}
	}
}

// TestMessagesDir: an operator's catalogs override words, add keys and
// languages; what they give is checked when the handler is provisioned, and
// every error names the file and the key.
func TestMessagesDir(t *testing.T) {
	write := func(t *testing.T, files map[string]string) string {
		dir := t.TempDir()
		for name, body := range files {
			if err := os.WriteFile(filepath.Join(dir, name), []byte(body), 0o644); err != nil {
				t.Fatal(err)
			}
		}
		return dir
	}
	t.Run("overrides and additions", func(t *testing.T) {
		dir := write(t, map[string]string{
			"en.json": `{"sold_out.headline": "All gone", "shop.hint": "Tickets are limited to {n} per fan."}`,
			"de.json": `{"shop.hint": "Höchstens {n} Tickets pro Fan."}`,
		})
		ls, err := newLangSet("", []string{"en", "de"}, dir, "c")
		if err != nil {
			t.Fatal(err)
		}
		if got := ls.lookup("en").texts[variantSoldOut].Headline; got != "All gone" {
			t.Errorf("overridden headline %q", got)
		}
		if got := ls.lookup("de").Count("shop.hint", 4); got != "Höchstens 4 Tickets pro Fan." {
			t.Errorf("added key in German: %q", got)
		}
		if got := ls.lookup("de").texts[variantSoldOut].Headline; got != "Ausverkauft" {
			t.Errorf("German keeps its own words: %q", got)
		}
	})
	for _, tc := range []struct {
		name    string
		files   map[string]string
		offered []string
		want    string
	}{
		{"an added key a language lacks", map[string]string{"en.json": `{"shop.hint": "Hi"}`}, []string{"en", "fr"},
			`fr.json (not given): key "shop.hint": missing`},
		{"a broken plural", map[string]string{"pl.json": `{"eta.minutes": {"one": "około {n} minuty", "other": "około {n} minuty"}}`}, nil,
			`pl.json: key "eta.minutes": lacks the plural form "few"`},
		{"a new language, incomplete", map[string]string{"sv.json": `{"language.name": "Svenska"}`}, []string{"en", "sv"},
			`sv.json: key "queued.headline": missing`},
		{"a plural form that is no form", map[string]string{"de.json": `{"eta.minutes": {"one": "x", "lots": "y"}}`}, nil,
			`de.json: key "eta.minutes": "lots" is not a plural form`},
		{"not JSON", map[string]string{"de.json": `{`}, nil, "de.json"},
		{"a file that is no language", map[string]string{"deutsch!.json": `{}`}, nil, "deutsch!.json: the file's name must be a language tag"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := write(t, tc.files)
			_, err := newLangSet("", tc.offered, dir, "c")
			if err == nil || !strings.Contains(err.Error(), tc.want) || !strings.Contains(err.Error(), dir) {
				t.Errorf("error %v, want one naming %s and saying %s", err, dir, tc.want)
			}
		})
	}
}

var _ = language.English

// TestLanguageLines: the Caddyfile's language, languages and messages lines
// reach the handler and its JSON twin, and a handler whose catalogs are
// broken is refused when it is provisioned, the file and the key named.
func TestLanguageLines(t *testing.T) {
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "de.json"), []byte(`{"eta.minutes": {"other": "etwa {n} Minuten"}}`), 0o644); err != nil {
		t.Fatal(err)
	}
	src := "waiting_room {\n room r\n language de\n languages de fr\n languages en\n messages " + dir + "\n}"
	var h Handler
	if err := h.UnmarshalCaddyfile(caddyfile.NewTestDispenser(src)); err != nil {
		t.Fatal(err)
	}
	if h.Language != "de" || strings.Join(h.Languages, " ") != "de fr en" || h.Messages != dir {
		t.Fatalf("parsed language %q, languages %v, messages %q", h.Language, h.Languages, h.Messages)
	}
	data, err := json.Marshal(h)
	if err != nil {
		t.Fatal(err)
	}
	var back Handler
	if err := caddy.StrictUnmarshalJSON(data, &back); err != nil || back.Language != "de" || len(back.Languages) != 3 || back.Messages != dir {
		t.Fatalf("JSON twin %s: %v, %+v", data, err, back)
	}
	err = h.setup()
	if err == nil || !strings.Contains(err.Error(), filepath.Join(dir, "de.json")) || !strings.Contains(err.Error(), `key "eta.minutes": lacks the plural form "one"`) {
		t.Errorf("setup with a broken plural: %v", err)
	}
	if err := h.Validate(); err == nil {
		t.Error("Validate passes a broken catalog")
	}
}

// TestOperatorPageTranslates: an operator's page gets the language, the
// direction and T; a T key some offered catalog lacks is refused when the
// handler is provisioned, never a blank on a fan's page.
func TestOperatorPageTranslates(t *testing.T) {
	dir := t.TempDir()
	page := filepath.Join(dir, "page.html")
	if err := os.WriteFile(page, []byte(`<html lang="{{.Lang}}" dir="{{.Dir}}"><h1>{{.Headline}}</h1><p>{{.T "shop.hint" 4}}</p><p>{{.T "figure.wait"}}</p></html>`), 0o644); err != nil {
		t.Fatal(err)
	}
	msgs := filepath.Join(dir, "messages")
	if err := os.Mkdir(msgs, 0o755); err != nil {
		t.Fatal(err)
	}
	write := func(name, body string) {
		if err := os.WriteFile(filepath.Join(msgs, name), []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write("en.json", `{"shop.hint": {"one": "At most {n} ticket each.", "other": "At most {n} tickets each."}}`)
	write("ar.json", `{"shop.hint": {"zero": "{n}", "one": "تذكرة واحدة على الأكثر لكل معجب.", "two": "تذكرتان على الأكثر لكل معجب.", "few": "{n} تذاكر على الأكثر لكل معجب.", "many": "{n} تذكرة على الأكثر لكل معجب.", "other": "{n} تذكرة على الأكثر لكل معجب."}}`)

	h := testHandler(t, Handler{Page: page, Messages: msgs, Languages: []string{"en", "ar"}, Settings: waitingroom.Settings{QueueAll: true}}, nil)
	req := get("/events/42")
	req.Header.Set("Accept-Language", "ar-EG")
	body := serve(h, &origin{}, req).Body.String()
	for _, want := range []string{`lang="ar" dir="rtl"`, "٤ تذاكر على الأكثر لكل معجب.", "الانتظار المتوقع"} {
		if !strings.Contains(body, want) {
			t.Errorf("the operator's page lacks %q:\n%s", want, body)
		}
	}

	// A key the Arabic catalog lacks: refused, naming the key and language.
	if err := os.WriteFile(page, []byte(`<p>{{.T "shop.other"}}</p>`), 0o644); err != nil {
		t.Fatal(err)
	}
	write("en.json", `{"shop.hint": {"one": "x", "other": "y"}, "shop.other": "z"}`)
	bad := Handler{Room: "r", Page: page, Messages: msgs, Languages: []string{"en"}}
	if err := bad.setup(); err != nil {
		t.Fatalf("English alone has the key: %v", err)
	}
	bad.Languages = []string{"en", "ar"}
	if err := bad.setup(); err == nil || !strings.Contains(err.Error(), `key "shop.other": missing`) {
		t.Errorf("a key the Arabic catalog lacks: %v", err)
	}
	if err := os.WriteFile(page, []byte(`<p>{{.T "no.such.key"}}</p>`), 0o644); err != nil {
		t.Fatal(err)
	}
	bad.Languages = []string{"en"}
	if err := bad.setup(); err == nil || !strings.Contains(err.Error(), `T "no.such.key": no such key in the en catalog`) {
		t.Errorf("a page asking for a key no catalog has: %v", err)
	}
}
