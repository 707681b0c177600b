package integration

import (
	"encoding/base64"
	"encoding/json"
	"io"
	"net"
	"net/http"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/foyer-dev/foyer/waitingroom"
)

// peer is one client machine: requests go out from its own loopback
// address (Linux answers on all of 127.0.0.0/8), carry no cookie jar and
// follow no redirect, as a script's would.
type peer struct {
	t      *testing.T
	client *http.Client
}

func newPeer(t *testing.T, ip string) *peer {
	d := &net.Dialer{LocalAddr: &net.TCPAddr{IP: net.ParseIP(ip)}, Timeout: 5 * time.Second}
	tr := &http.Transport{DialContext: d.DialContext, MaxIdleConnsPerHost: 16}
	t.Cleanup(tr.CloseIdleConnections)
	return &peer{t: t, client: &http.Client{Transport: tr, Timeout: 10 * time.Second,
		CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}}
}

// reply is what one request got, as the tests here judge it.
type reply struct {
	code       int
	ticket     bool   // a ticket cookie was set: a place was made
	pass       bool   // a pass cookie was set
	cookies    int    // Set-Cookie headers of any kind
	retryAfter string // Retry-After
	body       string
}

// do sends method to url from p with the given headers (name, value, ...).
func (p *peer) do(method, url string, header ...string) reply {
	p.t.Helper()
	req, err := http.NewRequest(method, url, nil)
	if err != nil {
		p.t.Fatal(err)
	}
	for i := 0; i+1 < len(header); i += 2 {
		req.Header.Set(header[i], header[i+1])
	}
	return p.send(req)
}

// post sends body as JSON from p, as the waiting page's worker answers the
// puzzle.
func (p *peer) post(url, body string) reply {
	p.t.Helper()
	req, err := http.NewRequest(http.MethodPost, url, strings.NewReader(body))
	if err != nil {
		p.t.Fatal(err)
	}
	req.Header.Set("Accept", "application/json")
	req.Header.Set("Content-Type", "application/json")
	return p.send(req)
}

func (p *peer) send(req *http.Request) reply {
	p.t.Helper()
	resp, err := p.client.Do(req)
	if err != nil {
		p.t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	a := reply{code: resp.StatusCode, cookies: len(resp.Header.Values("Set-Cookie")), retryAfter: resp.Header.Get("Retry-After"), body: string(b)}
	for _, c := range resp.Cookies() {
		a.ticket = a.ticket || c.Name == "foyer_ticket"
		a.pass = a.pass || c.Name == "foyer_pass"
	}
	return a
}

// solvePuzzle reads the proof-of-work challenge of a status answer (README,
// "Bots and abuse") and returns the JSON answer to post to <prefix>/join.
func solvePuzzle(t *testing.T, status reply) string {
	t.Helper()
	var st struct {
		State     string `json:"state"`
		Challenge *struct {
			Seed string `json:"seed"`
			Bits int    `json:"bits"`
		} `json:"challenge"`
	}
	if err := json.Unmarshal([]byte(status.body), &st); err != nil || st.State != "challenge" || st.Challenge == nil {
		t.Fatalf("asking for a puzzle: %d %s", status.code, status.body)
	}
	seed, err := base64.RawURLEncoding.DecodeString(strings.TrimRight(st.Challenge.Seed, "="))
	if err != nil {
		t.Fatalf("seed %q is not base64url: %v", st.Challenge.Seed, err)
	}
	for i := range 1 << 26 {
		nonce := strconv.Itoa(i)
		if waitingroom.LeadingZeroBits(seed, nonce) >= st.Challenge.Bits {
			b, _ := json.Marshal(map[string]string{"seed": st.Challenge.Seed, "nonce": nonce})
			return string(b)
		}
	}
	t.Fatal("no nonce found in 2^26 tries")
	return ""
}
