package main

import (
	"bufio"
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/foyer-dev/foyer/internal/redisserver"
)

// rehearsalRoom is the waiting room's id, the passes' audience.
const rehearsalRoom = "rehearsal"

// stack is the on-sale under rehearsal: Foyer in front of the booking
// service, on loopback ports of their own, with a private redis-server when
// the room's store is Redis.
type stack struct {
	dir        string
	foyer      *caddyProc
	booking    *exec.Cmd
	bookingLog string
	bookingOut *os.File
	redis      *redisserver.Server
	redisPID   int

	base       string // Foyer, where fans go
	bookingURL string // the booking service itself, for the admin API
	caddyAdmin string // Caddy's admin endpoint, for the room's counters
	adminToken string
	storeName  string

	stopped                bool
	foyerLogs, bookingLogs logSummary // read once the servers are gone
}

// stackConfig is what the rehearsal's flags say about the servers.
type stackConfig struct {
	foyerBin, bookingBin string
	store                string // memory, redis (a private server) or a redis:// URL
	databaseURL          string
	rate, cap            int
	session, grace       time.Duration
	holdTTL              time.Duration
}

func startStack(c stackConfig) (_ *stack, err error) {
	s := &stack{}
	defer func() {
		if err != nil {
			s.stop()
		}
	}()
	if s.dir, err = os.MkdirTemp("", "onsale-rehearsal-"); err != nil {
		return nil, err
	}
	if c.databaseURL != "" {
		if err := loopbackURL(c.databaseURL); err != nil {
			return nil, fmt.Errorf("-database-url: %w", err)
		}
	}
	storeLine, bookingRedis := "store memory", ""
	s.storeName = "memory"
	switch {
	case c.store == "memory":
	case c.store == "redis":
		if s.redis, err = redisserver.Start(redisserver.Options{Dir: s.dir}); err != nil {
			return nil, err
		}
		s.redisPID = redisPID(s.redis.Addr)
		storeLine = "store redis redis://" + s.redis.Addr
		bookingRedis = "redis://" + s.redis.Addr + "/1"
		s.storeName = "redis (private redis-server " + s.redis.Addr + ")"
	case strings.HasPrefix(c.store, "redis://"):
		if err := loopbackURL(c.store); err != nil {
			return nil, fmt.Errorf("-store: %w", err)
		}
		storeLine = "store redis " + c.store
		s.storeName = "redis " + c.store
	default:
		return nil, fmt.Errorf("-store %q: want memory, redis or a redis:// URL", c.store)
	}

	var ports [3]int
	for i := range ports {
		if ports[i], err = freePort(); err != nil {
			return nil, err
		}
	}
	s.base = fmt.Sprintf("http://127.0.0.1:%d", ports[0])
	s.bookingURL = fmt.Sprintf("http://127.0.0.1:%d", ports[1])
	s.caddyAdmin = fmt.Sprintf("http://127.0.0.1:%d", ports[2])
	token := make([]byte, 16)
	_, _ = rand.Read(token)
	s.adminToken = hex.EncodeToString(token)

	// The whole site is behind the room, the pay page included, as in the
	// demo stack: a fan needs a pass for everything but the room's own
	// endpoints. The provider's webhooks go straight to the booking service.
	cfg := fmt.Sprintf(`{
	admin 127.0.0.1:%d
	auto_https off
	persist_config off
}
http://127.0.0.1:%d {
	waiting_room {
		room %s
		title "On-sale rehearsal"
		%s
		new_users_per_minute %d
		total_active_users %d
		session_duration %s
		admission_grace %s
	}
	reverse_proxy 127.0.0.1:%d
}
`, ports[2], ports[0], rehearsalRoom, storeLine, c.rate, c.cap, c.session, c.grace, ports[1])
	if s.foyer, err = startFoyer(c.foyerBin, cfg, s.base+"/_waiting-room/jwks.json"); err != nil {
		return nil, err
	}

	args := []string{
		"-addr", fmt.Sprintf("127.0.0.1:%d", ports[1]),
		"-jwks", s.base + "/_waiting-room/jwks.json",
		"-room", rehearsalRoom,
		"-public-url", s.base,
		"-admin-token", s.adminToken,
		"-hold-ttl", c.holdTTL.String(),
	}
	if c.databaseURL != "" {
		args = append(args, "-database-url", c.databaseURL)
	}
	if bookingRedis != "" {
		args = append(args, "-redis-url", bookingRedis)
	}
	s.bookingLog = filepath.Join(s.dir, "booking.log")
	if s.bookingOut, err = os.Create(s.bookingLog); err != nil {
		return nil, err
	}
	s.booking = exec.Command(c.bookingBin, args...)
	s.booking.Stdout, s.booking.Stderr = s.bookingOut, s.bookingOut
	// Only what the booking service needs: no DATABASE_URL or REDIS_URL of
	// the caller's leaking in behind our flags.
	s.booking.Env = []string{"HOME=" + s.dir, "PATH=" + os.Getenv("PATH")}
	detach(s.booking)
	if err := s.booking.Start(); err != nil {
		return nil, fmt.Errorf("starting %s: %w", c.bookingBin, err)
	}
	if err := waitHealthy(s.bookingURL+"/healthz", 60*time.Second); err != nil {
		return nil, fmt.Errorf("the booking service: %w\n%s", err, tail(s.bookingLog, 20))
	}
	return s, nil
}

// stop ends every process the stack started, the booking service first so
// that it does not log a gateway that went away, and reads their logs before
// their directory goes. It may be called again.
func (s *stack) stop() {
	if s.stopped {
		return
	}
	s.stopped = true
	if s.booking != nil && s.booking.Process != nil {
		_ = s.booking.Process.Signal(os.Interrupt)
		done := make(chan struct{})
		go func() { _ = s.booking.Wait(); close(done) }()
		select {
		case <-done:
		case <-time.After(15 * time.Second):
			_ = s.booking.Process.Kill()
			<-done
		}
	}
	if s.bookingOut != nil {
		s.bookingOut.Close()
	}
	if s.foyer != nil {
		s.foyer.stop()
	}
	if s.redis != nil {
		_ = s.redis.Stop()
	}
	s.foyerLogs, s.bookingLogs = s.readLogs()
	if s.dir != "" {
		os.RemoveAll(s.dir)
	}
}

// eventSpec is the venue: sections of up to 20 rows of 50 seats, sized so
// that together they hold about seats places, and an optional standing zone
// taken out of that total.
func eventSpec(seats, standing int) (map[string]any, int) {
	seated := seats - standing
	var sections []map[string]any
	total := standing
	if seated > 0 {
		n := min(50, max(1, (seated+999)/1000))
		per := (seated + n - 1) / n
		perRow := min(50, per)
		rows := (per + perRow - 1) / perRow
		for i := range n {
			sections = append(sections, map[string]any{
				"id": sectionName(i), "rows": rows, "seats_per_row": perRow, "price": fmt.Sprintf("%d.00", 40+10*(i%8)),
			})
			total += rows * perRow
		}
	}
	spec := map[string]any{
		"name":      "On-sale rehearsal",
		"starts_at": time.Now().Add(30 * 24 * time.Hour).UTC().Format(time.RFC3339),
		"sections":  sections,
		"zones":     []map[string]any{},
	}
	if standing > 0 {
		spec["zones"] = []map[string]any{{"id": "FLOOR", "capacity": standing, "price": "35.00"}}
	}
	return spec, total
}

// sectionName is A, B, ... Z, then AA, AB, ...
func sectionName(i int) string {
	if i < 26 {
		return string(rune('A' + i))
	}
	return sectionName(i/26-1) + string(rune('A'+i%26))
}

// createEvent posts the venue to the booking service's admin API, directly:
// the admin API is the operator's, not the fans'.
func (s *stack) createEvent(client *http.Client, seats, standing int) (id int64, capacity int, err error) {
	spec, _ := eventSpec(seats, standing)
	body, _ := json.Marshal(spec)
	req, _ := http.NewRequest(http.MethodPost, s.bookingURL+"/api/admin/events", bytes.NewReader(body))
	req.Header.Set("Authorization", "Bearer "+s.adminToken)
	req.Header.Set("Content-Type", "application/json")
	resp, err := client.Do(req)
	if err != nil {
		return 0, 0, err
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(io.LimitReader(resp.Body, 1<<20))
	if resp.StatusCode != http.StatusCreated {
		return 0, 0, fmt.Errorf("creating the event: %s: %s", resp.Status, b)
	}
	var out struct {
		ID    int64 `json:"id"`
		Event struct {
			Sections []struct {
				Rows        int `json:"rows"`
				SeatsPerRow int `json:"seats_per_row"`
			} `json:"sections"`
			Zones []struct {
				Capacity int `json:"capacity"`
			} `json:"zones"`
		} `json:"event"`
	}
	if err := json.Unmarshal(b, &out); err != nil {
		return 0, 0, fmt.Errorf("creating the event: %w", err)
	}
	for _, sec := range out.Event.Sections {
		capacity += sec.Rows * sec.SeatsPerRow
	}
	for _, z := range out.Event.Zones {
		capacity += z.Capacity
	}
	return out.ID, capacity, nil
}

// invariants is the booking service's own proof, GET /api/admin/invariants.
type invariants struct {
	OK     bool `json:"ok"`
	Report struct {
		Events     int      `json:"events"`
		Seats      int      `json:"seats"`
		Tickets    int      `json:"tickets"`
		Violations []string `json:"violations"`
	} `json:"report"`
}

func (s *stack) invariants(client *http.Client) (invariants, error) {
	var inv invariants
	req, _ := http.NewRequest(http.MethodGet, s.bookingURL+"/api/admin/invariants", nil)
	req.Header.Set("Authorization", "Bearer "+s.adminToken)
	resp, err := client.Do(req)
	if err != nil {
		return inv, err
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(io.LimitReader(resp.Body, 16<<20))
	// A failed invariant is answered 500 with the report: read it either way.
	if err := json.Unmarshal(b, &inv); err != nil {
		return inv, fmt.Errorf("invariants: %s: %s", resp.Status, b)
	}
	return inv, nil
}

// roomCounters is what the room's store counted, from Caddy's admin API.
type roomCounters struct {
	Counters struct {
		Seq       uint64 `json:"seq"`
		Serving   uint64 `json:"serving"`
		Admitted  uint64 `json:"admitted"`
		Claimed   uint64 `json:"claimed"`
		Abandoned uint64 `json:"abandoned"`
	} `json:"counters"`
	Active   int    `json:"active"`
	Pending  int    `json:"pending"`
	Waiting  uint64 `json:"waiting"`
	Settings struct {
		SoldOut bool `json:"sold_out"`
	} `json:"settings"`
	Node struct {
		Joins        uint64 `json:"joins"`
		DirectAdmits uint64 `json:"direct_admits"`
		Polls        uint64 `json:"polls"`
		Claims       uint64 `json:"claims"`
		Rejected     uint64 `json:"passes_rejected"`
		Revokes      uint64 `json:"revokes"`
		StoreErrors  uint64 `json:"store_errors"`
	} `json:"node"`
}

func (s *stack) room(client *http.Client) (roomCounters, error) {
	var rc roomCounters
	resp, err := client.Get(s.caddyAdmin + "/waiting-room/" + rehearsalRoom)
	if err != nil {
		return rc, err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		b, _ := io.ReadAll(io.LimitReader(resp.Body, 4<<10))
		return rc, fmt.Errorf("room counters: %s: %s", resp.Status, b)
	}
	return rc, json.NewDecoder(io.LimitReader(resp.Body, 1<<20)).Decode(&rc)
}

// logProblems is what the servers logged, once they are stopped.
func (s *stack) logProblems() (foyer, booking logSummary) { return s.foyerLogs, s.bookingLogs }

// readLogs counts the warnings and errors each server logged, with a few of
// the distinct messages: a rehearsal is also a hunt for bugs.
func (s *stack) readLogs() (foyer, booking logSummary) {
	if s.foyer != nil {
		foyer = summarizeLog(bytes.NewReader(s.foyer.log.Bytes()), func(line string) bool {
			return strings.Contains(line, `"level":"error"`) || strings.Contains(line, `"level":"warn"`)
		})
	}
	if f, err := os.Open(s.bookingLog); err == nil {
		defer f.Close()
		booking = summarizeLog(f, func(line string) bool {
			return strings.Contains(line, "level=ERROR") || strings.Contains(line, "level=WARN")
		})
	}
	return foyer, booking
}

type logSummary struct {
	lines    int
	problems int
	samples  []string
}

// expectedWarnings are what the servers say at every rehearsal's start and
// stop, about the configuration the rehearsal chose: not worth a look.
var expectedWarnings = []string{
	"HTTP/2 skipped because it requires TLS",
	"HTTP/3 skipped because it requires TLS",
	"exiting; byeee!!",
	"no -database-url: bookings are kept in memory",
	"no -ticket-secret: ticket codes are signed with a key that dies",
}

func summarizeLog(r io.Reader, bad func(string) bool) logSummary {
	var ls logSummary
	seen := map[string]bool{}
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 64<<10), 1<<20)
	for sc.Scan() {
		ls.lines++
		line := sc.Text()
		if !bad(line) || slices.ContainsFunc(expectedWarnings, func(w string) bool { return strings.Contains(line, w) }) {
			continue
		}
		ls.problems++
		key := logMessage(line)
		if !seen[key] && len(ls.samples) < 5 {
			seen[key] = true
			if len(line) > 400 {
				line = line[:400] + "..."
			}
			ls.samples = append(ls.samples, line)
		}
	}
	return ls
}

// logMessage is the part of a log line that names what happened, so that a
// message repeated with other times or ids is shown once.
func logMessage(line string) string {
	if i := strings.Index(line, `"msg":"`); i >= 0 {
		rest := line[i+7:]
		if j := strings.IndexByte(rest, '"'); j >= 0 {
			return rest[:j]
		}
	}
	if i := strings.Index(line, "msg="); i >= 0 {
		rest := line[i+4:]
		if strings.HasPrefix(rest, `"`) {
			if j := strings.IndexByte(rest[1:], '"'); j >= 0 {
				return rest[1 : j+1]
			}
		}
		if f := strings.Fields(rest); len(f) > 0 {
			return f[0]
		}
	}
	return line
}

// waitHealthy polls url until it answers 200, for at most d.
func waitHealthy(u string, d time.Duration) error {
	client := &http.Client{Timeout: 2 * time.Second, Transport: &http.Transport{DialContext: loopbackDialer}}
	deadline := time.Now().Add(d)
	for {
		resp, err := client.Get(u)
		if err == nil {
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				return nil
			}
			err = fmt.Errorf("%s", resp.Status)
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("%s did not answer in %v: %v", u, d, err)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// loopbackURL refuses a server URL that is not on this machine: the
// rehearsal's load never leaves loopback, and that includes its databases.
func loopbackURL(raw string) error {
	u, err := url.Parse(raw)
	if err != nil {
		return err
	}
	host := u.Hostname()
	if host == "" && u.Query().Get("host") != "" {
		host = u.Query().Get("host")
	}
	if host == "" || strings.HasPrefix(host, "/") {
		return nil // a Unix socket, given or by default
	}
	if ip := net.ParseIP(host); host != "localhost" && (ip == nil || !ip.IsLoopback()) {
		return fmt.Errorf("%q is not on loopback", host)
	}
	return nil
}

// redisPID asks a Redis server for its process id, to watch its memory.
func redisPID(addr string) int {
	c := redis.NewClient(&redis.Options{Addr: addr, PoolSize: 1})
	defer c.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	defer cancel()
	info, err := redisserver.Info(ctx, c, "server")
	if err != nil {
		return 0
	}
	pid, _ := strconv.Atoi(info["process_id"])
	return pid
}

// tail returns the last n lines of a file.
func tail(path string, n int) string {
	b, err := os.ReadFile(path)
	if err != nil {
		return ""
	}
	lines := strings.Split(strings.TrimRight(string(b), "\n"), "\n")
	return strings.Join(lines[max(0, len(lines)-n):], "\n")
}
