package fantest

import (
	"encoding/json"
	"io"
	"net/http"
	"net/http/cookiejar"
	"net/url"
	"testing"

	"github.com/foyer-dev/foyer/waitingroom"
)

// NewClient is a fan's client: a cookie jar of its own, no redirect
// followed.
func NewClient() *http.Client {
	jar, _ := cookiejar.New(nil)
	return &http.Client{Jar: jar, CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
}

// Get asks for url with the fan's client, with headers given as name, value
// pairs, and returns the answer and its body.
func Get(t testing.TB, c *http.Client, url string, header ...string) (*http.Response, string) {
	t.Helper()
	req, err := http.NewRequest(http.MethodGet, url, nil)
	if err != nil {
		t.Fatal(err)
	}
	for i := 0; i+1 < len(header); i += 2 {
		req.Header.Set(header[i], header[i+1])
	}
	resp, err := c.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(resp.Body)
	return resp, string(body)
}

// Status is the fan's status at site, as the waiting page's polls read it
// (docs/endpoints.md, "The status"); anything but a 200 with a status fails
// the test.
func Status(t testing.TB, c *http.Client, site string) waitingroom.Status {
	t.Helper()
	resp, body := Get(t, c, site+"/_waiting-room/status", "Accept", "application/json")
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("status: %d %s", resp.StatusCode, body)
	}
	var st waitingroom.Status
	if err := json.Unmarshal([]byte(body), &st); err != nil {
		t.Fatalf("status body %q: %v", body, err)
	}
	return st
}

// Cookie is the value of the cookie name the fan's client holds for u, or "".
func Cookie(c *http.Client, u *url.URL, name string) string {
	for _, ck := range c.Jar.Cookies(u) {
		if ck.Name == name {
			return ck.Value
		}
	}
	return ""
}
