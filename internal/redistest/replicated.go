package redistest

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
)

// ReplicatedCluster is a private Redis Cluster of three masters, each with one
// replica, for tests that kill a master and watch its replica take over.
type ReplicatedCluster struct {
	// Servers are the six nodes, in no particular role order; Addrs their
	// addresses, to seed a client with.
	Servers []*Server
	Addrs   []string
	// NodeTimeout is the cluster-node-timeout the nodes run with: a master
	// that stops answering is failed over a little after it.
	NodeTimeout time.Duration
}

// replicatedNodeTimeout is short, so that a failover takes two or three
// seconds, not the tens of seconds of the server's default.
const replicatedNodeTimeout = 2 * time.Second

// StartReplicatedCluster starts six private servers on loopback (stopped when
// the test ends), joins them into a cluster of three masters with one replica
// each, and waits until the cluster is ok and every replica is in sync.
func StartReplicatedCluster(t testing.TB) *ReplicatedCluster {
	t.Helper()
	c := &ReplicatedCluster{NodeTimeout: replicatedNodeTimeout}
	c.Servers = createCluster(t, 6, 1, replicatedNodeTimeout)
	for _, s := range c.Servers {
		c.Addrs = append(c.Addrs, s.Addr)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	// A node redis-cli made a replica may still call itself a master for a
	// moment: wait until three replicas are linked and every node is ok.
	for {
		ok, linked := 0, 0
		for _, s := range c.Servers {
			cl := redis.NewClient(&redis.Options{Addr: s.Addr, MaxRetries: -1})
			info, err := cl.ClusterInfo(ctx).Result()
			if err == nil && strings.Contains(info, "cluster_state:ok") {
				ok++
			}
			if role, err := Role(ctx, cl); err == nil && role.Linked {
				linked++
			}
			cl.Close()
		}
		if ok == len(c.Servers) && linked == 3 {
			break
		}
		select {
		case <-ctx.Done():
			t.Fatalf("the cluster never became ok with its replicas in sync: %d nodes ok, %d replicas linked", ok, linked)
		case <-time.After(50 * time.Millisecond):
		}
	}
	return c
}

// ReplicaOf returns the server that replicates the master at addr.
func (c *ReplicatedCluster) ReplicaOf(t testing.TB, addr string) *Server {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	for _, s := range c.Servers {
		cl := redis.NewClient(&redis.Options{Addr: s.Addr})
		role, err := Role(ctx, cl)
		cl.Close()
		if err != nil {
			t.Fatalf("ROLE of %s: %v", s.Addr, err)
		}
		if !role.Master && role.Of == addr {
			return s
		}
	}
	t.Fatalf("no replica of %s", addr)
	return nil
}

// ServerAt returns the cluster's server at addr.
func (c *ReplicatedCluster) ServerAt(t testing.TB, addr string) *Server {
	t.Helper()
	for _, s := range c.Servers {
		if s.Addr == addr {
			return s
		}
	}
	t.Fatalf("no server at %s in the cluster", addr)
	return nil
}

// WaitReplicated waits until the replica of master has acknowledged every
// write master took so far, or fails the test after within. A replica the
// cluster reports linked is not yet streaming: Redis starts sending a freshly
// synced replica the master's writes only once it acknowledges the sync, up to
// a second later, so a master killed in that second takes every write since
// with it. A test that means to fail over to a replica holding the data waits
// on this before the kill.
func WaitReplicated(t testing.TB, master *Server, within time.Duration) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), within+time.Second)
	defer cancel()
	cl := redis.NewClient(&redis.Options{Addr: master.Addr, ReadTimeout: within + time.Second})
	defer cl.Close()
	n, err := cl.Wait(ctx, 1, within).Result()
	if err != nil || n < 1 {
		t.Fatalf("the replica of %s did not acknowledge its writes within %v: %d replicas, %v", master.Addr, within, n, err)
	}
}

// WaitPromoted polls s until it calls itself a master, and returns when it
// first did, or fails the test after within. each, if not nil, is called
// before every poll.
func WaitPromoted(t testing.TB, s *Server, within time.Duration, each func()) time.Time {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), within)
	defer cancel()
	var at time.Time
	err := waitFor(ctx, s.Addr, func(cl *redis.Client) (bool, error) {
		if each != nil {
			each()
		}
		role, err := Role(ctx, cl)
		at = time.Now()
		return err == nil && role.Master, nil
	})
	if err != nil {
		t.Fatalf("%s was not promoted within %v: %v", s.Addr, within, err)
	}
	return at
}

// NodeRole is what ROLE says of a server.
type NodeRole struct {
	Master bool
	Of     string // a replica's master, host:port
	Linked bool   // a replica's link to its master is up and in sync
}

// Role asks a server for its role.
func Role(ctx context.Context, cl *redis.Client) (NodeRole, error) {
	v, err := cl.Do(ctx, "ROLE").Slice()
	if err != nil {
		return NodeRole{}, err
	}
	if len(v) == 0 {
		return NodeRole{}, fmt.Errorf("empty ROLE reply")
	}
	if kind, _ := v[0].(string); kind == "master" {
		return NodeRole{Master: true}, nil
	}
	if len(v) < 4 {
		return NodeRole{}, fmt.Errorf("short ROLE reply %v", v)
	}
	host, _ := v[1].(string)
	port, _ := v[2].(int64)
	state, _ := v[3].(string)
	return NodeRole{Of: fmt.Sprintf("%s:%d", host, port), Linked: state == "connected"}, nil
}

// waitFor polls ok against the server at addr every 50 ms until it says yes
// or ctx ends.
func waitFor(ctx context.Context, addr string, ok func(*redis.Client) (bool, error)) error {
	cl := redis.NewClient(&redis.Options{Addr: addr, MaxRetries: -1, DialTimeout: 500 * time.Millisecond})
	defer cl.Close()
	var last error
	for {
		done, err := ok(cl)
		if done {
			return nil
		}
		if err != nil {
			last = err
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("%w (last error: %v)", ctx.Err(), last)
		case <-time.After(50 * time.Millisecond):
		}
	}
}
