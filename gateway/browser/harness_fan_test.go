package browser

import (
	"net/http"
	"net/url"
	"testing"

	"github.com/foyer-dev/foyer/internal/fantest"
	"github.com/foyer-dev/foyer/waitingroom"
)

// fan is a fan without a browser: an HTTP client with a cookie jar of its
// own, which follows no redirect. The tests put such fans in line around the
// one in the browser.
type fan struct {
	t      *testing.T
	client *http.Client
}

func newFan(t *testing.T) *fan { return &fan{t: t, client: fantest.NewClient()} }

// get asks for url, with headers given as name, value pairs, and returns the
// answer and its body.
func (f *fan) get(url string, header ...string) (*http.Response, string) {
	f.t.Helper()
	return fantest.Get(f.t, f.client, url, header...)
}

// status is the fan's status at the site, as the page's polls read it
// (docs/PROTOCOL.md).
func (f *fan) status(site string) waitingroom.Status {
	f.t.Helper()
	return fantest.Status(f.t, f.client, site)
}

// cookie is the value of the fan's cookie name for site, or "".
func (f *fan) cookie(site, name string) string {
	u, err := url.Parse(site)
	if err != nil {
		f.t.Fatal(err)
	}
	return fantest.Cookie(f.client, u, name)
}
