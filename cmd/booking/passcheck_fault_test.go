package main

import (
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/cookiejar"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/foyer-dev/foyer/waitingroom"
)

// TestFaultPassOfAnotherRoomOrIssuer puts the booking service of room
// "onsale" behind three real gateway sites that share one signing key: the
// right room, another room ("other"), and a second gateway whose room has
// the same id but another issuer. Only the first one's fans may shop; the
// others get 401 with a JSON error. Without -room the service refuses to
// start.
func TestFaultPassOfAnotherRoomOrIssuer(t *testing.T) {
	const adminToken = "room-admin"
	out, err := exec.Command(bookingBinary(t), "-jwks", "http://127.0.0.1:1/jwks.json").CombinedOutput()
	if code := exitCode(err); code != 2 || !strings.Contains(string(out), "-room") {
		t.Fatalf("starting without -room: exit %d, %s; want 2 naming -room", code, out)
	}

	key, err := waitingroom.GenerateSigningKey()
	if err != nil {
		t.Fatal(err)
	}
	pem, err := key.MarshalPEM()
	if err != nil {
		t.Fatal(err)
	}
	keyFile := filepath.Join(t.TempDir(), "signing.pem")
	if err := os.WriteFile(keyFile, pem, 0o600); err != nil {
		t.Fatal(err)
	}
	origin := freePort(t)
	site := func(port int, room, extra string) string {
		return fmt.Sprintf(`http://127.0.0.1:%d {
	waiting_room {
		room %s
		signing_key %s
		new_users_per_minute 600
		total_active_users 50
		%s
	}
	reverse_proxy 127.0.0.1:%d
}
`, port, room, keyFile, extra, origin)
	}
	global := "{\n\tadmin off\n\tauto_https off\n\tpersist_config off\n}\n"
	right, otherRoom, otherIssuer := freePort(t), freePort(t), freePort(t)
	base := func(port int) string { return fmt.Sprintf("http://127.0.0.1:%d", port) }
	startFoyer(t, "foyer-1", global+site(right, "onsale", "")+site(otherRoom, "other", ""), base(right))
	startFoyer(t, "foyer-2", global+site(otherIssuer, "onsale", "issuer elsewhere"), base(otherIssuer))
	b := runBooking(t, "booking", origin, "-jwks", base(right)+"/_waiting-room/jwks.json", "-room", "onsale",
		"-admin-token", adminToken, "-seed-demo")

	cases := []struct {
		name   string
		base   string
		status int
	}{
		{"the service's own room", base(right), http.StatusOK},
		{"another room, same key", base(otherRoom), http.StatusUnauthorized},
		{"same room id, another issuer, same key", base(otherIssuer), http.StatusUnauthorized},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			jar, _ := cookiejar.New(nil)
			client := &http.Client{Jar: jar, Timeout: 10 * time.Second}
			for _, path := range []string{"/api/events", "/api/events/1/holds"} {
				var resp *http.Response
				var err error
				if strings.HasSuffix(path, "holds") {
					resp, err = client.Post(c.base+path, "application/json", strings.NewReader(`{"zone":"FLOOR","quantity":1}`))
				} else {
					resp, err = client.Get(c.base + path)
				}
				if err != nil {
					t.Fatal(err)
				}
				var body struct{ Error, Message string }
				_ = json.NewDecoder(resp.Body).Decode(&body)
				resp.Body.Close()
				want := c.status
				if want == http.StatusOK && strings.HasSuffix(path, "holds") {
					want = http.StatusCreated
				}
				if resp.StatusCode != want {
					t.Fatalf("%s through %s = %d %+v; want %d", path, c.base, resp.StatusCode, body, want)
				}
				if want == http.StatusUnauthorized && (body.Error != "unauthorized" || body.Message == "") {
					t.Fatalf("%s refused without a JSON error: %+v", path, body)
				}
			}
		})
	}
	// Only the one fan of the right room holds a place.
	if m := scrape(t, b.url); !strings.Contains(m, "foyer_booking_held_places 1\n") {
		t.Fatalf("held places after the refused fans: want 1\n%s", grepLines(m, "held_places"))
	}
	checkInvariants(t, b.url, adminToken)
}

func exitCode(err error) int {
	if ee, ok := err.(*exec.ExitError); ok {
		return ee.ExitCode()
	}
	if err != nil {
		return -1
	}
	return 0
}

func grepLines(s, substr string) string {
	var out []string
	for _, l := range strings.Split(s, "\n") {
		if strings.Contains(l, substr) {
			out = append(out, l)
		}
	}
	return strings.Join(out, "\n")
}
