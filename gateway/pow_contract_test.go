package gateway

import (
	"bytes"
	"context"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/cookiejar"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/foyer-dev/foyer/internal/redistest"
)

// The proof-of-work contract as docs/endpoints.md states it, exercised by a client
// written from that text alone: its own JSON shapes, its own SHA-256 loop,
// nothing of the server's code. A newcomer's status says
// "state": "challenge" with "challenge": {"algorithm":
// "sha256-leading-zero-bits", "seed": "<base64url>", "bits": N}; the client
// finds a decimal nonce such that SHA-256(seed bytes || ASCII nonce) starts
// with N zero bits and POSTs {"seed", "nonce"} to <prefix>/join; the answer
// sets the ticket and is the fan's status.

// powStatus is the part of the status JSON the contract names.
type powStatus struct {
	State     string `json:"state"`
	Position  *int   `json:"position"`
	Challenge *struct {
		Algorithm string `json:"algorithm"`
		Seed      string `json:"seed"`
		Bits      int    `json:"bits"`
	} `json:"challenge"`
}

// powError is the JSON of a refusal.
type powError struct {
	Error   string `json:"error"`
	Message string `json:"message"`
}

// zeroBits counts the leading zero bits of SHA-256(seed || nonce).
func contractZeroBits(seed []byte, nonce string) int {
	sum := sha256.Sum256(append(append([]byte{}, seed...), nonce...))
	n := 0
	for _, b := range sum {
		for mask := byte(0x80); mask != 0; mask >>= 1 {
			if b&mask != 0 {
				return n
			}
			n++
		}
	}
	return n
}

func contractSeedBytes(t *testing.T, seed string) []byte {
	t.Helper()
	raw, err := base64.RawURLEncoding.DecodeString(strings.TrimRight(seed, "="))
	if err != nil {
		t.Fatalf("seed %q is not base64url: %v", seed, err)
	}
	return raw
}

// contractFind returns the first decimal nonce, counting from 0, whose hash
// has a number of leading zero bits that ok accepts.
func contractFind(t *testing.T, seed string, ok func(zeros int) bool) string {
	t.Helper()
	raw := contractSeedBytes(t, seed)
	for i := 0; i < 1<<26; i++ {
		nonce := strconv.Itoa(i)
		if ok(contractZeroBits(raw, nonce)) {
			return nonce
		}
	}
	t.Fatal("no nonce found in 2^26 tries")
	return ""
}

// powClient is one client: its own cookies, its own source address on
// loopback (127.0.0.x: Linux answers the whole 127/8), and a forwarded-for
// header when it plays a proxy.
type powClient struct {
	t         *testing.T
	http      *http.Client
	forwarded string
}

func newPowClient(t *testing.T, source string) *powClient {
	jar, _ := cookiejar.New(nil)
	dialer := &net.Dialer{LocalAddr: &net.TCPAddr{IP: net.ParseIP(source)}, Timeout: 5 * time.Second}
	return &powClient{t: t, http: &http.Client{
		Jar:           jar,
		Transport:     &http.Transport{DialContext: dialer.DialContext},
		CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse },
		Timeout:       10 * time.Second,
	}}
}

func (c *powClient) do(method, url, accept string, body io.Reader) (*http.Response, []byte) {
	c.t.Helper()
	req, err := http.NewRequest(method, url, body)
	if err != nil {
		c.t.Fatal(err)
	}
	req.Header.Set("Accept", accept)
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	if c.forwarded != "" {
		req.Header.Set("X-Forwarded-For", c.forwarded)
	}
	resp, err := c.http.Do(req)
	if err != nil {
		c.t.Fatal(err)
	}
	defer resp.Body.Close()
	data, _ := io.ReadAll(resp.Body)
	return resp, data
}

// challenge asks for the event page as an app would, and expects a puzzle.
func (c *powClient) challenge() (seed string, bits int) {
	c.t.Helper()
	resp, body := c.do(http.MethodGet, base+"/events/1", "application/json", nil)
	var st powStatus
	if err := json.Unmarshal(body, &st); err != nil || resp.StatusCode != http.StatusOK {
		c.t.Fatalf("newcomer: %d %s %v", resp.StatusCode, body, err)
	}
	if st.State != "challenge" || st.Challenge == nil || st.Challenge.Algorithm != "sha256-leading-zero-bits" ||
		st.Challenge.Seed == "" || st.Challenge.Bits <= 0 {
		c.t.Fatalf("newcomer's status: %s, want state challenge with a sha256-leading-zero-bits puzzle", body)
	}
	if setsTicket(resp) {
		c.t.Fatalf("the challenge set a ticket: %v", resp.Header["Set-Cookie"])
	}
	return st.Challenge.Seed, st.Challenge.Bits
}

// answer posts a body to join.
func (c *powClient) answer(body string) (*http.Response, []byte) {
	c.t.Helper()
	return c.do(http.MethodPost, base+"/_waiting-room/join", "application/json", strings.NewReader(body))
}

func answerBody(seed, nonce string) string {
	b, _ := json.Marshal(map[string]string{"seed": seed, "nonce": nonce})
	return string(b)
}

func setsTicket(resp *http.Response) bool {
	for _, c := range resp.Header["Set-Cookie"] {
		if strings.HasPrefix(c, "foyer_ticket=") || strings.HasPrefix(c, "foyer_pass=") {
			return true
		}
	}
	return false
}

// powRoom is the room under test and a way to count the places it made.
type powRoom struct {
	name   string
	places func() uint64
}

// powConfig is a room asking 12 bits of newcomers (a few thousand hashes:
// the test pays milliseconds), one fan inside at once, behind a Caddy that
// trusts 127.0.0.2 as a proxy.
func powConfig(storage, room, store string) string {
	cfg := caddyConfig(storage, fmt.Sprintf(`
	http://localhost:9080 {
		waiting_room {
			room %s
			store %s
			challenge pow 12
			total_active_users 1
			new_users_per_minute 60
		}
		respond "origin"
	}`, room, store))
	// Caddy's client IP honours X-Forwarded-For from trusted proxies only.
	const anchor = "grace_period 1ns"
	if !strings.Contains(cfg, anchor) {
		panic("caddyConfig's global options changed: place trusted_proxies anew")
	}
	return strings.Replace(cfg, anchor, anchor+"\n\t\tservers {\n\t\t\ttrusted_proxies static 127.0.0.2/32\n\t\t}", 1)
}

func TestPoWContractMemoryStore(t *testing.T) {
	clock := useTestClock(t)
	room := "pow-memory"
	newCaddy(t, powConfig(t.TempDir(), room, "memory"))
	runPoWContract(t, clock, powRoom{name: room, places: func() uint64 { return adminJoins(t, room) }})
}

func TestPoWContractRedisStore(t *testing.T) {
	clock := useTestClock(t)
	shared := redistest.Shared(t)
	var b [4]byte
	_, _ = rand.Read(b[:])
	room := "pow-redis-" + hex.EncodeToString(b[:])
	t.Cleanup(func() { deleteRoomKeys(shared, room) })
	newCaddy(t, powConfig(t.TempDir(), room, "redis "+redistest.SharedURL()))
	// Places are counted where they are made: the room's order keys in Redis.
	seq := func() uint64 {
		n, err := shared.HGet(context.Background(), "foyer:{"+room+"}:meta", "seq").Uint64()
		if err != nil && err != redis.Nil {
			t.Fatal(err)
		}
		return n
	}
	runPoWContract(t, clock, powRoom{name: room, places: seq})
}

func deleteRoomKeys(c *redis.Client, room string) {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	iter := c.Scan(ctx, 0, "foyer:{"+room+"}:*", 100).Iterator()
	for iter.Next(ctx) {
		c.Del(ctx, iter.Val())
	}
}

// adminJoins is how many places this node made in room, from the admin API.
func adminJoins(t *testing.T, room string) uint64 {
	t.Helper()
	code, body := adminCall(t, http.MethodGet, "/waiting-room/"+room, "")
	var v struct {
		Node struct {
			Joins uint64 `json:"joins"`
		} `json:"node"`
	}
	if err := json.Unmarshal([]byte(body), &v); err != nil || code != http.StatusOK {
		t.Fatalf("admin view: %d %s %v", code, body, err)
	}
	return v.Node.Joins
}

func runPoWContract(t *testing.T, clock *testClock, room powRoom) {
	direct := newPowClient(t, "127.0.0.1")
	other := newPowClient(t, "127.0.0.3")
	before := room.places()

	// Every refusal is a 4xx JSON error with its code, sets no cookie and
	// makes no place.
	refused := func(name string, c *powClient, resp *http.Response, body []byte, code int, errCode string) {
		t.Helper()
		var e powError
		_ = json.Unmarshal(body, &e)
		if resp.StatusCode != code || e.Error != errCode || e.Message == "" {
			t.Errorf("%s: %d %s, want %d %q", name, resp.StatusCode, body, code, errCode)
		}
		if setsTicket(resp) {
			t.Errorf("%s: a cookie was set: %v", name, resp.Header["Set-Cookie"])
		}
		if got := room.places(); got != before {
			t.Fatalf("%s: %d places made, want none", name, got-before)
		}
	}

	seed, bits := direct.challenge()
	if bits != 12 {
		t.Fatalf("bits %d, want the configured 12", bits)
	}
	if got := room.places(); got != before {
		t.Fatalf("the challenge made %d places, want none", got-before)
	}

	wrong := contractFind(t, seed, func(z int) bool { return z == 0 })
	resp, body := direct.answer(answerBody(seed, wrong))
	refused("wrong nonce", direct, resp, body, http.StatusUnprocessableEntity, "wrong_nonce")

	short := contractFind(t, seed, func(z int) bool { return z == bits-1 })
	resp, body = direct.answer(answerBody(seed, short))
	refused("one bit short", direct, resp, body, http.StatusUnprocessableEntity, "wrong_nonce")

	good := contractFind(t, seed, func(z int) bool { return z >= bits })
	resp, body = other.answer(answerBody(seed, good))
	refused("seed of another address", other, resp, body, http.StatusForbidden, "seed_invalid")

	for name, b := range map[string]string{
		"truncated JSON":      `{"seed": "` + seed,
		"a number as nonce":   `{"seed": "` + seed + `", "nonce": 5}`,
		"letters in nonce":    answerBody(seed, good+"a"),
		"no nonce":            `{"seed": "` + seed + `"}`,
		"a seed not base64":   answerBody("!!"+seed[2:], good),
		"a seed cut short":    answerBody(seed[:len(seed)-4], good),
		"an unknown field":    `{"seed": "` + seed + `", "nonce": "` + good + `", "bits": 1}`,
		"two objects":         answerBody(seed, good) + answerBody(seed, good),
		"an empty body":       ``,
		"a JSON array":        `["` + seed + `", "` + good + `"]`,
		"a 40-digit nonce":    answerBody(seed, strings.Repeat("1", 40)),
		"a forged seed's MAC": answerBody(flipB64(seed, len(seed)-5), good),
	} {
		resp, body := direct.answer(b)
		wantCode, wantErr := http.StatusBadRequest, "malformed_answer"
		if name == "a forged seed's MAC" {
			wantCode, wantErr = http.StatusForbidden, "seed_invalid"
		}
		refused(name, direct, resp, body, wantCode, wantErr)
	}

	resp, body = direct.do(http.MethodGet, base+"/_waiting-room/join", "application/json", nil)
	refused("GET join", direct, resp, body, http.StatusMethodNotAllowed, "method_not_allowed")
	if resp.Header.Get("Allow") != "POST" {
		t.Errorf("GET join: Allow %q, want POST", resp.Header.Get("Allow"))
	}
	huge := `{"seed": "` + seed + `", "nonce": "` + good + `", "pad": "` + strings.Repeat("x", 1<<20) + `"}`
	resp, body = direct.do(http.MethodPost, base+"/_waiting-room/join", "application/json", bytes.NewReader([]byte(huge)))
	refused("a 1 MiB body", direct, resp, body, http.StatusRequestEntityTooLarge, "body_too_large")

	// The right answer: a ticket, and the fan's status. The room is empty
	// and has a slot: they go straight in.
	resp, body = direct.answer(answerBody(seed, good))
	var st powStatus
	if err := json.Unmarshal(body, &st); err != nil || resp.StatusCode != http.StatusOK || st.State != "admitted" || !setsTicket(resp) {
		t.Fatalf("right answer: %d %s %v, want 200 admitted with cookies", resp.StatusCode, body, resp.Header["Set-Cookie"])
	}
	if got := room.places(); got != before+1 {
		t.Fatalf("right answer: %d places made, want 1", got-before)
	}
	before++
	if resp, body := direct.do(http.MethodGet, base+"/events/1", "text/html", nil); string(body) != "origin" {
		t.Fatalf("admitted fan: %d %q, want the origin", resp.StatusCode, body)
	}

	// The same answer again, from a fresh client at the same address.
	again := newPowClient(t, "127.0.0.1")
	resp, body = again.answer(answerBody(seed, good))
	refused("replayed seed", again, resp, body, http.StatusConflict, "seed_spent")

	// A seed past its lifetime (five minutes).
	stale, _ := again.challenge()
	staleNonce := contractFind(t, stale, func(z int) bool { return z >= bits })
	clock.Advance(5*time.Minute + time.Second)
	resp, body = again.answer(answerBody(stale, staleNonce))
	refused("stale seed", again, resp, body, http.StatusGone, "seed_expired")

	// Through a proxy Caddy trusts, the client is the forwarded address: a
	// seed issued to one forwarded address is refused for another, and
	// answered by the same one it makes a place. The room is full by now, so
	// this fan waits in line, and holds a ticket.
	proxied := newPowClient(t, "127.0.0.2")
	proxied.forwarded = "203.0.113.7"
	pseed, pbits := proxied.challenge()
	pnonce := contractFind(t, pseed, func(z int) bool { return z >= pbits })
	proxied.forwarded = "203.0.113.8"
	resp, body = proxied.answer(answerBody(pseed, pnonce))
	refused("seed of another forwarded address", proxied, resp, body, http.StatusForbidden, "seed_invalid")
	proxied.forwarded = "203.0.113.7"
	resp, body = proxied.answer(answerBody(pseed, pnonce))
	st = powStatus{}
	if err := json.Unmarshal(body, &st); err != nil || resp.StatusCode != http.StatusOK || st.State != "queued" || st.Position == nil || !setsTicket(resp) {
		t.Fatalf("proxied right answer: %d %s %v, want 200 queued with a ticket", resp.StatusCode, body, resp.Header["Set-Cookie"])
	}
	before++

	// Fans holding a ticket or a pass never see the challenge, and joining
	// again makes them no second place.
	for name, c := range map[string]*powClient{"ticket": proxied, "pass": direct} {
		resp, body := c.do(http.MethodGet, base+"/_waiting-room/status", "application/json", nil)
		var st powStatus
		if err := json.Unmarshal(body, &st); err != nil || st.State == "challenge" || st.Challenge != nil {
			t.Errorf("fan with a %s: %d %s, want no challenge", name, resp.StatusCode, body)
		}
		resp, body = c.answer(answerBody(pseed, pnonce))
		if err := json.Unmarshal(body, &st); err != nil || resp.StatusCode != http.StatusOK || st.State == "challenge" {
			t.Errorf("fan with a %s posting join: %d %s, want their status", name, resp.StatusCode, body)
		}
	}
	if got := room.places(); got != before {
		t.Fatalf("fans holding a place made %d more", got-before)
	}
}

// flipB64 changes the base64url character of s at i to another one (one
// inside the seed's MAC: the last character also carries padding bits).
func flipB64(s string, i int) string {
	repl := byte('A')
	if s[i] == 'A' {
		repl = 'B'
	}
	return s[:i] + string(repl) + s[i+1:]
}
