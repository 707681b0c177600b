package foyer_test

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/foyer-dev/foyer/internal/serverproc"
)

// The versions the README's recipe is tested with: xcaddy, the Caddy it builds,
// and one other plugin built beside Foyer into the same binary.
const (
	xcaddyModule = "github.com/caddyserver/xcaddy/cmd/xcaddy@v0.4.5"
	caddyVersion = "v2.11.9"
	otherPlugin  = "github.com/mholt/caddy-l4@v0.1.2"
	// foyerWith is Foyer's --with, before the checkout's path: the module
	// is not published, so it is built from the directory, and named with
	// a version so that go get never asks the module proxy for it.
	foyerWith = "github.com/foyer-dev/foyer@v0.0.0="
)

// TestXcaddyBuildsCaddyWithFoyer follows the README's recipe for operators who
// build their own Caddy: xcaddy builds Caddy with Foyer from this working tree
// and another plugin, both plugins' modules are in the binary, and it runs the
// README's Caddyfile: the room answers under its matcher and the rest of the
// site goes to the origin.
func TestXcaddyBuildsCaddyWithFoyer(t *testing.T) {
	if testing.Short() {
		t.Skip("builds Caddy with xcaddy: a few minutes")
	}
	root, err := os.Getwd()
	if err != nil {
		t.Fatal(err)
	}
	bin := filepath.Join(t.TempDir(), "caddy")
	ctx, cancel := context.WithTimeout(context.Background(), 12*time.Minute)
	defer cancel()
	// An unpublished module must be named with a version: without one, go get
	// asks the module proxy for the module's versions and fails.
	build := exec.CommandContext(ctx, "go", "run", xcaddyModule, "build", caddyVersion,
		"--output", bin,
		"--with", foyerWith+root,
		"--with", otherPlugin)
	build.Dir = t.TempDir() // outside our module, as an operator runs it
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("xcaddy build: %v\n%s", err, tail(out, 4000))
	}

	out, err := exec.Command(bin, "list-modules").CombinedOutput()
	if err != nil {
		t.Fatalf("list-modules: %v\n%s", err, out)
	}
	for _, module := range []string{"http.handlers.waiting_room", "admin.api.waiting_room", "layer4"} {
		if !regexp.MustCompile(`(?m)^` + regexp.QuoteMeta(module) + `$`).Match(out) {
			t.Errorf("module %s missing from the built Caddy:\n%s", module, out)
		}
	}
	out, err = exec.Command(bin, "version").CombinedOutput()
	if err != nil || !strings.HasPrefix(string(out), caddyVersion) {
		t.Errorf("caddy version = %q (%v), want %s", out, err, caddyVersion)
	}

	origin := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		io.WriteString(w, "origin "+r.URL.Path)
	}))
	defer origin.Close()
	site, caddyfile := readmeCaddyfile(t, origin.Listener.Addr().String())
	p, err := serverproc.StartFoyer(bin, caddyfile, site+"/")
	if err != nil {
		t.Fatal(err)
	}
	defer p.Stop()

	if status, body := get(t, site+"/about"); status != http.StatusOK || body != "origin /about" {
		t.Errorf("outside the room: %d %q, want the origin", status, body)
	}
	// The README's room opens its pre-queue at a fixed date: before it a
	// visitor is told when it opens, after it they wait or go in. Either way the
	// answer comes from the room, under the room's title, or from the origin
	// with a pass once the sale runs without a line.
	status, body := get(t, site+"/events/42")
	if status != http.StatusOK || !(strings.Contains(body, "Night of the Foyer") || body == "origin /events/42") {
		t.Errorf("inside the room: %d %q, want the waiting room's page", status, tail([]byte(body), 400))
	}
	if status, body := get(t, site+"/_waiting-room/jwks.json"); status != http.StatusOK || !strings.Contains(body, `"OKP"`) {
		t.Errorf("jwks.json: %d %q", status, body)
	}
}

// TestREADMEXcaddyRecipeIsTheTestedOne: the README's xcaddy recipe is the
// one TestXcaddyBuildsCaddyWithFoyer builds with, so that an operator
// copying it gets what was tested: its first form once named Foyer without
// a path, which fails for a module that is not published.
func TestREADMEXcaddyRecipeIsTheTestedOne(t *testing.T) {
	readme, err := os.ReadFile("README.md")
	if err != nil {
		t.Fatal(err)
	}
	var recipe string
	for _, m := range regexp.MustCompile("(?s)```sh\n(.*?)```").FindAllSubmatch(readme, -1) {
		if strings.Contains(string(m[1]), "xcaddy build") {
			recipe = string(m[1])
			break
		}
	}
	if recipe == "" {
		t.Fatal("the README has no xcaddy recipe")
	}
	for _, want := range []string{"go install " + xcaddyModule, "xcaddy build " + caddyVersion, "--with " + foyerWith, "--with " + otherPlugin} {
		if !strings.Contains(recipe, want) {
			t.Errorf("the README's recipe lacks %q:\n%s", want, recipe)
		}
	}
	if regexp.MustCompile(`--with github\.com/foyer-dev/foyer(\s|$)`).MatchString(recipe) {
		t.Errorf("the README's recipe names Foyer without its checkout:\n%s", recipe)
	}
}

// readmeCaddyfile takes the first Caddyfile of the README and points it at
// loopback: the site address becomes a free local port and the upstream the
// test's origin. A global options block keeps the admin endpoint off the
// default port, which another Caddy on the machine may hold.
func readmeCaddyfile(t *testing.T, upstream string) (site, caddyfile string) {
	t.Helper()
	readme, err := os.ReadFile("README.md")
	if err != nil {
		t.Fatal(err)
	}
	m := regexp.MustCompile("(?s)```caddyfile\n(.*?)```").FindSubmatch(readme)
	if m == nil {
		t.Fatal("README has no caddyfile block")
	}
	cfg := string(m[1])
	if !strings.Contains(cfg, "shop.example.com {") || !strings.Contains(cfg, "reverse_proxy 127.0.0.1:9000") {
		t.Fatalf("the README's first Caddyfile changed shape; update this test:\n%s", cfg)
	}
	port, err := serverproc.FreePort()
	if err != nil {
		t.Fatal(err)
	}
	admin, err := serverproc.FreePort()
	if err != nil {
		t.Fatal(err)
	}
	site = fmt.Sprintf("http://127.0.0.1:%d", port)
	cfg = strings.Replace(cfg, "shop.example.com {", site+" {", 1)
	cfg = strings.Replace(cfg, "reverse_proxy 127.0.0.1:9000", "reverse_proxy "+upstream, 1)
	return site, fmt.Sprintf("{\n\tadmin 127.0.0.1:%d\n}\n", admin) + cfg
}

func get(t *testing.T, url string) (int, string) {
	t.Helper()
	resp, err := http.Get(url)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(body)
}

func tail(b []byte, n int) string {
	if len(b) > n {
		b = b[len(b)-n:]
	}
	return string(b)
}
