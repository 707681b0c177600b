package gateway

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

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

func TestSettingErrorsNameTheSetting(t *testing.T) {
	cases := []struct {
		h       Handler
		setting string
	}{
		{Handler{}, "room"},
		{Handler{Room: "bad room!"}, "room"},
		{Handler{Room: "r", QueueingMethod: "lifo"}, "queueing_method"},
		{Handler{Room: "r", EventStart: "tomorrow"}, "event_start"},
		{Handler{Room: "r", EventStart: "2026-12-01T10:00:00Z", EventEnd: "2026-12-01T09:00:00Z"}, "event_end"},
		{Handler{Room: "r", PrequeueStart: "2026-12-01T10:00:00Z"}, "prequeue_start"},
		{Handler{Room: "r", ShuffleAtEventStart: true}, "shuffle_at_event_start"},
		{Handler{Room: "r", SessionDuration: 1}, "session_duration"},
		{Handler{Room: "r", QueuedStatusCode: 418}, "queued_status_code"},
		{Handler{Room: "r", PathPrefix: "nope"}, "path_prefix"},
		{Handler{Room: "r", CookiePrefix: "a b"}, "cookie_prefix"},
		{Handler{Room: "r", OnStoreFailure: "maybe"}, "on_store_failure"},
		{Handler{Room: "r", Store: &StoreConfig{Backend: "etcd"}}, "store"},
		{Handler{Room: "r", Store: &StoreConfig{Backend: "redis"}}, "store"},
		{Handler{Room: "r", PreviousSigningKeys: []string{""}}, "previous_signing_keys"},
		{Handler{Room: "r", PreviousSigningKeys: []string{"1", "2", "3", "4", "5"}}, "previous_signing_keys"},
	}
	if err := (&Handler{Room: "r", PreviousSigningKeys: []string{"old.pem"}}).Validate(); err != nil {
		t.Errorf("a valid handler: %v", err)
	}
	for _, tc := range cases {
		err := tc.h.Validate()
		if err == nil || !strings.Contains(err.Error(), tc.setting) {
			t.Errorf("%+v: error %v, want one naming %s", tc.h, err, tc.setting)
		}
	}
}

func FuzzCaddyfile(f *testing.F) {
	f.Add("waiting_room { room a\n total_active_users 5 }")
	f.Add("waiting_room concert { store redis redis://127.0.0.1:6379\n queue_all }")
	f.Add("waiting_room { event_start 2026-12-01T10:00:00Z }")
	f.Add("waiting_room { signing_key b.pem\n previous_signing_keys a.pem z.pem }")
	f.Fuzz(func(t *testing.T, src string) {
		var h Handler
		if err := h.UnmarshalCaddyfile(caddyfile.NewTestDispenser(src)); err != nil {
			return
		}
		// Whatever parses must either validate or fail with an error; never panic.
		_ = h.Validate()
	})
}
