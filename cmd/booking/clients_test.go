package main

import (
	"bytes"
	"encoding/json"
	"io"
	"maps"
	"net/http"
	"net/http/cookiejar"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/foyer-dev/foyer/booking"
	"github.com/foyer-dev/foyer/waitingroom/pass"
)

// Clients of the process-level tests: passes signed as a gateway would,
// JSON calls, and the order as the API shows it.

// passSigner signs admission passes as the gateway would, and publishes its
// key in a JWKS file the booking processes read.
type passSigner struct {
	key  *pass.Signer
	jwks string
}

func newPassSigner(t *testing.T) *passSigner {
	t.Helper()
	key, err := pass.GenerateSigner()
	if err != nil {
		t.Fatal(err)
	}
	set, _ := json.Marshal(pass.JWKS{Keys: []pass.JWK{key.JWK()}})
	path := filepath.Join(t.TempDir(), "jwks.json")
	if err := os.WriteFile(path, set, 0o600); err != nil {
		t.Fatal(err)
	}
	return &passSigner{key: key, jwks: path}
}

// shopRoom is the room whose passes passSigner signs.
const shopRoom = "onsale"

// issue signs a pass for customer, valid for an hour.
func (s *passSigner) issue(customer string) (string, error) {
	now := time.Now()
	return s.key.Sign(pass.Claims{Room: shopRoom, Subject: customer, IssuedAt: now, ExpiresAt: now.Add(time.Hour)}, pass.DefaultIssuer)
}

func (s *passSigner) pass(t *testing.T, customer string) string {
	tok, err := s.issue(customer)
	if err != nil {
		t.Error(err)
	}
	return tok
}

// admit joins the room at gw as a new fan and polls its status, as the
// waiting page does, until the room lets the fan in (the room has space for
// everyone: within a tick of its controller). It returns the fan's client,
// with its cookies, and the pass the room gave it.
func admit(t *testing.T, gw string) (*http.Client, string) {
	jar, _ := cookiejar.New(nil)
	c := &http.Client{Jar: jar, Timeout: 20 * time.Second}
	u, _ := url.Parse(gw)
	deadline := time.Now().Add(15 * time.Second)
	for path := "/api/events"; ; path = "/_waiting-room/status" {
		req, _ := http.NewRequest("GET", gw+path, nil)
		req.Header.Set("Accept", "application/json")
		resp, err := c.Do(req)
		if err != nil {
			t.Errorf("visiting the room: %v", err)
			return c, ""
		}
		resp.Body.Close()
		for _, ck := range jar.Cookies(u) {
			if ck.Name == "foyer_pass" {
				return c, ck.Value
			}
		}
		if time.Now().After(deadline) {
			t.Errorf("the room did not let a fan in within 15 s (last status %d)", resp.StatusCode)
			return c, ""
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// call sends one JSON request and decodes a JSON answer into out (if not nil).
func call(t *testing.T, method, url string, header http.Header, body any, out any) int {
	return callWith(t, &http.Client{Timeout: 20 * time.Second}, method, url, header, body, out)
}

// callWith is call with a given client (and so its cookies).
func callWith(t *testing.T, c *http.Client, method, url string, header http.Header, body any, out any) int {
	r := exchange(c, method, url, header, body)
	if r.status == 0 {
		t.Errorf("%s %s: %v", method, url, r.err)
		return 0
	}
	if out != nil && len(r.body) > 0 {
		if err := json.Unmarshal(r.body, out); err != nil {
			t.Errorf("%s %s: %d %s", method, url, r.status, r.body)
		}
	}
	return r.status
}

// reply is one HTTP answer; err is set when there was none, or it was cut
// short (the process was down, or died mid-request).
type reply struct {
	status int
	header http.Header
	body   []byte
	err    error
}

var noRedirects = &http.Client{
	Timeout:       10 * time.Second,
	CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse },
}

// exchange sends one request and reads the whole answer. A string body is
// sent as it is, any other as JSON.
func exchange(c *http.Client, method, url string, header http.Header, body any) reply {
	var rd io.Reader
	switch b := body.(type) {
	case nil:
	case string:
		rd = strings.NewReader(b)
	default:
		js, _ := json.Marshal(b)
		rd = bytes.NewReader(js)
	}
	req, err := http.NewRequest(method, url, rd)
	if err != nil {
		return reply{err: err}
	}
	maps.Copy(req.Header, header)
	resp, err := c.Do(req)
	if err != nil {
		return reply{err: err}
	}
	defer resp.Body.Close()
	data, err := io.ReadAll(resp.Body)
	return reply{status: resp.StatusCode, header: resp.Header, body: data, err: err}
}

type orderJSON struct {
	ID      string `json:"id"`
	Status  string `json:"status"`
	Amount  string `json:"amount"`
	Payment struct {
		ProviderPaymentID string `json:"provider_payment_id"`
		PayURL            string `json:"pay_url"`
	} `json:"payment"`
	Tickets []struct {
		ID       string `json:"id"`
		Delivery *struct {
			Code string `json:"code"`
		} `json:"delivery"`
	} `json:"tickets"`
}

func delivered(o orderJSON, quantity int) bool {
	if o.Status != "paid" || len(o.Tickets) != quantity {
		return false
	}
	for _, tk := range o.Tickets {
		if tk.Delivery == nil {
			return false
		}
	}
	return true
}

// cents turns "50.00" into 5000.
func cents(t *testing.T, amount string) int64 {
	m, err := booking.ParseMoney(amount)
	if err != nil {
		t.Errorf("amount %q: %v", amount, err)
	}
	return int64(m)
}

func scrape(t *testing.T, base string) string {
	t.Helper()
	resp, err := http.Get(base + "/metrics")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return string(b)
}
