package redisstore_test

import (
	"context"
	"fmt"
	"os/exec"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/foyer-dev/foyer/waitingroom/redisstore"
	"github.com/foyer-dev/foyer/waitingroom/storetest"
)

// startCluster starts three Redis Cluster masters on loopback, joins them into
// one cluster covering all slots, and waits until every node says it is ok.
func startCluster(t *testing.T) []string {
	t.Helper()
	cli, err := exec.LookPath("redis-cli")
	if err != nil {
		missing(t, "redis-cli is not installed")
	}
	var addrs []string
	for range 3 {
		s := startServer(t, func(port, bus int) []string {
			return []string{
				"--cluster-enabled", "yes",
				"--cluster-port", strconv.Itoa(bus),
				"--cluster-config-file", fmt.Sprintf("nodes-%d.conf", port),
				"--cluster-node-timeout", "5000",
			}
		})
		addrs = append(addrs, s.Addr)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	args := append([]string{"--cluster", "create"}, addrs...)
	args = append(args, "--cluster-replicas", "0", "--cluster-yes")
	if out, err := exec.CommandContext(ctx, cli, args...).CombinedOutput(); err != nil {
		t.Fatalf("redis-cli --cluster create: %v\n%s", err, out)
	}
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

// TestCluster runs the conformance suite on a real three-master Redis Cluster:
// every script touches only the keys of one room, which share a hash tag, so
// each is served by one shard.
func TestCluster(t *testing.T) {
	if testing.Short() {
		t.Skip("starts a Redis Cluster")
	}
	addrs := startCluster(t)
	dial := func() redis.UniversalClient {
		return redis.NewClusterClient(&redis.ClusterOptions{Addrs: addrs})
	}

	t.Run("RoomsSpreadOverShards", func(t *testing.T) {
		c := dial().(*redis.ClusterClient)
		defer c.Close()
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		shards := make(map[string]bool)
		for i := range 30 {
			var slot int64 = -1
			for _, k := range redisstore.RoomKeys("foyer", fmt.Sprintf("room-%d", i)) {
				s, err := c.ClusterKeySlot(ctx, k).Result()
				if err != nil {
					t.Fatal(err)
				}
				if slot >= 0 && s != slot {
					t.Fatalf("room-%d: key %s is in slot %d, another key of the room in %d", i, k, s, slot)
				}
				slot = s
			}
			shard, err := c.MasterForKey(ctx, redisstore.RoomKeys("foyer", fmt.Sprintf("room-%d", i))[0])
			if err != nil {
				t.Fatal(err)
			}
			shards[shard.Options().Addr] = true
		}
		if len(shards) != len(addrs) {
			t.Errorf("30 rooms landed on %d of %d shards", len(shards), len(addrs))
		}
	})

	t.Run("Conformance", func(t *testing.T) {
		storetest.Run(t, harness(t, dial))
	})
}
