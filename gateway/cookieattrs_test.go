package gateway

import (
	"crypto/tls"
	"net/http"
	"strings"
	"testing"

	"github.com/caddyserver/caddy/v2/caddyconfig/caddyfile"
	"go.uber.org/zap"
	"go.uber.org/zap/zapcore"
	"go.uber.org/zap/zaptest/observer"

	"github.com/foyer-dev/foyer/waitingroom"
)

// TestCookieAttributesFollowTheSettings: every cookie the room sets (the
// ticket, the pass and the pass's removal) carries cookie_samesite's
// attribute, Secure on TLS and always with SameSite=None or Partitioned, and
// Partitioned when cookie_partitioned is on.
func TestCookieAttributesFollowTheSettings(t *testing.T) {
	cases := []struct {
		sameSite    string
		partitioned bool
		tls         bool
		want        []string
		not         []string
	}{
		{"", false, false, []string{"HttpOnly", "SameSite=Lax"}, []string{"Secure", "Partitioned"}},
		{"", false, true, []string{"SameSite=Lax", "Secure"}, []string{"Partitioned"}},
		{"lax", false, false, []string{"SameSite=Lax"}, []string{"Secure"}},
		{"strict", false, false, []string{"SameSite=Strict"}, []string{"Secure"}},
		{"strict", false, true, []string{"SameSite=Strict", "Secure"}, nil},
		{"none", false, false, []string{"SameSite=None", "Secure"}, []string{"Partitioned"}},
		{"none", true, true, []string{"SameSite=None", "Secure", "Partitioned"}, nil},
		{"", true, false, []string{"SameSite=Lax", "Secure", "Partitioned"}, nil},
	}
	for _, tc := range cases {
		// One fan goes straight in (ticket and pass); a second waits (ticket).
		h := testHandler(t, Handler{CookieSameSite: tc.sameSite, CookiePartitioned: tc.partitioned,
			Settings: waitingroom.Settings{TotalActiveUsers: 1}}, nil)
		var lines []string
		for range 2 {
			req := get("/events/1")
			if tc.tls {
				req.TLS = &tls.ConnectionState{}
			}
			rec := serve(h, &origin{}, req)
			lines = append(lines, rec.Header()["Set-Cookie"]...)
		}
		if len(lines) < 3 {
			t.Fatalf("%+v: want a ticket, a pass and a ticket, got %q", tc, lines)
		}
		for _, line := range lines {
			attrs := strings.Split(line, "; ")[1:]
			for _, w := range tc.want {
				if !hasAttr(attrs, w) {
					t.Errorf("samesite %q partitioned %v tls %v: %q lacks %s", tc.sameSite, tc.partitioned, tc.tls, line, w)
				}
			}
			for _, n := range tc.not {
				if hasAttr(attrs, n) {
					t.Errorf("samesite %q partitioned %v tls %v: %q has %s", tc.sameSite, tc.partitioned, tc.tls, line, n)
				}
			}
			if strings.Count(line, "Secure") > 1 {
				t.Errorf("%q: Secure twice", line)
			}
			// What net/http reads back is what a browser would store.
			c, err := http.ParseSetCookie(line)
			if err != nil {
				t.Fatalf("%q does not parse: %v", line, err)
			}
			if c.Partitioned != tc.partitioned {
				t.Errorf("%q: Partitioned %v, want %v", line, c.Partitioned, tc.partitioned)
			}
		}
	}
}

func hasAttr(attrs []string, a string) bool {
	for _, x := range attrs {
		if x == a {
			return true
		}
	}
	return false
}

// TestCookieSettingsParseAndRefuse: the Caddyfile lines set the fields, and a
// SameSite the browsers do not know is refused naming the setting; so is a
// value of the wrong kind in JSON, and a PATCH of either through the admin
// API (they are the configuration's, not runtime settings).
func TestCookieSettingsParseAndRefuse(t *testing.T) {
	var h Handler
	src := "waiting_room {\n room r\n cookie_samesite none\n cookie_partitioned\n }"
	if err := h.UnmarshalCaddyfile(caddyfile.NewTestDispenser(src)); err != nil {
		t.Fatal(err)
	}
	if h.CookieSameSite != "none" || !h.CookiePartitioned {
		t.Fatalf("parsed %q %v", h.CookieSameSite, h.CookiePartitioned)
	}
	if err := h.Validate(); err != nil {
		t.Fatal(err)
	}
	for _, src := range []string{
		"waiting_room {\n cookie_partitioned yes\n }",
		"waiting_room {\n cookie_samesite\n }",
		"waiting_room {\n cookie_samesite none lax\n }",
	} {
		var h Handler
		if err := h.UnmarshalCaddyfile(caddyfile.NewTestDispenser(src)); err == nil {
			t.Errorf("%q parsed", src)
		}
	}
	for _, bad := range []Handler{{Room: "r", CookieSameSite: "None"}, {Room: "r", CookieSameSite: "off"}} {
		if err := bad.Validate(); err == nil || !strings.Contains(err.Error(), "cookie_samesite") {
			t.Errorf("%q: %v, want an error naming cookie_samesite", bad.CookieSameSite, err)
		}
	}
	for _, body := range []string{`{"cookie_samesite": "none"}`, `{"cookie_partitioned": true}`} {
		_, _, perr := decodePatch([]byte(body))
		if perr == nil || perr.code != "unknown_setting" || !strings.Contains(perr.message, "cannot be changed at runtime") {
			t.Errorf("PATCH %s: %v, want it refused as configuration", body, perr)
		}
	}
}

// TestSecureCookiesOverPlainHTTPAreWarnedOnce: a room whose cookies must be
// Secure that answers over plain HTTP logs why its fans may never get in,
// once; over TLS it says nothing.
func TestSecureCookiesOverPlainHTTPAreWarnedOnce(t *testing.T) {
	for _, plain := range []bool{true, false} {
		h := testHandler(t, Handler{CookieSameSite: "none"}, nil)
		core, logs := observer.New(zapcore.WarnLevel)
		h.logger = zap.New(core)
		for range 3 {
			req := get("/events/1")
			if !plain {
				req.TLS = &tls.ConnectionState{}
			}
			serve(h, &origin{}, req)
		}
		want := 0
		if plain {
			want = 1
		}
		if n := logs.FilterMessageSnippet("plain HTTP").Len(); n != want {
			t.Errorf("plain HTTP %v: %d warnings, want %d", plain, n, want)
		}
	}
}
