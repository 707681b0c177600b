package bench

import (
	"fmt"
	"net/http"
	"net/http/cookiejar"
	"net/url"
	"time"

	"github.com/foyer-dev/foyer/internal/loadgen"
	"github.com/foyer-dev/foyer/internal/serverproc"
)

// Proxy measures an admitted fan's request through Foyer against bare Caddy
// reverse_proxy to the same upstream, both sites served by one Caddy
// process. The load rotates through the passes of that many admitted fans.
func Proxy(c Options, fans int) (Ratio, error) {
	p, err := startProxySites(c.Foyer)
	if err != nil {
		return Ratio{}, err
	}
	defer p.stop()
	bare, gated := p.bare, p.gated

	passes, err := admitFans(gated, fans)
	if err != nil {
		return Ratio{}, err
	}
	// Both contenders get the very same request: a fan's browser sends its
	// cookies whatever sits in front of the site, so receiving them is not the
	// waiting room's cost.
	bareReq := func(w, i int) *http.Request {
		req, _ := http.NewRequest(http.MethodGet, bare, nil)
		req.AddCookie(passes[(w*7919+i)%len(passes)])
		return req
	}
	gatedReq := func(w, i int) *http.Request {
		req, _ := http.NewRequest(http.MethodGet, gated, nil)
		req.AddCookie(passes[(w*7919+i)%len(passes)])
		return req
	}
	reachedOrigin := func(resp *http.Response) error {
		if resp.StatusCode != http.StatusOK || resp.ContentLength != 512 {
			return fmt.Errorf("got %d with %d bytes, not the origin's answer", resp.StatusCode, resp.ContentLength)
		}
		return nil
	}
	fmt.Printf("admitted request through Foyer vs bare reverse_proxy: %d conns, %d rounds of %.0fs each, %d fans\n",
		c.Conns, c.Rounds, c.RoundSecs, len(passes))
	return compare(c, contender{"bare reverse_proxy", bareReq, reachedOrigin}, contender{"foyer (admitted)", gatedReq, reachedOrigin})
}

// admitFans lets n fans in and returns their pass cookies.
func admitFans(site string, n int) ([]*http.Cookie, error) {
	u, _ := url.Parse(site)
	var out []*http.Cookie
	for i := 0; i < n; i++ {
		jar, _ := cookiejar.New(nil)
		client := &http.Client{Jar: jar, Timeout: 5 * time.Second, Transport: &http.Transport{DialContext: loadgen.LoopbackDialer}}
		var pass *http.Cookie
		for attempt := 0; attempt < 50 && pass == nil; attempt++ {
			resp, err := client.Get(site)
			if err != nil {
				return nil, err
			}
			resp.Body.Close()
			for _, ck := range jar.Cookies(u) {
				if ck.Name == "foyer_pass" {
					pass = ck
				}
			}
			if pass == nil {
				time.Sleep(100 * time.Millisecond) // wait for the controller's next step
			}
		}
		if pass == nil {
			return nil, fmt.Errorf("fan %d was never admitted", i)
		}
		out = append(out, &http.Cookie{Name: pass.Name, Value: pass.Value})
	}
	return out, nil
}

// proxySites is one Caddy serving an upstream twice: bare reverse_proxy, and
// behind a waiting room that admits everyone at once.
type proxySites struct {
	bare, gated string // URLs of the same page through each site
	stop        func()
}

func startProxySites(foyer string) (*proxySites, error) {
	up, stopUp, err := startUpstream()
	if err != nil {
		return nil, err
	}
	ports, err := serverproc.FreePorts(2)
	if err != nil {
		stopUp()
		return nil, err
	}
	barePort, foyerPort := ports[0], ports[1]
	cfg := fmt.Sprintf(quietGlobals+`http://127.0.0.1:%d {
	reverse_proxy %s
}
http://127.0.0.1:%d {
	waiting_room {
		room bench
		total_active_users 1000000
		new_users_per_minute 10000000
		session_duration 1h
	}
	reverse_proxy %s
}
`, barePort, up, foyerPort, up)
	p := &proxySites{
		bare:  fmt.Sprintf("http://127.0.0.1:%d/events/42", barePort),
		gated: fmt.Sprintf("http://127.0.0.1:%d/events/42", foyerPort),
	}
	proc, err := serverproc.StartFoyer(foyer, cfg, p.bare)
	if err != nil {
		stopUp()
		return nil, err
	}
	p.stop = func() { proc.Stop(); stopUp() }
	return p, nil
}
