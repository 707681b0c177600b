package integration

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/cookiejar"
	"net/http/httptest"
	"net/url"
	"sync"
	"testing"
	"time"

	"github.com/caddyserver/caddy/v2/modules/caddyhttp"
	"github.com/redis/go-redis/v9"

	"github.com/foyer-dev/foyer/gateway"
	"github.com/foyer-dev/foyer/waitingroom"
	"github.com/foyer-dev/foyer/waitingroom/redisstore"
)

// node is one gateway process of a many-node test: a standalone Handler on a
// store of its own (its own Redis client), served over real HTTP in front of
// nodeOrigin, reading the test's clock.
type node struct {
	h   *gateway.Handler
	url string
	srv *httptest.Server
}

// room is the node's waiting room, which the test ticks as its controller
// loop would.
func (n *node) room() *waitingroom.Room { return n.h.LiveRoom() }

// newNode provisions cfg on store as gateway.NewStandalone does, but signs
// with key: the nodes of one deployment share their signing key (through
// Caddy's storage), so any node honours another's tickets and passes.
func newNode(t *testing.T, now func() time.Time, cfg gateway.Handler, store waitingroom.Store, key *waitingroom.SigningKey) *node {
	t.Helper()
	return newNodeWith(t, now, cfg, store, key, nil)
}

// newNodeResumed is newNode for a node that finds a recent memo of the room
// in Caddy's storage (README, "Recovery"): the room ran before on this store.
func newNodeResumed(t *testing.T, now func() time.Time, cfg gateway.Handler, store waitingroom.Store, key *waitingroom.SigningKey, resumed bool) *node {
	t.Helper()
	return newNodeWith(t, now, cfg, store, key, func(c *waitingroom.Config) { c.Resumed = resumed })
}

// newNodeWhileDown is newNodeResumed for a node that starts while its store
// is down: the room starts in its failure mode, as under Caddy.
func newNodeWhileDown(t *testing.T, now func() time.Time, cfg gateway.Handler, store waitingroom.Store, key *waitingroom.SigningKey) *node {
	t.Helper()
	return newNodeServing(t, now, cfg, store, key, func(c *waitingroom.Config) { c.Resumed = true }, nodeOrigin, true)
}

// nodeDisk is a node's Caddy storage in the many-node tests: the memo its
// room keeps there outlives the node.
type nodeDisk struct {
	mu   sync.Mutex
	memo *waitingroom.Memo
}

func (d *nodeDisk) remember(m waitingroom.Memo) {
	d.mu.Lock()
	defer d.mu.Unlock()
	d.memo = &m
}

func (d *nodeDisk) load() *waitingroom.Memo {
	d.mu.Lock()
	defer d.mu.Unlock()
	return d.memo
}

// newNodeOn is newNode for a node whose Caddy storage is disk: it starts with
// what an earlier node on that disk kept there, as a node under Caddy does.
func newNodeOn(t *testing.T, now func() time.Time, cfg gateway.Handler, store waitingroom.Store, key *waitingroom.SigningKey, disk *nodeDisk) *node {
	t.Helper()
	return newNodeWith(t, now, cfg, store, key, func(c *waitingroom.Config) {
		c.Memo = disk.load()
		c.Resumed = c.Memo != nil
		c.Remember = disk.remember
	})
}

// newNodeWith is newNode with the room's configuration adjusted by opt.
func newNodeWith(t *testing.T, now func() time.Time, cfg gateway.Handler, store waitingroom.Store, key *waitingroom.SigningKey, opt func(*waitingroom.Config)) *node {
	t.Helper()
	return newNodeServing(t, now, cfg, store, key, opt, nodeOrigin, false)
}

// newNodeServing is newNodeWith in front of origin, its requests passed
// through wrap (outermost last). A store that does not answer at start fails
// the test unless mayBeDown.
func newNodeServing(t *testing.T, now func() time.Time, cfg gateway.Handler, store waitingroom.Store, key *waitingroom.SigningKey,
	opt func(*waitingroom.Config), origin caddyhttp.Handler, mayBeDown bool, wrap ...func(http.Handler) http.Handler) *node {
	t.Helper()
	// The start's first store round trips wait behind every other test
	// running at once (and -race): a generous bound, as the room's start is
	// not what these tests measure.
	ctx, cancel := context.WithTimeout(context.Background(), 15*time.Second)
	defer cancel()
	h, err := gateway.NewStandalone(ctx, cfg, gateway.StandaloneOptions{Store: store, Key: key, Now: now, Room: opt})
	if h == nil || (err != nil && !(mayBeDown && errors.Is(err, gateway.ErrStartedDown))) {
		t.Fatal(err)
	}
	var serve http.Handler = http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if err := h.ServeHTTP(w, r, origin); err != nil {
			code := http.StatusInternalServerError
			var he caddyhttp.HandlerError
			if errors.As(err, &he) && he.StatusCode != 0 {
				code = he.StatusCode
			}
			http.Error(w, err.Error(), code)
		}
	})
	for _, w := range wrap {
		serve = w(serve)
	}
	srv := httptest.NewServer(serve)
	t.Cleanup(srv.Close)
	return &node{h: h, url: srv.URL, srv: srv}
}

// deploymentKey is the signing key the nodes of one test share.
func deploymentKey(t *testing.T) *waitingroom.SigningKey {
	t.Helper()
	key, err := waitingroom.GenerateSigningKey()
	if err != nil {
		t.Fatal(err)
	}
	return key
}

// nodeOrigin is the site behind every node. It answers only requests that
// carry a pass, and at /done it ends the fan's session, as a checkout would.
var nodeOrigin = caddyhttp.HandlerFunc(func(w http.ResponseWriter, r *http.Request) error {
	if r.Header.Get(passHeader) == "" {
		w.WriteHeader(http.StatusForbidden)
		_, err := io.WriteString(w, "no pass")
		return err
	}
	if r.URL.Path == "/done" {
		w.Header().Set(commandHeader, "revoke")
		_, err := io.WriteString(w, "bye")
		return err
	}
	_, err := io.WriteString(w, "origin")
	return err
})

// redisNodeStore is one node's store: a client of its own from dial (closed
// when the test ends) under the test's key prefix, its scripts loaded.
func redisNodeStore(t *testing.T, dial func() redis.UniversalClient, prefix string) *redisstore.Store {
	t.Helper()
	c := dial()
	t.Cleanup(func() { c.Close() })
	s, err := redisstore.New(c, redisstore.WithPrefix(prefix), redisstore.WithTTL(time.Hour))
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if err := s.LoadScripts(ctx); err != nil {
		t.Fatal(err)
	}
	return s
}

// sharedDial dials new clients like c, one per node.
func sharedDial(c *redis.Client) func() redis.UniversalClient {
	opts := c.Options()
	return func() redis.UniversalClient { return redis.NewClient(opts) }
}

// tickAll runs one tick of every node at once, as their controller loops
// would in the same second, and returns the errors.
func tickAll(nodes []*node) error {
	errs := make([]error, len(nodes))
	var wg sync.WaitGroup
	for i, n := range nodes {
		wg.Go(func() {
			if err := n.room().Tick(context.Background()); err != nil {
				errs[i] = fmt.Errorf("node %d: %w", i, err)
			}
		})
	}
	wg.Wait()
	return errors.Join(errs...)
}

// visitor is a browser that may be used from any goroutine: its own cookie
// jar, no redirects followed, and errors returned rather than failing the
// test. Cookies do not tell ports apart, so its cookies from one node go to
// every node, as they would behind a load balancer.
type visitor struct {
	client *http.Client
	jar    *cookiejar.Jar
}

func newVisitor(tr http.RoundTripper) *visitor {
	jar, _ := cookiejar.New(nil)
	return &visitor{
		jar: jar,
		client: &http.Client{
			Jar:           jar,
			Transport:     tr,
			Timeout:       10 * time.Second,
			CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse },
		},
	}
}

// get fetches rawURL, asking for JSON when json is set.
func (v *visitor) get(rawURL string, json bool) (*http.Response, string, error) {
	req, err := http.NewRequest(http.MethodGet, rawURL, nil)
	if err != nil {
		return nil, "", err
	}
	if json {
		req.Header.Set("Accept", "application/json")
	}
	resp, err := v.client.Do(req)
	if err != nil {
		return nil, "", err
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	return resp, string(body), err
}

// cookie is the value of the visitor's cookie name for rawURL, or "".
func (v *visitor) cookie(rawURL, name string) string {
	u, err := url.Parse(rawURL)
	if err != nil {
		return ""
	}
	for _, c := range v.jar.Cookies(u) {
		if c.Name == name {
			return c.Value
		}
	}
	return ""
}

// sharedTransport keeps connections to the nodes alive across the visitors of
// one test, so hundreds of fans polling every round do not use up loopback
// ports.
func sharedTransport(t *testing.T) *http.Transport {
	tr := &http.Transport{MaxIdleConnsPerHost: 64, IdleConnTimeout: time.Minute}
	t.Cleanup(tr.CloseIdleConnections)
	return tr
}
