package rehearsal

import (
	"context"
	"fmt"
	"net"
	"net/http"
	"net/url"
	"os"
	"strconv"
	"strings"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/foyer-dev/foyer/internal/loadgen"
	"github.com/foyer-dev/foyer/internal/redisserver"
)

// waitHealthy polls url until it answers 200, for at most d.
func waitHealthy(u string, d time.Duration) error {
	client := &http.Client{Timeout: 2 * time.Second, Transport: &http.Transport{DialContext: loadgen.LoopbackDialer}}
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
