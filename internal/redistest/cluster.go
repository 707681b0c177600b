package redistest

import (
	"context"
	"fmt"
	"os/exec"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
)

// StartCluster starts three Redis Cluster masters on loopback (private
// servers, stopped when the test ends), joins them into one cluster covering
// every slot with redis-cli --cluster create, waits until every node says it
// is ok, and returns their addresses.
func StartCluster(t testing.TB) []string {
	t.Helper()
	var addrs []string
	for _, s := range createCluster(t, 3, 0, 5*time.Second) {
		addrs = append(addrs, s.Addr)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	for _, addr := range addrs {
		c := redis.NewClient(&redis.Options{Addr: addr})
		for {
			info, err := c.ClusterInfo(ctx).Result()
			if err == nil && strings.Contains(info, "cluster_state:ok") {
				break
			}
			if ctx.Err() != nil {
				c.Close()
				t.Fatalf("cluster node %s never reached state ok: %v %s", addr, err, info)
			}
			time.Sleep(50 * time.Millisecond)
		}
		c.Close()
	}
	return addrs
}

// createCluster starts nodes private cluster-enabled servers on loopback
// (stopped when the test ends) and joins them into one cluster covering every
// slot with redis-cli --cluster create, replicas replicas to a master. It
// returns once redis-cli did: the caller waits for the state it needs.
func createCluster(t testing.TB, nodes, replicas int, nodeTimeout time.Duration) []*Server {
	t.Helper()
	cli, err := exec.LookPath("redis-cli")
	if err != nil {
		Missing(t, "redis-cli is not installed")
	}
	servers := make([]*Server, 0, nodes)
	args := []string{"--cluster", "create"}
	for range nodes {
		s := StartServer(t, func(port, bus int) []string {
			return []string{
				"--cluster-enabled", "yes",
				"--cluster-port", strconv.Itoa(bus),
				"--cluster-config-file", fmt.Sprintf("nodes-%d.conf", port),
				"--cluster-node-timeout", strconv.FormatInt(nodeTimeout.Milliseconds(), 10),
			}
		})
		servers = append(servers, s)
		args = append(args, s.Addr)
	}
	args = append(args, "--cluster-replicas", strconv.Itoa(replicas), "--cluster-yes")
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	if out, err := exec.CommandContext(ctx, cli, args...).CombinedOutput(); err != nil {
		t.Fatalf("redis-cli --cluster create: %v\n%s", err, out)
	}
	return servers
}
