package browsertest

import (
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/chromedp/chromedp"
)

// ArtifactsEnv names the directory a run keeps its screenshots in, as every
// browser test of the repository does; unset, they go under
// $TMPDIR/foyer-artifacts. Inside the repository, the ignored foyer-artifacts/
// is the place (FOYER_ARTIFACTS=$PWD/foyer-artifacts).
const ArtifactsEnv = "FOYER_ARTIFACTS"

var logged sync.Map

// Artifacts returns the test's directory of artifacts, made if need be and
// named after the test, and logs where it is once per test.
func Artifacts(t testing.TB) string {
	t.Helper()
	root := os.Getenv(ArtifactsEnv)
	if root == "" {
		root = filepath.Join(os.TempDir(), "foyer-artifacts")
	}
	dir := filepath.Join(root, strings.NewReplacer("/", "_", " ", "_").Replace(t.Name()))
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatalf("artifacts: %v", err)
	}
	if _, seen := logged.LoadOrStore(dir, true); !seen {
		t.Logf("screenshots in %s", dir)
	}
	return dir
}

// Screenshot keeps a picture of the whole page as <artifacts>/<name>.png.
func (p *Page) Screenshot(name string) {
	p.t.Helper()
	png, err := chromedp.Run(p.Ctx, chromedp.FullScreenshot(100))
	if err != nil {
		p.t.Fatalf("screenshot %s: %v", name, err)
	}
	if err := os.WriteFile(filepath.Join(Artifacts(p.t), name+".png"), png, 0o644); err != nil {
		p.t.Fatalf("screenshot %s: %v", name, err)
	}
}
