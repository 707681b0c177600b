package redisstore_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/foyer-dev/foyer/internal/redistest"
	"github.com/foyer-dev/foyer/waitingroom/redisstore"
	"github.com/foyer-dev/foyer/waitingroom/storetest"
)

// TestCluster runs the conformance suite on a real three-master Redis Cluster:
// every script touches only the keys of one room, which share a hash tag, so
// each is served by one shard.
func TestCluster(t *testing.T) {
	if testing.Short() {
		t.Skip("starts a Redis Cluster")
	}
	addrs := redistest.StartCluster(t)
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
