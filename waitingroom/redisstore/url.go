package redisstore

import (
	"errors"
	"fmt"
	"net/url"
	"strings"
	"time"

	"github.com/redis/go-redis/v9"
)

// NewClient returns a client for a Redis URL. The topology is in the scheme:
//
//	redis://[user:password@]host:port[/db][?option=value...]            one server
//	rediss://...                                                        one server, TLS
//	redis+cluster://[user:password@]host:port[,host:port...][?option...] a Cluster
//	rediss+cluster://...                                                a Cluster, TLS
//	redis+sentinel://[user:password@]host:port[,host:port...][/db]?master_name=name[&option...]
//	rediss+sentinel://...                                               Sentinel, TLS
//
// A Cluster needs only some of its nodes, the rest are discovered; more seed
// addresses may also be given as repeated addr=host:port options. For Sentinel
// the hosts are the sentinels'. Options are go-redis's own, in snake case
// (dial_timeout=2s, pool_size=50, ...); an unknown one is an error.
//
// Timeouts the URL leaves unset are one second, with one dial attempt, so that a
// store that is down is known to be down at once.
//
// The caller owns the client and closes it.
func NewClient(rawURL string) (redis.UniversalClient, error) {
	scheme, rest, ok := strings.Cut(rawURL, "://")
	if !ok {
		return nil, errors.New("redisstore: a Redis URL starts with redis://, rediss://, redis+cluster:// or redis+sentinel://")
	}
	base, topology, _ := strings.Cut(scheme, "+")
	if base != "redis" && base != "rediss" {
		return nil, fmt.Errorf("redisstore: unsupported Redis URL scheme %q", scheme)
	}
	if topology != "" && topology != "cluster" && topology != "sentinel" {
		return nil, fmt.Errorf("redisstore: unsupported Redis URL scheme %q", scheme)
	}
	c, err := dial(rawURL, base, topology, rest)
	if err != nil {
		return nil, urlError(rawURL, err)
	}
	return c, nil
}

// dial makes the client of one topology ("", "cluster" or "sentinel") from
// the URL split at its scheme; NewClient says what is wrong with the URL.
func dial(rawURL, base, topology, rest string) (redis.UniversalClient, error) {
	if topology == "" {
		opts, err := redis.ParseURL(rawURL)
		if err != nil {
			return nil, err
		}
		failFast(&opts.DialTimeout, &opts.ReadTimeout, &opts.WriteTimeout, &opts.DialerRetries)
		return redis.NewClient(opts), nil
	}
	u, err := withAddrParams(base, rest)
	if err != nil {
		return nil, err
	}
	if topology == "cluster" {
		opts, err := redis.ParseClusterURL(u)
		if err != nil {
			return nil, err
		}
		failFast(&opts.DialTimeout, &opts.ReadTimeout, &opts.WriteTimeout, &opts.DialerRetries)
		if opts.ClusterStateReloadInterval == 0 {
			opts.ClusterStateReloadInterval = ClusterStateReload
		}
		return redis.NewClusterClient(opts), nil
	}
	opts, err := redis.ParseFailoverURL(u)
	if err != nil {
		return nil, err
	}
	if opts.MasterName == "" {
		return nil, errors.New("master_name is required")
	}
	failFast(&opts.DialTimeout, &opts.ReadTimeout, &opts.WriteTimeout, &opts.DialerRetries)
	return redis.NewFailoverClient(opts), nil
}

// failFast sets the timeouts the URL left unset to what a waiting room needs.
// go-redis's defaults (5 s to dial, five dial attempts, 3 s reads) suit a batch
// job; a gateway whose store is down must say so within a second, so that new
// arrivals get their 503 promptly and the room's view goes to "reconnecting".
func failFast(dial, read, write *time.Duration, retries *int) {
	for _, d := range []*time.Duration{dial, read, write} {
		if *d == 0 {
			*d = time.Second
		}
	}
	if *retries == 0 {
		*retries = 1
	}
}

// ClusterStateReload is how stale a Cluster client's map of slots to masters
// may grow before it is read again. go-redis's default is a minute: after a
// failover every node would keep dialling the dead master for up to that long,
// with the room's replica promoted seconds earlier. Reading the map costs one
// CLUSTER SLOTS per second per node; the store also asks for a fresh map on
// every failure (see Store.run), so a promotion is seen within a second or so.
const ClusterStateReload = time.Second

// withAddrParams rewrites "host1:p1,host2:p2/path?query" as the URL go-redis
// parses for a multi-node client: the first host in the authority, the others
// as addr parameters.
func withAddrParams(scheme, rest string) (string, error) {
	end := strings.IndexAny(rest, "/?#")
	if end < 0 {
		end = len(rest)
	}
	authority, tail := rest[:end], rest[end:]
	userinfo, hosts := "", authority
	if i := strings.LastIndex(authority, "@"); i >= 0 {
		userinfo, hosts = authority[:i+1], authority[i+1:]
	}
	addrs := strings.Split(hosts, ",")
	for _, a := range addrs {
		if a == "" {
			return "", errors.New("empty host in the host list")
		}
	}
	u, err := url.Parse(scheme + "://" + userinfo + addrs[0] + tail)
	if err != nil {
		return "", err
	}
	if len(addrs) > 1 {
		q := u.Query()
		for _, a := range addrs[1:] {
			q.Add("addr", a)
		}
		u.RawQuery = q.Encode()
	}
	return u.String(), nil
}

// urlError describes a bad URL without repeating its password, which would
// otherwise end up in logs.
func urlError(rawURL string, err error) error {
	var uerr *url.Error
	if errors.As(err, &uerr) {
		err = uerr.Err
	}
	shown := "(unparsable)"
	if u, perr := url.Parse(rawURL); perr == nil {
		shown = u.Redacted()
	}
	return fmt.Errorf("redisstore: Redis URL %s: %w", shown, err)
}
