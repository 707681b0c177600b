package bench

import (
	"fmt"
	"net/http"
	"net/http/cookiejar"
	"net/url"
	"strings"
	"time"

	"github.com/foyer-dev/foyer/internal/loadgen"
	"github.com/foyer-dev/foyer/internal/serverproc"
)

// roomSite starts one Caddy serving a bare `respond` site and a site behind a
// waiting room that admits nobody (queue_all), so every visitor stays in line;
// roomLines are further lines of its waiting_room block.
type roomSite struct {
	proc    *serverproc.Foyer
	respond string // URL of the baseline
	room    string // base URL of the site behind the waiting room
}

// quietGlobals opens every Caddyfile the benchmarks write: no admin endpoint,
// no certificates and nothing saved, so a run leaves nothing behind.
const quietGlobals = `{
	admin off
	auto_https off
	persist_config off
}
`

// statusBody is about the size of a status answer, so the baseline writes as
// many bytes as the waiting room does.
const statusBody = `{"room":"bench","state":"queued","position":123456,"eta_seconds":1234,"refresh_seconds":20,"progress":0.5,"waiting":234567}`

func startRoomSite(foyer, store string, roomLines ...string) (*roomSite, error) {
	ports, err := serverproc.FreePorts(2)
	if err != nil {
		return nil, err
	}
	respondPort, roomPort := ports[0], ports[1]
	storeLine := "store memory"
	if store != "" {
		storeLine = "store redis " + store
	}
	cfg := fmt.Sprintf(quietGlobals+`http://127.0.0.1:%d {
	header Content-Type application/json
	header Cache-Control no-store
	respond `+"`%s`"+` 200
}
http://127.0.0.1:%d {
	waiting_room {
		room bench-%d
		%s
		queue_all
		%s
	}
	respond "origin" 200
}
`, respondPort, statusBody, roomPort, time.Now().UnixNano(), storeLine, strings.Join(roomLines, "\n\t\t"))
	s := &roomSite{
		respond: fmt.Sprintf("http://127.0.0.1:%d/status", respondPort),
		room:    fmt.Sprintf("http://127.0.0.1:%d", roomPort),
	}
	if s.proc, err = serverproc.StartFoyer(foyer, cfg, s.respond, s.room+"/_waiting-room/jwks.json"); err != nil {
		return nil, err
	}
	return s, nil
}

func jsonGet(u string) *http.Request {
	req, _ := http.NewRequest(http.MethodGet, u, nil)
	req.Header.Set("Accept", "application/json")
	return req
}

func expectJSON(resp *http.Response) error {
	if resp.StatusCode != http.StatusOK || !strings.HasPrefix(resp.Header.Get("Content-Type"), "application/json") {
		return fmt.Errorf("got %d %s", resp.StatusCode, resp.Header.Get("Content-Type"))
	}
	return nil
}

// Poll measures status polls of fans already in line against `respond`,
// with the tickets of fans fans in rotation. store is the Redis URL of the
// room's store, or empty for memory.
func Poll(c Options, store string, fans int) (Ratio, error) {
	site, err := startRoomSite(c.Foyer, store)
	if err != nil {
		return Ratio{}, err
	}
	defer site.proc.Stop()
	tickets, err := joinFans(site.room+"/_waiting-room/status", fans)
	if err != nil {
		return Ratio{}, err
	}
	status := site.room + "/_waiting-room/status"
	fmt.Printf("status poll vs respond: %d conns, %d rounds of %.0fs, %d fans in line, store %s\n", c.Conns, c.Rounds, c.RoundSecs, len(tickets), storeName(store))
	// Both contenders get the same request, ticket cookie and all: a fan's
	// browser sends it whatever answers.
	return compare(c,
		contender{"caddy respond", func(w, i int) *http.Request {
			req := jsonGet(site.respond)
			req.AddCookie(tickets[(w*7919+i)%len(tickets)])
			return req
		}, expectJSON},
		contender{"foyer status poll", func(w, i int) *http.Request {
			req := jsonGet(status)
			req.AddCookie(tickets[(w*7919+i)%len(tickets)])
			return req
		}, expectJSON})
}

// Join measures newcomers joining the line against `respond`. store is the
// Redis URL of the room's store, or empty for memory.
func Join(c Options, store string) (Ratio, error) {
	site, err := startRoomSite(c.Foyer, store)
	if err != nil {
		return Ratio{}, err
	}
	defer site.proc.Stop()
	status := site.room + "/_waiting-room/status"
	fmt.Printf("join vs respond: %d conns, %d rounds of %.0fs, store %s\n", c.Conns, c.Rounds, c.RoundSecs, storeName(store))
	return compare(c,
		contender{"caddy respond", func(w, i int) *http.Request { return jsonGet(site.respond) }, expectJSON},
		contender{"foyer join", func(w, i int) *http.Request { return jsonGet(status) }, func(resp *http.Response) error {
			if err := expectJSON(resp); err != nil {
				return err
			}
			for _, ck := range resp.Cookies() {
				if ck.Name == "foyer_ticket" {
					return nil
				}
			}
			return fmt.Errorf("no ticket: not a join")
		}})
}

// joinFans puts n fans in line and returns their ticket cookies.
func joinFans(status string, n int) ([]*http.Cookie, error) {
	u, _ := url.Parse(status)
	client := &http.Client{Timeout: 5 * time.Second, Transport: &http.Transport{DialContext: loadgen.LoopbackDialer}}
	out := make([]*http.Cookie, 0, n)
	for i := 0; i < n; i++ {
		jar, _ := cookiejar.New(nil)
		client.Jar = jar
		resp, err := client.Do(jsonGet(status))
		if err != nil {
			return nil, err
		}
		resp.Body.Close()
		for _, ck := range jar.Cookies(u) {
			if ck.Name == "foyer_ticket" {
				out = append(out, &http.Cookie{Name: ck.Name, Value: ck.Value})
			}
		}
		if len(out) != i+1 {
			return nil, fmt.Errorf("fan %d got no ticket", i)
		}
	}
	return out, nil
}

func storeName(s string) string {
	if s == "" {
		return "memory"
	}
	return s
}
