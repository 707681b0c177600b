package gateway

import (
	"encoding/csv"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"

	"github.com/foyer-dev/foyer/internal/redistest"
	"github.com/foyer-dev/foyer/waitingroom"
)

// Access codes on a real Caddy (docs/codes.md): two nodes of one room (two
// sites of the process, each with its own room handle) share a Redis. Codes
// are added through the admin API, and redeemed by ?code=, by the header and
// by the page's form, on both nodes; a single-use code raced on both makes
// one place; codes_required leaves fans without a code no place. No code
// ever reaches the origin, a log line or the audit trail.

// codesConfig is the room on two nodes, logging at debug to logFile (access
// logs with ?code= and the code header filtered out, as docs/codes.md says
// to), in front of an origin that echoes the URI it was asked for.
func codesConfig(storage, room, store, logFile, extra string) string {
	node := func(port, title string) string {
		return fmt.Sprintf(`
	http://localhost:%s {
		log {
			output file %s
			format filter {
				request>uri query {
					delete code
				}
				request>headers>X-Waiting-Room-Code delete
			}
		}
		waiting_room {
			room %s
			title "%s"
			%s
			total_active_users 1
			new_users_per_minute 60
			lanes presale=1 members=1
			%s
		}
		reverse_proxy 127.0.0.1:9081
	}`, port, logFile, room, title, store, extra)
	}
	sites := node("9080", "node a") + node("9082", "node b") + `
	:9081 {
		bind 127.0.0.1
		respond "origin uri={http.request.uri}" 200
	}`
	globals := fmt.Sprintf("log {\n\t\t\toutput file %s\n\t\t\tlevel DEBUG\n\t\t}", logFile)
	return caddyConfigWith(storage, globals, strings.ReplaceAll(sites, ":9082", ":"+strconv.Itoa(nodeBPort)))
}

// readCSV reads an admin answer's CSV, header line first.
func readCSV(t *testing.T, body string) [][]string {
	t.Helper()
	recs, err := csv.NewReader(strings.NewReader(body)).ReadAll()
	if err != nil || len(recs) == 0 {
		t.Fatalf("not CSV: %q %v", body, err)
	}
	return recs
}

// postCode posts the page's code form through a node, as a browser on the
// page's own site (site is Sec-Fetch-Site) would.
func (f *fan) postCode(t *testing.T, node, site, code string, header ...string) (*http.Response, string) {
	t.Helper()
	form := url.Values{"code": {code}, "back": {"/events/7"}}
	req, _ := http.NewRequest(http.MethodPost, node+"/_waiting-room/code", strings.NewReader(form.Encode()))
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	req.Header.Set("Sec-Fetch-Site", site)
	for i := 0; i+1 < len(header); i += 2 {
		req.Header.Set(header[i], header[i+1])
	}
	resp, err := f.client.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(resp.Body)
	return resp, string(body)
}

func hasTicket(resp *http.Response) bool { return findCookie(resp, "foyer_ticket") != nil }

// apiErr is the JSON error of a refusal.
func apiErr(t *testing.T, body string) string {
	t.Helper()
	var e apiError
	if err := json.Unmarshal([]byte(body), &e); err != nil || e.Message == "" {
		t.Fatalf("not a JSON error with a message: %q", body)
	}
	return e.Error
}

func TestCaddyAccessCodesOnTwoNodes(t *testing.T) {
	clock := useTestClock(t)
	srv := redistest.StartServer(t, nil)
	room := uniqueRoom(t, "codes")
	logFile := filepath.Join(t.TempDir(), "caddy.log")
	newCaddy(t, codesConfig(t.TempDir(), room, "store redis redis://"+srv.Addr, logFile, ""))
	nodeA, nodeB := base, nodeBBase
	codesAt := "/waiting-room/" + room + "/codes"

	// Codes from a CSV file, and generated ones, printed once.
	code, body := adminSend(t, http.MethodPost, codesAt, "text/csv", "code,lane,max_uses\nPRESALE-0001,presale,1\nmembers-many,members,10\n")
	if code != http.StatusCreated {
		t.Fatalf("adding a CSV batch: %d %s", code, body)
	}
	recs := readCSV(t, body)
	if len(recs) != 3 || strings.Join(recs[0], ",") != "code,lane,max_uses,id" || recs[2][0] != "MEMBERS-MANY" || recs[2][3] == "" {
		t.Fatalf("the batch's answer: %q", body)
	}
	code, body = adminSend(t, http.MethodPost, codesAt, "application/json", `{"generate": 3, "lane": "presale", "reason": "street team"}`)
	generated := readCSV(t, body)[1:]
	if code != http.StatusCreated || len(generated) != 3 || len(generated[0][0]) != waitingroom.GeneratedCodeLen || generated[0][2] != "1" {
		t.Fatalf("generating: %d %s", code, body)
	}

	// Every bad batch: a JSON 4xx, nothing added.
	many := "code,lane\n" + strings.Repeat("X,presale\n", waitingroom.MaxCodeBatch+1)
	for _, tc := range []struct {
		name, contentType, body string
		code                    int
		err                     string
	}{
		{"bad CSV", "text/csv", "\"PRESALE-9,presale,1\n", http.StatusBadRequest, "invalid_csv"},
		{"too many fields", "text/csv", "PRESALE-9,presale,1,extra\n", http.StatusBadRequest, "invalid_csv"},
		{"uses not a number", "text/csv", "PRESALE-9,presale,many\n", http.StatusBadRequest, "invalid_csv"},
		{"unknown lane", "text/csv", "PRESALE-9,presale,1\nVIP-00001,vip,1\n", http.StatusBadRequest, "unknown_lane"},
		{"empty code", "text/csv", "PRESALE-9,presale,1\n\"\",presale,1\n", http.StatusBadRequest, "code_empty"},
		{"not a code", "text/csv", "two words,presale,1\n", http.StatusBadRequest, "code_invalid"},
		{"no uses", "text/csv", "PRESALE-9,presale,0\n", http.StatusBadRequest, "invalid_batch"},
		{"empty batch", "text/csv", "code,lane,max_uses\n", http.StatusBadRequest, "invalid_batch"},
		{"oversized batch", "text/csv", many, http.StatusBadRequest, "batch_too_large"},
		{"oversized generation", "application/json", `{"generate": 10001, "lane": "presale"}`, http.StatusBadRequest, "batch_too_large"},
		{"generation for an unknown lane", "application/json", `{"generate": 2, "lane": "vip"}`, http.StatusBadRequest, "unknown_lane"},
		{"bad JSON", "application/json", `{"generate": "two"}`, http.StatusBadRequest, "invalid_body"},
		{"code stored already", "text/csv", "PRESALE-9,presale,1\npresale-0001,presale,1\n", http.StatusConflict, "code_exists"},
		{"twice in a batch", "text/csv", "PRESALE-9,presale,1\npresale-9,members,1\n", http.StatusConflict, "code_exists"},
		{"another format", "application/xml", "<codes/>", http.StatusUnsupportedMediaType, "unsupported_media_type"},
		{"body too large", "text/csv", strings.Repeat("A", maxCodeBody+1), http.StatusRequestEntityTooLarge, "body_too_large"},
	} {
		code, body := adminSend(t, http.MethodPost, codesAt, tc.contentType, tc.body)
		if code != tc.code || apiErr(t, body) != tc.err {
			t.Errorf("%s: %d %s, want %d %s", tc.name, code, body, tc.code, tc.err)
		}
	}
	if _, body := adminCall(t, http.MethodGet, codesAt, ""); len(readCSV(t, body)) != 1+5 {
		t.Fatalf("codes after the bad batches: %q, want the five good ones", body)
	}

	// A wrong code in a room that takes fans without one too: asked again,
	// or offered the line, and the page does not poll (a poll would give
	// the fan a general place while they type their code again).
	typo := newFan(t)
	resp, body := typo.get(nodeA+"/events/7?code=PRESALE-0011", "Accept", "text/html")
	if resp.StatusCode != http.StatusForbidden || hasTicket(resp) || !strings.Contains(body, "Check your code") ||
		!strings.Contains(body, `<a href="/events/7">Join the line without a code</a>`) || !strings.Contains(body, `data-status-url=""`) {
		t.Fatalf("a wrong code in an open room: %d %q", resp.StatusCode, body)
	}

	// Invite-only: no code, no place, on either node, and the page asks.
	patchRoom(t, room, `{"codes_required": true}`)
	clock.step(t, 1)
	nobody := newFan(t)
	resp, body = nobody.get(nodeA+"/events/7", "Accept", "text/html")
	if resp.StatusCode != http.StatusOK || hasTicket(resp) || !strings.Contains(body, `action="/_waiting-room/code"`) || !strings.Contains(body, "For code holders") {
		t.Fatalf("a fan without a code: %d %q", resp.StatusCode, body)
	}
	if st := nobody.status(nodeB); st.State != waitingroom.StateCodeRequired {
		t.Fatalf("status without a code through node b: %+v", st)
	}

	// ?code= on node a: the first fan walks in, the code never reaching
	// the origin.
	first := newFan(t)
	resp, body = first.get(nodeA + "/events/7?code=presale-0001&seat=12")
	if resp.StatusCode != http.StatusOK || body != "origin uri=/events/7?seat=12" || !hasTicket(resp) {
		t.Fatalf("?code= on node a: %d %q", resp.StatusCode, body)
	}
	// The single-use code again, on node b: used up, for the page and apps.
	again := newFan(t)
	resp, body = again.get(nodeB+"/events/7?code=PRESALE-0001", "Accept", "text/html")
	if resp.StatusCode != http.StatusForbidden || hasTicket(resp) || !strings.Contains(body, "used as many times as it allows") || !strings.Contains(body, `id="code-input"`) {
		t.Fatalf("a used-up code on node b: %d %q", resp.StatusCode, body)
	}
	resp, body = again.get(nodeB+"/_waiting-room/status?code=PRESALE-0001", "Accept", "application/json")
	if resp.StatusCode != http.StatusForbidden || apiErr(t, body) != "code_used_up" {
		t.Fatalf("a used-up code as JSON: %d %q", resp.StatusCode, body)
	}
	resp, body = again.get(nodeA+"/_waiting-room/status?code=NOPE-0000", "Accept", "application/json")
	if resp.StatusCode != http.StatusForbidden || apiErr(t, body) != "code_wrong" || strings.Contains(body, "presale") {
		t.Fatalf("a wrong code: %d %q", resp.StatusCode, body)
	}
	resp, body = again.get(nodeA+"/_waiting-room/status?code=", "Accept", "application/json")
	if resp.StatusCode != http.StatusBadRequest || apiErr(t, body) != "code_empty" {
		t.Fatalf("an empty code: %d %q", resp.StatusCode, body)
	}

	// The header, for apps, on node b: a place in line (the one slot is
	// the first fan's).
	app := newFan(t)
	resp, body = app.get(nodeB+"/_waiting-room/status", "Accept", "application/json", headerCode, "members-many")
	var st waitingroom.Status
	if resp.StatusCode != http.StatusOK || json.Unmarshal([]byte(body), &st) != nil || st.State != waitingroom.StateQueued || !hasTicket(resp) {
		t.Fatalf("the header on node b: %d %q", resp.StatusCode, body)
	}
	// Sent again with the ticket, the code is not used: the same place.
	if again := app.status(nodeA); again.State != waitingroom.StateQueued {
		t.Fatalf("the app's place through node a: %+v", again)
	}
	resp, _ = app.get(nodeA+"/_waiting-room/status", "Accept", "application/json", headerCode, "members-many")
	if hasTicket(resp) {
		t.Fatal("a code sent with a ticket made a new place")
	}

	// The form, without JavaScript, on node a: back to the page, holding a
	// place; a form from another site, or an empty one, is refused.
	browser := newFan(t)
	if resp, _ := browser.postCode(t, nodeA, "cross-site", generated[0][0]); resp.StatusCode != http.StatusForbidden || hasTicket(resp) {
		t.Fatalf("a cross-site code form: %d", resp.StatusCode)
	}
	if resp, body := browser.postCode(t, nodeA, "same-origin", "  "); resp.StatusCode != http.StatusBadRequest || !strings.Contains(body, "Enter your access code.") {
		t.Fatalf("an empty code form: %d %q", resp.StatusCode, body)
	}
	if resp, body := browser.postCode(t, nodeA, "same-origin", "", "Accept", "application/json"); resp.StatusCode != http.StatusBadRequest || apiErr(t, body) != "code_empty" {
		t.Fatalf("an empty code form as JSON: %d %q", resp.StatusCode, body)
	}
	resp, _ = browser.postCode(t, nodeA, "same-origin", strings.ToLower(generated[0][0]))
	if resp.StatusCode != http.StatusSeeOther || resp.Header.Get("Location") != "/events/7" || !hasTicket(resp) {
		t.Fatalf("the code form: %d %v", resp.StatusCode, resp.Header)
	}
	if st := browser.status(nodeB); st.State != waitingroom.StateQueued {
		t.Fatalf("the form's fan through node b: %+v", st)
	}

	// A single-use code raced on both nodes makes one place.
	var wg sync.WaitGroup
	var mu sync.Mutex
	places, usedUp := 0, 0
	for i := range 16 {
		node := []string{nodeA, nodeB}[i%2]
		wg.Go(func() {
			f := newFan(t)
			req, _ := http.NewRequest(http.MethodGet, node+"/_waiting-room/status?code="+generated[1][0], nil)
			req.Header.Set("Accept", "application/json")
			resp, err := f.client.Do(req)
			if err != nil {
				t.Error(err)
				return
			}
			resp.Body.Close()
			mu.Lock()
			defer mu.Unlock()
			switch {
			case resp.StatusCode == http.StatusOK && hasTicket(resp):
				places++
			case resp.StatusCode == http.StatusForbidden:
				usedUp++
			}
		})
	}
	wg.Wait()
	if places != 1 || usedUp != 15 {
		t.Fatalf("a single-use code raced 16 times on two nodes: %d places, %d refused; want 1 and 15", places, usedUp)
	}

	// The uses, as CSV, by id.
	_, body = adminCall(t, http.MethodGet, codesAt+"?used=true", "")
	used := map[string]string{}
	for _, r := range readCSV(t, body)[1:] {
		used[r[0]] = r[1] + " " + r[2] + " " + r[3]
	}
	ids := map[string]string{recs[1][0]: recs[1][3], recs[2][0]: recs[2][3], generated[0][0]: generated[0][3], generated[1][0]: generated[1][3]}
	want := map[string]string{"PRESALE-0001": "presale 1 1", "MEMBERS-MANY": "members 10 1", generated[0][0]: "presale 1 1", generated[1][0]: "presale 1 1"}
	for c, w := range want {
		if used[ids[c]] != w {
			t.Errorf("uses of %s: %q, want %q (all used: %v)", c, used[ids[c]], w, used)
		}
	}
	if len(used) != len(want) {
		t.Errorf("codes used: %v, want %d", used, len(want))
	}

	// The attempts are counted by result.
	_, metrics := adminCall(t, http.MethodGet, "/metrics", "")
	for result, n := range map[string]int{"accepted": 4, "used_up": 17, "wrong": 2} {
		line := fmt.Sprintf(`foyer_waiting_room_code_attempts_total{result=%q,room=%q} %d`, result, room, n)
		if !strings.Contains(metrics, line) {
			t.Errorf("/metrics lacks %s", line)
		}
	}

	// The audit trail says how many codes for which lane, and no code.
	_, audit := adminCall(t, http.MethodGet, "/waiting-room/"+room+"/audit", "")
	if !strings.Contains(audit, "batch of 1 code for lane members; batch of 1 code for lane presale") || !strings.Contains(audit, "batch of 3 codes for lane presale") || !strings.Contains(audit, "street team") {
		t.Errorf("the audit trail: %s", audit)
	}
	logs, err := os.ReadFile(logFile)
	if err != nil || len(logs) == 0 {
		t.Fatalf("reading the log: %v", err)
	}
	for _, c := range []string{"PRESALE-0001", "presale-0001", "MEMBERS-MANY", "members-many", generated[0][0], generated[1][0], generated[2][0]} {
		if strings.Contains(audit, c) {
			t.Errorf("the audit trail names the code %s", c)
		}
		if strings.Contains(string(logs), c) {
			t.Errorf("the log names the code %s", c)
		}
	}
	if !strings.Contains(string(logs), `"uri":"/events/7?seat=12"`) {
		t.Error("the access log lacks the request made with ?code=, its code filtered out")
	}
	if !strings.Contains(string(logs), "waiting room codes added") {
		t.Error("the log does not record the batches")
	}
}

// TestCaddyCodeGuessingBounded: a client guessing codes through both nodes
// is bounded by join_limit: every try, right or wrong, takes from its
// network's allowance, counted in the store for both nodes; the wrong tries
// within it are refused as wrong (403) and counted, the rest get 429 with
// Retry-After before any code is looked at. Another network's fan with a
// right code is not held back.
func TestCaddyCodeGuessingBounded(t *testing.T) {
	useTestClock(t)
	srv := redistest.StartServer(t, nil)
	room := uniqueRoom(t, "guess")
	newCaddy(t, codesConfig(t.TempDir(), room, "store redis redis://"+srv.Addr, filepath.Join(t.TempDir(), "caddy.log"), "codes_required\n\t\t\tjoin_limit 10/m"))
	if code, body := adminSend(t, http.MethodPost, "/waiting-room/"+room+"/codes", "text/csv", "REAL-CODE-1,presale,5\n"); code != http.StatusCreated {
		t.Fatalf("adding a code: %d %s", code, body)
	}
	guesser := newPeer(t, "127.0.0.9")
	const tries = 200
	wrong, limited, other := 0, 0, 0
	for i := range tries {
		node := []string{base, nodeBBase}[i%2]
		r := guesser.do(http.MethodGet, fmt.Sprintf("%s/_waiting-room/status?code=GUESS-%04d", node, i), "Accept", "application/json")
		switch {
		case r.code == http.StatusForbidden && strings.Contains(r.body, `"error":"code_wrong"`) && !r.ticket:
			wrong++
		case r.code == http.StatusTooManyRequests && r.retryAfter != "" && !r.ticket && strings.Contains(r.body, `"error":"join_limited"`):
			limited++
		default:
			other++
		}
	}
	t.Logf("%d guesses through two nodes under join_limit 10/m: %d answered wrong, %d refused", tries, wrong, limited)
	// Each node's own table lets 10 through, the store 10 for both.
	if wrong != 10 || limited != tries-10 || other != 0 {
		t.Fatalf("guesses: %d wrong, %d limited, %d other; want 10 wrong and the rest limited", wrong, limited, other)
	}
	if r := guesser.do(http.MethodGet, base+"/_waiting-room/status?code=REAL-CODE-1", "Accept", "application/json"); r.code != http.StatusTooManyRequests {
		t.Fatalf("a right code from the guesser over the limit: %+v", r)
	}
	if r := newPeer(t, "127.0.0.10").do(http.MethodGet, nodeBBase+"/_waiting-room/status?code=REAL-CODE-1", "Accept", "application/json"); r.code != http.StatusOK || !r.ticket {
		t.Fatalf("a fan of another network with the right code: %+v", r)
	}
	_, metrics := adminCall(t, http.MethodGet, "/metrics", "")
	for result, n := range map[string]int{"wrong": 10, "limited": tries - 10 + 1, "accepted": 1} {
		line := fmt.Sprintf(`foyer_waiting_room_code_attempts_total{result=%q,room=%q} %d`, result, room, n)
		if !strings.Contains(metrics, line) {
			t.Errorf("/metrics lacks %s", line)
		}
	}
}
