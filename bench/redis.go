package bench

import (
	"context"
	"fmt"
	"net/http"
	"os"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/foyer-dev/foyer/internal/loadgen"
	"github.com/foyer-dev/foyer/internal/redisserver"
	"github.com/foyer-dev/foyer/internal/serverproc"
)

// Redis counts the Redis commands Foyer spends per join, per status poll
// and per admitted request, on a private redis-server that nothing else uses,
// from INFO commandstats before and after n requests of each kind. Every node
// also steps its rooms' controller in the background (a step a second and two
// snapshots, per room); that is measured over an idle interval as long as
// each run, straight after it, and subtracted.
func Redis(o RedisOptions) (map[string]float64, error) {
	srv, admin, stop, err := privateRedis("onsale-redis-")
	if err != nil {
		return nil, err
	}
	defer stop()

	site, err := startRedisSites(o.Foyer, srv.Addr)
	if err != nil {
		return nil, err
	}
	defer site.proc.Stop()
	tickets, err := joinFans(site.waiting+"/_waiting-room/status", min(o.N, 1000))
	if err != nil {
		return nil, err
	}
	passes, err := admitFans(site.open+"/events/42", min(o.N, 1000))
	if err != nil {
		return nil, err
	}

	version, _ := redisserver.Info(context.Background(), admin, "server")
	fmt.Printf("Redis commands per operation: one Foyer on a private redis-server %s at %s, %d requests of each kind over %d conns\n",
		version["redis_version"], srv.Addr, o.N, o.Conns)
	fmt.Printf("(sent: scripts and commands the gateway sends, i.e. round trips; executed: every command Redis ran, inside scripts too)\n")
	ops := []struct {
		name   string
		req    loadgen.Request
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
	sent := map[string]float64{}
	for _, op := range ops {
		c, err := countCommands(admin, func() (int, error) {
			res, err := loadgen.Run(o.Conns, o.MaxTime, o.N, op.req, op.check)
			return res.Requests, err
		})
		if err != nil {
			return nil, fmt.Errorf("%s: %w", op.name, err)
		}
		fmt.Printf("  %-17s sent %s  executed %s  (target %d sent)   %d requests in %v, background %d: %s\n",
			op.name, figure(c.perOp(c.sent)), figure(c.perOp(c.executed)), op.target, c.ops, c.elapsed.Round(time.Millisecond), c.background, c.detail())
		sent[op.name] = c.perOp(c.sent)
	}
	return sent, nil
}

// redisSites is one Foyer process serving two rooms on the same Redis: one
// that admits nobody (joins and polls), one that admits everyone at once
// (admitted requests).
type redisSites struct {
	proc          *serverproc.Foyer
	waiting, open string
}

func startRedisSites(foyer, redisAddr string) (*redisSites, error) {
	ports, err := serverproc.FreePorts(2)
	if err != nil {
		return nil, err
	}
	waitPort, openPort := ports[0], ports[1]
	cfg := fmt.Sprintf(quietGlobals+`http://127.0.0.1:%d {
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
	if s.proc, err = serverproc.StartFoyer(foyer, cfg, s.waiting+"/_waiting-room/jwks.json", s.open+"/_waiting-room/jwks.json"); err != nil {
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

// privateRedis starts a redis-server that nothing else uses, its files in a
// fresh directory named after prefix, with a client of one connection for
// counting commands and reading memory; stop closes the client, ends the
// server and removes the files.
func privateRedis(prefix string) (*redisserver.Server, *redis.Client, func(), error) {
	dir, err := os.MkdirTemp("", prefix)
	if err != nil {
		return nil, nil, nil, err
	}
	srv, err := redisserver.Start(redisserver.Options{Dir: dir})
	if err != nil {
		os.RemoveAll(dir)
		return nil, nil, nil, err
	}
	admin := redis.NewClient(&redis.Options{Addr: srv.Addr, PoolSize: 1})
	return srv, admin, func() { admin.Close(); srv.Stop(); os.RemoveAll(dir) }, nil
}
