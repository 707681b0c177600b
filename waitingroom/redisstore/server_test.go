package redisstore_test

import (
	"bufio"
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
)

// sharedRedisURL is the machine's Redis, shared with other packages' tests:
// these tests only ever touch keys under a prefix of their own. Never flush it.
func sharedRedisURL() string {
	if u := os.Getenv("FOYER_TEST_REDIS_URL"); u != "" {
		return u
	}
	return "redis://127.0.0.1:6379/0"
}

// missing skips a test that needs something the machine lacks, saying so
// loudly, except in CI, where an integration test that cannot run is a failure.
func missing(t testing.TB, format string, args ...any) {
	t.Helper()
	msg := fmt.Sprintf(format, args...)
	if os.Getenv("CI") == "true" {
		t.Fatalf("%s (CI=true: integration tests must run)", msg)
	}
	t.Skipf("SKIPPED, integration test not run: %s (set CI=true to make this a failure)", msg)
}

// sharedClient returns a client of the shared Redis, or skips.
func sharedClient(t testing.TB) *redis.Client {
	t.Helper()
	opts, err := redis.ParseURL(sharedRedisURL())
	if err != nil {
		t.Fatalf("FOYER_TEST_REDIS_URL: %v", err)
	}
	c := redis.NewClient(opts)
	t.Cleanup(func() { c.Close() })
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	defer cancel()
	if err := c.Ping(ctx).Err(); err != nil {
		missing(t, "no Redis at %s: %v", opts.Addr, err)
	}
	return c
}

// newPrefix returns a key prefix no other test uses, and deletes its keys when
// the test ends.
func newPrefix(t testing.TB, c redis.UniversalClient) string {
	t.Helper()
	var b [6]byte
	if _, err := rand.Read(b[:]); err != nil {
		t.Fatal(err)
	}
	prefix := "foyertest-" + hex.EncodeToString(b[:])
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		del := func(ctx context.Context, c *redis.Client) error {
			iter := c.Scan(ctx, 0, prefix+":*", 1000).Iterator()
			for iter.Next(ctx) {
				if err := c.Del(ctx, iter.Val()).Err(); err != nil {
					return err
				}
			}
			return iter.Err()
		}
		var err error
		switch c := c.(type) {
		case *redis.ClusterClient:
			err = c.ForEachMaster(ctx, del)
		case *redis.Client:
			err = del(ctx, c)
		}
		if err != nil {
			t.Logf("removing test keys %s:*: %v", prefix, err)
		}
	})
	return prefix
}

// server is a private redis-server this test started, on a loopback port, with
// its files in a temporary directory. Tests that must stop, flush or measure a
// server use one of these, never the shared one.
type server struct {
	Addr string
	Port int
	cmd  *exec.Cmd
}

// freePorts finds n distinct free loopback ports. They are held until all are
// found so that none repeats; a port taken by someone else before the server
// binds it makes startServer retry.
func freePorts(t testing.TB, n int) []int {
	t.Helper()
	var ports []int
	for range n {
		l, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		defer l.Close()
		ports = append(ports, l.Addr().(*net.TCPAddr).Port)
	}
	return ports
}

// startServer starts redis-server with extra configuration (port and cluster
// bus port are filled in from ports), stopped when the test ends.
func startServer(t testing.TB, extra func(port, bus int) []string) *server {
	t.Helper()
	bin, err := exec.LookPath("redis-server")
	if err != nil {
		missing(t, "redis-server is not installed")
	}
	dir := t.TempDir()
	var lastErr error
	for range 3 {
		ports := freePorts(t, 2)
		port := ports[0]
		args := []string{
			"--port", strconv.Itoa(port), "--bind", "127.0.0.1",
			"--dir", dir, "--save", "", "--appendonly", "no",
			"--logfile", filepath.Join(dir, fmt.Sprintf("redis-%d.log", port)),
		}
		if extra != nil {
			args = append(args, extra(port, ports[1])...)
		}
		cmd := exec.Command(bin, args...)
		dieWithTest(cmd)
		if err := cmd.Start(); err != nil {
			t.Fatalf("starting redis-server: %v", err)
		}
		s := &server{Addr: fmt.Sprintf("127.0.0.1:%d", port), Port: port, cmd: cmd}
		if lastErr = s.waitReady(5 * time.Second); lastErr == nil {
			t.Cleanup(s.stop)
			return s
		}
		s.stop()
	}
	t.Fatalf("redis-server did not start: %v", lastErr)
	return nil
}

func (s *server) waitReady(d time.Duration) error {
	c := redis.NewClient(&redis.Options{Addr: s.Addr, MaxRetries: -1})
	defer c.Close()
	deadline := time.Now().Add(d)
	for {
		ctx, cancel := context.WithTimeout(context.Background(), 500*time.Millisecond)
		err := c.Ping(ctx).Err()
		cancel()
		if err == nil {
			return nil
		}
		if time.Now().After(deadline) {
			return err
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// stop kills the server process this test started, by its pid.
func (s *server) stop() {
	if s.cmd.Process != nil {
		_ = s.cmd.Process.Kill()
		_ = s.cmd.Wait()
	}
}

// info reads one section of INFO as a map.
func info(ctx context.Context, t testing.TB, c *redis.Client, section string) map[string]string {
	t.Helper()
	text, err := c.Info(ctx, section).Result()
	if err != nil {
		t.Fatalf("INFO %s: %v", section, err)
	}
	m := make(map[string]string)
	sc := bufio.NewScanner(strings.NewReader(text))
	for sc.Scan() {
		k, v, ok := strings.Cut(strings.TrimSpace(sc.Text()), ":")
		if ok && !strings.HasPrefix(k, "#") {
			m[k] = v
		}
	}
	return m
}

// commandCalls reads INFO commandstats: calls per command, lower case.
func commandCalls(ctx context.Context, t testing.TB, c *redis.Client) map[string]int64 {
	t.Helper()
	calls := make(map[string]int64)
	for k, v := range info(ctx, t, c, "commandstats") {
		name, ok := strings.CutPrefix(k, "cmdstat_")
		if !ok {
			continue
		}
		for _, f := range strings.Split(v, ",") {
			if n, ok := strings.CutPrefix(f, "calls="); ok {
				calls[name], _ = strconv.ParseInt(n, 10, 64)
			}
		}
	}
	return calls
}

// heldMemory reads how much memory the server holds for data and its own
// structures: INFO memory used_memory, less the query and output buffers of
// client connections (mem_clients_normal). Those are per connection, not per
// key, and Redis grows and shrinks them on its own schedule, by tens of
// kilobytes a connection, seconds after a burst. It waits for three equal
// readings in a row.
func heldMemory(ctx context.Context, t testing.TB, c *redis.Client) int64 {
	t.Helper()
	var last int64 = -1
	for same, tries := 0, 0; ; tries++ {
		m := info(ctx, t, c, "memory")
		used, err1 := strconv.ParseInt(m["used_memory"], 10, 64)
		clients, err2 := strconv.ParseInt(m["mem_clients_normal"], 10, 64)
		if err1 != nil || err2 != nil {
			t.Fatalf("INFO memory: %v %v", err1, err2)
		}
		if v := used - clients; v == last {
			if same++; same == 2 {
				return v
			}
		} else {
			last, same = v, 0
		}
		if tries == 100 {
			t.Fatal("memory use never settled")
		}
		time.Sleep(100 * time.Millisecond)
	}
}
