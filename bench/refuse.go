package bench

import (
	"fmt"
	"net/http"
	"time"

	"github.com/foyer-dev/foyer/internal/serverproc"
)

// refusalBody is the size of a join_limit refusal, so the baseline writes as
// many bytes as the waiting room does.
const refusalBody = `{"error":"join_limited","message":"Too many new places from your network; try again in 3600 seconds.","retry_after":3600}`

// Refuse measures what a newcomer over its join_limit costs the node, the
// only request an abusive client sends, against Caddy's respond answering
// the same 429 with as many bytes. The load comes from one address, which
// had its one place before the rounds began.
func Refuse(c Options) (Ratio, error) {
	ports, err := serverproc.FreePorts(2)
	if err != nil {
		return Ratio{}, err
	}
	respondPort, roomPort := ports[0], ports[1]
	cfg := fmt.Sprintf(quietGlobals+`http://127.0.0.1:%d {
	header Content-Type application/json
	header Cache-Control no-store
	header Retry-After 3600
	respond `+"`%s`"+` 429
}
http://127.0.0.1:%d {
	waiting_room {
		room bench-refuse-%d
		queue_all
		join_limit 1/h burst 1
	}
	respond "origin" 200
}
`, respondPort, refusalBody, roomPort, time.Now().UnixNano())
	respond := fmt.Sprintf("http://127.0.0.1:%d/", respondPort)
	room := fmt.Sprintf("http://127.0.0.1:%d/events/42", roomPort)
	proc, err := serverproc.StartFoyer(c.Foyer, cfg, respond)
	if err != nil {
		return Ratio{}, err
	}
	defer proc.Stop()
	// The address's one place.
	if _, err := joinFans(room, 1); err != nil {
		return Ratio{}, err
	}
	refused := func(resp *http.Response) error {
		if resp.StatusCode != http.StatusTooManyRequests || resp.Header.Get("Retry-After") == "" {
			return fmt.Errorf("got %d, Retry-After %q: not a refusal", resp.StatusCode, resp.Header.Get("Retry-After"))
		}
		return nil
	}
	fmt.Printf("join refused by join_limit vs respond 429: %d conns, %d rounds of %.0fs\n", c.Conns, c.Rounds, c.RoundSecs)
	return compare(c,
		contender{"caddy respond 429", func(w, i int) *http.Request { return jsonGet(respond) }, refused},
		contender{"foyer join refused", func(w, i int) *http.Request { return jsonGet(room) }, refused})
}
