package gateway

import (
	"context"
	"net/http"
	"strings"
	"testing"

	"github.com/caddyserver/caddy/v2"
	"github.com/caddyserver/caddy/v2/caddyconfig/caddyfile"

	"github.com/foyer-dev/foyer/waitingroom"
)

// TestAdminPatchRefusesBrokenText: a title that is not one line of valid
// UTF-8 is refused with 400 and an error naming the title, and neither the
// store nor the room changes. encoding/json alone would have stored broken
// bytes and lone surrogates as U+FFFD, and NUL or a newline as they are.
func TestAdminPatchRefusesBrokenText(t *testing.T) {
	cases := []struct {
		name, body, code, mention string
	}{
		{"invalid bytes", "{\"title\": \"a\xff\xfeb\"}", "invalid_setting", "title: must be valid UTF-8"},
		{"lone high surrogate", `{"title": "a\ud800b"}`, "invalid_setting", `title: must be valid Unicode; \ud800`},
		{"lone low surrogate", `{"title": "\udfff"}`, "invalid_setting", `title: must be valid Unicode; \udfff`},
		{"escaped NUL", `{"title": "a\u0000b"}`, "invalid_setting", "title: must be one line of text without control characters; byte 2 is U+0000 (NUL)"},
		{"raw NUL", "{\"title\": \"a\x00b\"}", "malformed_json", "title: malformed JSON"},
		{"escaped newline", `{"title": "two\nlines"}`, "invalid_setting", "title: must be one line"},
		{"raw newline", "{\"title\": \"two\nlines\"}", "malformed_json", "title: malformed JSON"},
		{"tab", `{"title": "a\tb"}`, "invalid_setting", "U+0009 (a tab)"},
		{"escape sequence", `{"title": "\u001b[2J"}`, "invalid_setting", "U+001B"},
		{"DEL", `{"title": "a\u007f"}`, "invalid_setting", "U+007F (DEL)"},
		{"C1 control", `{"title": "a\u0085"}`, "invalid_setting", "U+0085 (a C1 control character)"},
		{"line separator", `{"title": "a\u2028b"}`, "invalid_setting", "U+2028"},
		{"replacement character", `{"title": "a\ufffdb"}`, "invalid_setting", "title: must be valid UTF-8; byte 2 is U+FFFD"},
		{"good setting beside", `{"paused": true, "title": "a\u0000"}`, "invalid_setting", "title"},
		{"too long in characters", `{"title": "` + strings.Repeat("é", 201) + `"}`, "invalid_setting", "title: must be at most 200 characters, got 201"},
	}
	e := newAdminEnv(t, nil)
	r := e.node("concert", waitingroom.Settings{Title: "Big Night"})
	a := adminFor(r)
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			rec := call(t, a, http.MethodPatch, "/waiting-room/concert", tc.body)
			if rec.Code != http.StatusBadRequest {
				t.Fatalf("got %d %s, want 400", rec.Code, rec.Body)
			}
			got := decodeAPIError(t, rec)
			if got.Error != tc.code || !strings.Contains(got.Message, tc.mention) {
				t.Errorf("got %+v, want error %q mentioning %q", got, tc.code, tc.mention)
			}
			data, version, err := e.store.Overrides(context.Background(), "concert")
			if err != nil || version != 0 || len(data) != 0 {
				t.Errorf("the store's overrides changed: %s v%d %v", data, version, err)
			}
			if s := r.Settings(); s.Title != "Big Night" || s.Paused {
				t.Errorf("the room's title is %q (paused %v), want Big Night unchanged", s.Title, s.Paused)
			}
		})
	}

	// What is good text goes through as sent: a surrogate pair is one
	// character, and 200 characters of two bytes each are within the limit.
	for body, want := range map[string]string{
		`{"title": "Caf\u00e9 \ud83c\udfab"}`:           "Café 🎫",
		`{"title": "` + strings.Repeat("é", 200) + `"}`: strings.Repeat("é", 200),
		`{"title": ""}`: "",
	} {
		rec := call(t, a, http.MethodPatch, "/waiting-room/concert", body)
		if v := decodeView(t, rec); v.Settings.Title != want || r.Settings().Title != want {
			t.Errorf("%s: title %q, room %q; want %q", body, v.Settings.Title, r.Settings().Title, want)
		}
	}
}

// TestConfigRefusesBrokenText: the Caddyfile and the JSON configuration
// refuse the same text as the admin API, with an error naming the setting,
// for the title and for the gateway's own free text (issuer).
func TestConfigRefusesBrokenText(t *testing.T) {
	bad := []struct{ name, value, mention string }{
		// Caddy's Caddyfile reader turns bytes that are not UTF-8 into
		// U+FFFD before the line reaches the handler; that is refused.
		{"invalid bytes", "a\xff\xfeb", "U+FFFD"},
		{"encoded surrogate", "a\xed\xa0\x80b", "U+FFFD"},
		{"replacement character", "a\ufffdb", "U+FFFD"},
		{"NUL", "a\x00b", "U+0000 (NUL)"},
		{"tab", "a\tb", "U+0009 (a tab)"},
		{"newline", "a\nb", "line break"},
		{"DEL", "a\x7f", "U+007F"},
		{"C1", "a\u009b", "C1"},
	}
	for _, setting := range []string{"title", "issuer"} {
		for _, tc := range bad {
			t.Run("Caddyfile "+setting+" "+tc.name, func(t *testing.T) {
				src := "waiting_room {\n room r\n " + setting + " \"" + tc.value + "\"\n}"
				var h Handler
				err := h.UnmarshalCaddyfile(caddyfile.NewTestDispenser(src))
				if err == nil || !strings.Contains(err.Error(), setting+": ") || !strings.Contains(err.Error(), tc.mention) {
					t.Errorf("error %v, want one naming %s and mentioning %q", err, setting, tc.mention)
				}
			})
		}
		jsonBad := []struct{ name, raw, mention string }{
			{"invalid bytes", "\"a\xff\xfeb\"", "must be valid UTF-8"},
			{"lone surrogate", `"a\ud800b"`, `\ud800 is half of a surrogate pair`},
			{"escaped NUL", `"a\u0000b"`, "U+0000 (NUL)"},
			{"escaped newline", `"a\nb"`, "line break"},
			{"escaped C1", `"a\u0085"`, "C1"},
			{"a number", `5`, "must be a string"},
		}
		for _, tc := range jsonBad {
			t.Run("JSON "+setting+" "+tc.name, func(t *testing.T) {
				config := `{"room": "r", "` + setting + `": ` + tc.raw + `}`
				var h Handler
				err := caddy.StrictUnmarshalJSON([]byte(config), &h)
				if err == nil {
					err = h.Validate()
				}
				if err == nil || !strings.Contains(err.Error(), setting+": ") || !strings.Contains(err.Error(), tc.mention) {
					t.Errorf("error %v, want one naming %s and mentioning %q", err, setting, tc.mention)
				}
			})
		}
		// Set in Go, as a test or an embedding program would: Validate,
		// which Provision runs, refuses it as well.
		h := Handler{Room: "r"}
		if setting == "title" {
			h.Settings.Title = "a\x00b"
		} else {
			h.Issuer = "a\x00b"
		}
		if err := h.Validate(); err == nil || !strings.Contains(err.Error(), setting+": ") {
			t.Errorf("Validate with a NUL in %s: %v", setting, err)
		}
	}

	// Good text survives both, non-ASCII included.
	var h Handler
	if err := caddy.StrictUnmarshalJSON([]byte(`{"room": "r", "title": "Caf\u00e9 \ud83c\udfab", "issuer": "tickets.example"}`), &h); err != nil || h.Validate() != nil {
		t.Fatalf("good JSON: %v", err)
	}
	if h.Settings.Title != "Café 🎫" {
		t.Errorf("title %q", h.Settings.Title)
	}
	h = Handler{}
	if err := h.UnmarshalCaddyfile(caddyfile.NewTestDispenser("waiting_room {\n room r\n title \"Café 🎫\"\n}")); err != nil || h.Settings.Title != "Café 🎫" {
		t.Errorf("good Caddyfile: %v, title %q", err, h.Settings.Title)
	}
}

// TestCommandRefusesBrokenText: `waiting-room set` refuses a title the admin
// API would refuse before sending it, because the JSON it sends would carry
// broken UTF-8 as U+FFFD, and says which setting is at fault.
func TestCommandRefusesBrokenText(t *testing.T) {
	e := newAdminEnv(t, nil)
	r := e.node("concert", waitingroom.Settings{Title: "Big Night"})
	addr := adminServer(t, r)
	for _, title := range []string{"a\xff\xfeb", "a\xed\xa0\x80b", "a\x00b", "two\nlines", "a\tb", "a\x7f"} {
		out, err := runCommand(t, addr, "set", "concert", "title="+title)
		if err == nil || !strings.HasPrefix(err.Error(), "title: ") {
			t.Errorf("set title=%q: error %v, want one naming the title\n%s", title, err, out)
		}
	}
	if _, v, _ := e.store.Overrides(t.Context(), "concert"); v != 0 || r.Settings().Title != "Big Night" {
		t.Errorf("a refused title changed the room: version %d, title %q", v, r.Settings().Title)
	}
}
