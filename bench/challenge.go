package bench

import (
	"fmt"
	"io"
	"net/http"
	"strings"
	"time"

	"github.com/foyer-dev/foyer/internal/loadgen"
)

// Challenge measures handing newcomers a proof-of-work seed (challenge pow,
// the default bits) against `respond`: what a room asking for proof of work
// pays per newcomer before any answer, with nothing stored.
func Challenge(c Options) (Ratio, error) {
	site, err := startRoomSite(c.Foyer, "", "challenge pow")
	if err != nil {
		return Ratio{}, err
	}
	defer site.proc.Stop()
	status := site.room + "/_waiting-room/status"
	if err := expectChallenge(status); err != nil {
		return Ratio{}, err
	}
	fmt.Printf("challenge vs respond: %d conns, %d rounds of %.0fs\n", c.Conns, c.Rounds, c.RoundSecs)
	return compare(c,
		contender{"caddy respond", func(w, i int) *http.Request { return jsonGet(site.respond) }, expectJSON},
		contender{"foyer challenge", func(w, i int) *http.Request { return jsonGet(status) }, func(resp *http.Response) error {
			if err := expectJSON(resp); err != nil {
				return err
			}
			if len(resp.Cookies()) > 0 {
				return fmt.Errorf("a cookie was set: not a challenge")
			}
			return nil
		}})
}

// expectChallenge checks once that a newcomer is asked for a proof of work
// (the load generator discards bodies before its checks see them).
func expectChallenge(status string) error {
	client := &http.Client{Timeout: 5 * time.Second, Transport: &http.Transport{DialContext: loadgen.LoopbackDialer}}
	resp, err := client.Do(jsonGet(status))
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(io.LimitReader(resp.Body, 4096))
	if !strings.Contains(string(b), `"state":"challenge"`) {
		return fmt.Errorf("the room did not ask for a proof of work: %s", b)
	}
	return nil
}
