package main

import (
	"context"
	"flag"
	"fmt"
	"math"
	"net/http"
	"os"
	"sort"
	"strings"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/foyer-dev/foyer/internal/redisserver"
)

// benchRedis counts the Redis commands Foyer spends per join, per status poll
// and per admitted request, on a private redis-server that nothing else uses,
// from INFO commandstats before and after n requests of each kind. Every node
// also steps its rooms' controller in the background (a step a second and two
// snapshots, per room); that is measured over an idle interval as long as
// each run, straight after it, and subtracted.
func benchRedis(args []string) error {
	fs := flag.NewFlagSet("bench redis", flag.ExitOnError)
	foyer := fs.String("foyer", "bin/foyer", "path of the foyer binary")
	n := fs.Int("n", 20000, "requests of each kind (more makes the background's share smaller)")
	conns := fs.Int("conns", 8, "concurrent keep-alive connections")
	maxTime := fs.Duration("max-time", 30*time.Second, "upper bound on each run")
	_ = fs.Parse(args)

	dir, err := os.MkdirTemp("", "onsale-redis-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(dir)
	srv, err := redisserver.Start(redisserver.Options{Dir: dir})
	if err != nil {
		return err
	}
	defer srv.Stop()
	admin := redis.NewClient(&redis.Options{Addr: srv.Addr, PoolSize: 1})
	defer admin.Close()

	site, err := startRedisSites(*foyer, srv.Addr)
	if err != nil {
		return err
	}
	defer site.proc.stop()
	tickets, err := joinFans(site.waiting+"/_waiting-room/status", min(*n, 1000))
	if err != nil {
		return err
	}
	passes, err := admitFans(site.open+"/events/42", min(*n, 1000))
	if err != nil {
		return err
	}

	version, _ := redisserver.Info(context.Background(), admin, "server")
	fmt.Printf("Redis commands per operation: one Foyer on a private redis-server %s at %s, %d requests of each kind over %d conns\n",
		version["redis_version"], srv.Addr, *n, *conns)
	fmt.Printf("(sent: scripts and commands the gateway sends, i.e. round trips; executed: every command Redis ran, inside scripts too)\n")
	ops := []struct {
		name   string
		req    request
		check  func(*http.Response) error
		target int
	}{
		{"join", func(w, i int) *http.Request { return jsonGet(site.waiting + "/_waiting-room/status") }, expectJSON, 1},
		{"status poll", func(w, i int) *http.Request {
			req := jsonGet(site.waiting + "/_waiting-room/status")
			req.AddCookie(tickets[(w*7919+i)%len(tickets)])
			return req
		}, expectJSON, 0},
		{"admitted request", func(w, i int) *http.Request {
			req, _ := http.NewRequest(http.MethodGet, site.open+"/events/42", nil)
			req.AddCookie(passes[(w*7919+i)%len(passes)])
			return req
		}, reachedOrigin, 0},
	}
	for _, op := range ops {
		c, err := countCommands(admin, func() (int, error) {
			res, err := runLoad(*conns, *maxTime, *n, op.req, op.check)
			return res.requests, err
		})
		if err != nil {
			return fmt.Errorf("%s: %w", op.name, err)
		}
		fmt.Printf("  %-17s sent %s  executed %s  (target %d sent)   %d requests in %v, background %d: %s\n",
			op.name, figure(c.perOp(c.sent)), figure(c.perOp(c.executed)), op.target, c.ops, c.elapsed.Round(time.Millisecond), c.background, c.detail())
	}
	return nil
}

// redisSites is one Foyer process serving two rooms on the same Redis: one
// that admits nobody (joins and polls), one that admits everyone at once
// (admitted requests).
type redisSites struct {
	proc          *caddyProc
	waiting, open string
}

func startRedisSites(foyer, redisAddr string) (*redisSites, error) {
	waitPort, err := freePort()
	if err != nil {
		return nil, err
	}
	openPort, err := freePort()
	if err != nil {
		return nil, err
	}
	cfg := fmt.Sprintf(`{
	admin off
	auto_https off
	persist_config off
}
http://127.0.0.1:%d {
	waiting_room {
		room bench-wait
		store redis redis://%s
		queue_all
	}
	respond "origin" 200
}
http://127.0.0.1:%d {
	waiting_room {
		room bench-open
		store redis redis://%s
		total_active_users 1000000
		new_users_per_minute 10000000
		session_duration 1h
	}
	respond "origin" 200
}
`, waitPort, redisAddr, openPort, redisAddr)
	s := &redisSites{waiting: fmt.Sprintf("http://127.0.0.1:%d", waitPort), open: fmt.Sprintf("http://127.0.0.1:%d", openPort)}
	if s.proc, err = startFoyer(foyer, cfg, s.waiting+"/_waiting-room/jwks.json", s.open+"/_waiting-room/jwks.json"); err != nil {
		return nil, err
	}
	return s, nil
}

func reachedOrigin(resp *http.Response) error {
	if resp.StatusCode != http.StatusOK || resp.ContentLength != int64(len("origin")) {
		return fmt.Errorf("got %d with %d bytes, not the origin's answer", resp.StatusCode, resp.ContentLength)
	}
	return nil
}

// commandCount is what one run cost Redis, net of the background.
type commandCount struct {
	ops            int
	elapsed        time.Duration
	sent, executed float64
	byName         map[string]int64 // net calls per command
	background     int64            // calls in the idle interval
}

func (c commandCount) perOp(v float64) float64 { return v / float64(c.ops) }

// figure prints a per-operation count to two decimals; the background's
// jitter, a step more or less in the idle interval, can leave a trace below
// that either way, which is not a minus sign's worth.
func figure(v float64) string {
	if math.Abs(v) < 0.005 {
		v = 0
	}
	return fmt.Sprintf("%5.2f", v)
}

// detail lists the net calls per command, the largest first.
func (c commandCount) detail() string {
	names := make([]string, 0, len(c.byName))
	for name, d := range c.byName {
		if d != 0 {
			names = append(names, name)
		}
	}
	sort.Slice(names, func(i, j int) bool { return c.byName[names[i]] > c.byName[names[j]] })
	var b strings.Builder
	for i, name := range names {
		if i > 0 {
			b.WriteString(", ")
		}
		fmt.Fprintf(&b, "%s %+d", name, c.byName[name])
	}
	if b.Len() == 0 {
		return "no commands beyond the background"
	}
	return b.String()
}

// countCommands runs fn, then stays idle as long, and returns the commands of
// the run less those of the idle interval. INFO, our own measuring, is left
// out; so is the connection handshake of a client, which is per connection.
func countCommands(admin *redis.Client, fn func() (int, error)) (commandCount, error) {
	ctx := context.Background()
	before, err := redisserver.CommandCalls(ctx, admin)
	if err != nil {
		return commandCount{}, err
	}
	start := time.Now()
	ops, err := fn()
	elapsed := time.Since(start)
	if err != nil {
		return commandCount{}, err
	}
	if ops == 0 {
		return commandCount{}, fmt.Errorf("no request completed")
	}
	busy, err := redisserver.CommandCalls(ctx, admin)
	if err != nil {
		return commandCount{}, err
	}
	time.Sleep(elapsed)
	idle, err := redisserver.CommandCalls(ctx, admin)
	if err != nil {
		return commandCount{}, err
	}
	c := commandCount{ops: ops, elapsed: elapsed, byName: make(map[string]int64)}
	for name := range idle {
		if name == "info" || name == "hello" || strings.HasPrefix(name, "client|") {
			continue
		}
		d := (busy[name] - before[name]) - (idle[name] - busy[name])
		c.byName[name] = d
		c.background += idle[name] - busy[name]
		c.executed += float64(d)
		if isSent(name) {
			c.sent += float64(d)
		}
	}
	return c, nil
}

// isSent tells the commands a client sends from those a script runs inside
// Redis. On these paths the gateway sends nothing but scripts; a command it
// sent plainly would still show, under executed.
func isSent(name string) bool {
	switch name {
	case "evalsha", "eval", "evalsha_ro", "eval_ro", "script|load":
		return true
	}
	return false
}
