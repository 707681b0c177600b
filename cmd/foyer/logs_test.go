package main

import (
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/foyer-dev/foyer/internal/serverproc"
)

// readmeLogOptions is the global options docs/operations.md gives for a quiet
// admin log (Logs), the lines inside its braces.
func readmeLogOptions(t *testing.T) string {
	t.Helper()
	readme, err := os.ReadFile(filepath.Join("..", "..", "docs", "operations.md"))
	if err != nil {
		t.Fatal(err)
	}
	for _, m := range regexp.MustCompile("(?s)```caddyfile\n\\{\n(.*?)\n\\}\n```").FindAllSubmatch(readme, -1) {
		if strings.Contains(string(m[1]), "exclude admin.api") {
			return string(m[1])
		}
	}
	t.Fatal("docs/operations.md has no log options for the admin endpoint")
	return ""
}

// TestLogs runs foyer with and without the log options of docs/operations.md: the log
// tells that the room started and which key it loaded, and an admin change
// at info; Caddy's own info line for every admin request is there without
// the options, and gone with them, while Foyer's lines stay.
func TestLogs(t *testing.T) {
	bin := foyer(t)
	for _, quiet := range []bool{false, true} {
		t.Run(fmt.Sprintf("quiet=%v", quiet), func(t *testing.T) {
			site, err := serverproc.FreePort()
			if err != nil {
				t.Fatal(err)
			}
			admin, err := serverproc.FreePort()
			if err != nil {
				t.Fatal(err)
			}
			options := ""
			if quiet {
				options = readmeLogOptions(t)
			}
			caddyfile := fmt.Sprintf("{\n\tadmin 127.0.0.1:%d\n\tstorage file_system %s\n%s\n}\nhttp://127.0.0.1:%d {\n\twaiting_room {\n\t\troom logs\n\t}\n\trespond ok\n}\n",
				admin, t.TempDir(), options, site)
			base := fmt.Sprintf("http://127.0.0.1:%d", admin)
			p, err := serverproc.StartFoyer(bin, caddyfile, base+"/waiting-room/logs")
			if err != nil {
				t.Fatal(err)
			}
			// The admin endpoint answers before the room is provisioned:
			// read until the room is there, then twice more.
			ok := 0
			for tries := 0; ok < 3 && tries < 200; tries++ {
				resp, err := http.Get(base + "/waiting-room/logs")
				if err != nil {
					p.Stop()
					t.Fatal(err)
				}
				resp.Body.Close()
				if resp.StatusCode == http.StatusOK {
					ok++
				} else {
					time.Sleep(50 * time.Millisecond)
				}
			}
			req, _ := http.NewRequest(http.MethodPatch, base+"/waiting-room/logs", strings.NewReader(`{"title": "Logged"}`))
			resp, err := http.DefaultClient.Do(req)
			if err != nil || resp.StatusCode != http.StatusOK {
				p.Stop()
				t.Fatalf("PATCH: %v %v", resp, err)
			}
			resp.Body.Close()
			p.Stop()
			log := string(p.Log())

			for _, want := range []string{`"msg":"waiting room started","room":"logs","phase":"live"`,
				`"msg":"waiting room signing key loaded","room":"logs"`,
				`"msg":"waiting room settings changed","room":"logs","settings":["title"]`} {
				if strings.Count(log, want) != 1 {
					t.Errorf("the log has %d of %s, want 1:\n%s", strings.Count(log, want), want, log)
				}
			}
			received := strings.Count(log, `"logger":"admin.api","msg":"received request","method":"GET","host":"127.0.0.1`)
			switch {
			case quiet && received > 0:
				t.Errorf("with the documented options, Caddy still logs %d admin reads:\n%s", received, log)
			case !quiet && received < ok:
				t.Errorf("without options, %d of Caddy's lines for 3 admin reads: the test no longer sees them:\n%s", received, log)
			}
			if strings.Contains(log, "waiting room admin read") {
				t.Errorf("an admin read logged above debug:\n%s", log)
			}
		})
	}
}
