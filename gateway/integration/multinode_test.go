package integration

import (
	"fmt"
	"testing"

	"github.com/redis/go-redis/v9"

	"github.com/foyer-dev/foyer/internal/redistest"
)

// TestMultiNodeRedis: two and three gateway nodes, each with its own client
// and store, share the machine's Redis while hundreds of fans join and poll
// through all of them (see runCrowd for what is proved).
func TestMultiNodeRedis(t *testing.T) {
	t.Parallel()
	dial := sharedDial(redistest.Shared(t))
	for _, n := range []int{2, 3} {
		t.Run(fmt.Sprintf("%d nodes", n), func(t *testing.T) { runCrowd(t, dial, n) })
	}
}

// TestMultiNodeCluster: the same on a real Redis Cluster of three masters.
// A room's keys share a hash tag, so each node's scripts all go to one shard
// while the nodes' clients follow the cluster's slot map.
func TestMultiNodeCluster(t *testing.T) {
	t.Parallel()
	if testing.Short() {
		t.Skip("starts a Redis Cluster")
	}
	addrs := redistest.StartCluster(t)
	dial := func() redis.UniversalClient { return redis.NewClusterClient(&redis.ClusterOptions{Addrs: addrs}) }
	for _, n := range []int{2, 3} {
		t.Run(fmt.Sprintf("%d nodes", n), func(t *testing.T) { runCrowd(t, dial, n) })
	}
}
