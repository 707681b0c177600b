package gateway

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/caddyserver/caddy/v2"
	"github.com/caddyserver/caddy/v2/caddyconfig/caddyfile"
	"github.com/caddyserver/caddy/v2/caddytest"
)

// TestCaddyfileAdapt compares the JSON that each testdata/*.caddyfiletest
// Caddyfile adapts to with the JSON written under it.
func TestCaddyfileAdapt(t *testing.T) {
	files, err := filepath.Glob("testdata/*.caddyfiletest")
	if err != nil || len(files) == 0 {
		t.Fatalf("no golden files: %v", err)
	}
	for _, f := range files {
		data, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		caddyfileText, want, ok := strings.Cut(string(data), "----------")
		if !ok {
			t.Fatalf("%s: no ---------- separator", f)
		}
		if !caddytest.CompareAdapt(t, f, caddyfileText, "caddyfile", strings.TrimSpace(want)) {
			t.Errorf("%s: adapted JSON differs", f)
		}
	}
}

func TestCaddyfileErrors(t *testing.T) {
	cases := map[string]string{
		"unknown setting":        "waiting_room { room a\n colour blue }",
		"rate not a number":      "waiting_room { new_users_per_minute lots }",
		"rate zero":              "waiting_room { new_users_per_minute 0 }",
		"negative cap":           "waiting_room { total_active_users -5 }",
		"bad duration":           "waiting_room { session_duration forever }",
		"flag with an argument":  "waiting_room { queue_all yes }",
		"setting with no value":  "waiting_room {\n room\n }",
		"two values":             "waiting_room { room a b }",
		"unknown store":          "waiting_room { store etcd }",
		"redis without a URL":    "waiting_room {\n store redis\n }",
		"memory with a URL":      "waiting_room { store memory redis://x }",
		"two inline args":        "waiting_room a b",
		"redis with two URLs":    "waiting_room { store redis redis://a redis://b }",
		"grace not a duration":   "waiting_room { admission_grace soon }",
		"status code not number": "waiting_room { queued_status_code teapot }",
		"previous keys, no path": "waiting_room {\n previous_signing_keys\n }",
		"time not RFC 3339":      "waiting_room {\n event_start tomorrow\n }",
		"account, no keys":       "waiting_room {\n account {\n cookie s\n }\n }",
		"account, both keys":     "waiting_room {\n account {\n jwks_url https://l/j\n public_key k.pem\n cookie s\n }\n }",
		"account, no carrier":    "waiting_room {\n account {\n jwks_url https://l/j\n }\n }",
		"account, JWKS not http": "waiting_room {\n account {\n jwks_url file:///etc/jwks\n cookie s\n }\n }",
		"account, no login_url":  "waiting_room {\n account {\n jwks_url https://l/j\n cookie s\n required\n }\n }",
		"account, login at root": "waiting_room {\n account {\n jwks_url https://l/j\n cookie s\n login_url /\n }\n }",
		"account, relative url":  "waiting_room {\n account {\n jwks_url https://l/j\n cookie s\n login_url login\n }\n }",
		"account, unknown line":  "waiting_room {\n account {\n jwks_url https://l/j\n cookie s\n colour blue\n }\n }",
		"account, inline arg":    "waiting_room {\n account yes {\n jwks_url https://l/j\n cookie s\n }\n }",
		"account, no algorithms": "waiting_room {\n account {\n jwks_url https://l/j\n cookie s\n algorithms\n }\n }",
		"join limit, no period":  "waiting_room { join_limit 20 }",
		"join limit, no value":   "waiting_room {\n join_limit\n }",
		"join limit, bad period": "waiting_room { join_limit 20/week }",
		"join limit, bad burst":  "waiting_room { join_limit 20/m burst many }",
		"join limit, extra word": "waiting_room { join_limit 20/m burst 4 please }",
		"lanes, no value":        "waiting_room {\n lanes\n }",
		"lanes, no weight":       "waiting_room { lanes presale }",
		"challenge alone":        "waiting_room {\n challenge\n }",
		"challenge of a kind":    "waiting_room { challenge captcha }",
		"pow bits not a number":  "waiting_room { challenge pow many }",
		"pow with two numbers":   "waiting_room { challenge pow 18 20 }",
		"pow too hard":           "waiting_room {\n challenge pow 40\n}",
		"duration, bad days":     "waiting_room {\n ticket_lifetime xd\n}",
		"duration out of bounds": "waiting_room {\n session_duration 10s\n}",
		"two durations":          "waiting_room {\n session_duration 10m 20m\n}",
		"title in two words":     "waiting_room {\n title Night Foyer\n}",
		"title with a tab":       "waiting_room {\n title \"a\tb\"\n}",
		"unknown method":         "waiting_room {\n queueing_method lifo\n}",
		"two methods":            "waiting_room {\n queueing_method fifo random\n}",
		"status code twice":      "waiting_room {\n queued_status_code 200 429\n}",
		"flag with a value":      "waiting_room {\n cookie_partitioned true\n}",
		"account flag, a value":  "waiting_room {\n account {\n jwks_url https://l/j\n cookie s\n required yes\n }\n }",
		"account, bad duration":  "waiting_room {\n account {\n jwks_url https://l/j\n cookie s\n jwks_refresh soon\n }\n }",
	}
	for name, src := range cases {
		t.Run(name, func(t *testing.T) {
			var h Handler
			if err := h.UnmarshalCaddyfile(caddyfile.NewTestDispenser(src)); err == nil {
				t.Fatalf("parsed without error: %+v", h)
			}
		})
	}
}

// TestSettingErrorsNameTheSetting: a JSON configuration that Caddy cannot
// load, or that fails validation, is refused with an error naming the
// setting at fault.
func TestSettingErrorsNameTheSetting(t *testing.T) {
	cases := []struct{ config, setting string }{
		{`{}`, "room"},
		{`{"room": "bad room!"}`, "room"},
		{`{"room": "r", "queueing_method": "lifo"}`, "queueing_method"},
		{`{"room": "r", "event_start": "tomorrow"}`, "event_start"},
		{`{"room": "r", "event_start": "2026-12-01T10:00:00Z", "event_end": "2026-12-01T09:00:00Z"}`, "event_end"},
		{`{"room": "r", "prequeue_start": "2026-12-01T10:00:00Z"}`, "prequeue_start"},
		{`{"room": "r", "shuffle_at_event_start": true}`, "shuffle_at_event_start"},
		{`{"room": "r", "session_duration": 1}`, "session_duration"},
		{`{"room": "r", "session_duration": "forever"}`, "session_duration"},
		{`{"room": "r", "total_active_users": "many"}`, "total_active_users"},
		{`{"room": "r", "challenge": "pow 40"}`, "challenge"},
		{`{"room": "r", "challenge": "pow 7"}`, "challenge"},
		{`{"room": "r", "challenge": 18}`, "challenge"},
		{`{"room": "r", "challenge": "captcha"}`, "challenge"},
		{`{"room": "r", "queue_all": "yes"}`, "queue_all"},
		{`{"room": "r", "title": 5}`, "title"},
		{`{"room": "r", "colour": "blue"}`, "colour"},
		{`{"room": "r", "paused": true}`, "paused"}, // room state is the admin API's
		{`{"room": "r", "queued_status_code": 418}`, "queued_status_code"},
		{`{"room": "r", "path_prefix": "nope"}`, "path_prefix"},
		{`{"room": "r", "cookie_prefix": "a b"}`, "cookie_prefix"},
		{`{"room": "r", "on_store_failure": "maybe"}`, "on_store_failure"},
		{`{"room": "r", "cookie_samesite": "sideways"}`, "cookie_samesite"},
		{`{"room": "r", "cookie_partitioned": "yes"}`, "cookie_partitioned"},
		{`{"room": "r", "store": {"backend": "etcd"}}`, "store"},
		{`{"room": "r", "store": {"backend": "redis"}}`, "store"},
		{`{"room": "r", "previous_signing_keys": [""]}`, "previous_signing_keys"},
		{`{"room": "r", "previous_signing_keys": ["1", "2", "3", "4", "5"]}`, "previous_signing_keys"},
		{`{"room": "r", "account": {"cookie": "s"}}`, "account"},
		{`{"room": "r", "account": {"jwks_url": "https://l/j", "cookie": "s", "required": true}}`, "account"},
		{`{"room": "r", "account": {"jwks_url": "https://l/j", "cookie": "s", "colour": "blue"}}`, "colour"},
		{`{"room": "r", "join_limit": 20}`, "join_limit"},
		{`{"room": "r", "join_limit": "20 a minute"}`, "join_limit"},
		{`{"room": "r", "join_limit": "2000000/m"}`, "join_limit"},
		{`{"room": "r", "join_limit": "1/100ms"}`, "join_limit"},
		{`{"room": "r", "lanes": "presale=0 general=0"}`, "lanes"},
		{`{"room": "r", "lanes": 3}`, "lanes"},
		{`{"room": "r", "lanes": "presale=3", "queueing_method": "random"}`, "lanes"},
	}
	if err := (&Handler{Room: "r", PreviousSigningKeys: []string{"old.pem"}}).Validate(); err != nil {
		t.Errorf("a valid handler: %v", err)
	}
	for _, tc := range cases {
		var h Handler
		err := caddy.StrictUnmarshalJSON([]byte(tc.config), &h)
		if err == nil {
			err = h.Validate()
		}
		if err == nil || !strings.Contains(err.Error(), tc.setting) {
			t.Errorf("%s: error %v, want one naming %s", tc.config, err, tc.setting)
		}
	}
}

// TestCaddyfileErrorsSayWhatIsWanted: a line the value refuses is told what
// it takes, naming the setting, in the words a PATCH would be told.
func TestCaddyfileErrorsSayWhatIsWanted(t *testing.T) {
	for src, want := range map[string]string{
		"waiting_room {\n new_users_per_minute lots\n}": `new_users_per_minute: "lots" is not a whole number`,
		"waiting_room {\n total_active_users 0\n}":      "total_active_users: must be between 1 and 10000000, got 0",
		"waiting_room {\n session_duration forever\n}":  `session_duration: "forever" is not a duration such as "10m"`,
		"waiting_room {\n admission_grace 1s\n}":        "admission_grace: must be between 5s and 10m, got 1s",
		"waiting_room {\n event_start tomorrow\n}":      `event_start: "tomorrow" is not an RFC 3339 time`,
		"waiting_room {\n queueing_method lifo\n}":      "queueing_method: must be fifo, random, passthrough or reject",
		"waiting_room {\n challenge pow 7\n}":           "challenge: pow takes 8 to 28 bits, got 7",
		"waiting_room {\n join_limit 2000000/m\n}":      "join_limit: the count must be between 1 and 1,000,000",
		"waiting_room {\n title \"a\tb\"\n}":            "title: must be one line",
		"waiting_room {\n lanes presale=3 Members=2\n}": `lanes: lane name "Members" must be`,
		"waiting_room {\n queued_status_code teapot\n}": `queued_status_code: "teapot" is not a whole number`,
	} {
		var h Handler
		err := h.UnmarshalCaddyfile(caddyfile.NewTestDispenser(src))
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%s: %v, want %q", src, err, want)
		}
	}
	// Durations may start with days, as Caddy's do; a timeout may be off.
	var h Handler
	src := "waiting_room {\n ticket_lifetime 1d12h\n session_idle_timeout 0s\n}"
	if err := h.UnmarshalCaddyfile(caddyfile.NewTestDispenser(src)); err != nil || h.Settings.TicketLifetime != 36*time.Hour {
		t.Errorf("%s: %v, ticket_lifetime %v", src, err, h.Settings.TicketLifetime)
	}
}

// TestHandlerJSONErrorsSayWhatIsWanted: a JSON configuration's room setting
// of the wrong type or notation is told what it takes, naming the setting;
// durations take Caddy's nanoseconds or Go's notation.
func TestHandlerJSONErrorsSayWhatIsWanted(t *testing.T) {
	for config, want := range map[string]string{
		`{"total_active_users": 1.5}`:     "total_active_users: must be a whole number",
		`{"queue_all": "yes"}`:            "queue_all: must be true or false",
		`{"event_start": 5}`:              "event_start: must be a string",
		`{"session_duration": "forever"}`: `session_duration: "forever" is not a duration such as "10m"`,
		`{"session_duration": true}`:      "session_duration: true is not a duration",
		`{"challenge": "captcha"}`:        `challenge: must be "off" or "pow <bits>"`,
		`{"join_limit": 20}`:              `join_limit: must be a string such as "20/m burst 40", or "off"`,
		`{"title": "a\u0009b"}`:           "title: must be one line",
		`{"queueing_method": "lifo"}`:     "queueing_method: must be fifo, random, passthrough or reject",
		`{"paused": true}`:                `unknown field "paused"`,
	} {
		var h Handler
		if err := caddy.StrictUnmarshalJSON([]byte(config), &h); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%s: %v, want %q", config, err, want)
		}
	}
	var h Handler
	if err := json.Unmarshal([]byte(`{"session_duration": "15m", "ticket_lifetime": 3600000000000}`), &h); err != nil ||
		h.Settings.SessionDuration != 15*time.Minute || h.Settings.TicketLifetime != time.Hour {
		t.Errorf("durations: %v %+v", err, h.Settings)
	}
}

func FuzzCaddyfile(f *testing.F) {
	f.Add("waiting_room { room a\n total_active_users 5 }")
	f.Add("waiting_room concert { store redis redis://127.0.0.1:6379\n queue_all }")
	f.Add("waiting_room { event_start 2026-12-01T10:00:00Z }")
	f.Add("waiting_room { signing_key b.pem\n previous_signing_keys a.pem z.pem }")
	f.Fuzz(func(t *testing.T, src string) {
		// NewTestDispenser exits the process on text the tokenizer refuses
		// (an unterminated heredoc, say); such text never reaches our parser.
		tokens, err := caddyfile.Tokenize([]byte(src), "Fuzzfile")
		if err != nil {
			return
		}
		var h Handler
		if err := h.UnmarshalCaddyfile(caddyfile.NewDispenser(tokens)); err != nil {
			return
		}
		// Whatever parses must either validate or fail with an error; never panic.
		_ = h.Validate()
	})
}
