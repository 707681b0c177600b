package gateway

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
	"go.uber.org/zap"

	"github.com/foyer-dev/foyer/waitingroom"
	"github.com/foyer-dev/foyer/waitingroom/redisstore"
)

// node is one gateway process of a many-node test: a Handler on a store of its
// own (its own Redis client), served over real HTTP in front of nodeOrigin.
type node struct {
	h   *Handler
	url string
	srv *httptest.Server
}

// newNode provisions cfg on store without a Caddy context, as testHandler
// does, but signs with key: the nodes of one deployment share their signing
// key (through Caddy's storage), so any node honours another's tickets and
// passes.
func newNode(t *testing.T, cfg Handler, store waitingroom.Store, key *waitingroom.SigningKey) *node {
	t.Helper()
	return newNodeWith(t, cfg, store, key, nil)
}

// newNodeResumed is newNode for a node that finds a recent memo of the room
// in Caddy's storage (see roommark.go): the room ran before on this store.
func newNodeResumed(t *testing.T, cfg Handler, store waitingroom.Store, key *waitingroom.SigningKey, resumed bool) *node {
	t.Helper()
	return newNodeWith(t, cfg, store, key, func(c *waitingroom.Config) { c.Resumed = resumed })
}

// newNodeWhileDown is newNodeResumed for a node that starts while its store
// is down: the room starts in its failure mode, as pool.go lets it.
func newNodeWhileDown(t *testing.T, cfg Handler, store waitingroom.Store, key *waitingroom.SigningKey) *node {
	t.Helper()
	return newNodeWith(t, cfg, store, key, func(c *waitingroom.Config) { c.Resumed = true; c.Store = downAtStart{c.Store} })
}

// downAtStart marks a store whose node may find it down when it starts.
type downAtStart struct{ waitingroom.Store }

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
// what an earlier node on that disk kept there, as pool.go does.
func newNodeOn(t *testing.T, cfg Handler, store waitingroom.Store, key *waitingroom.SigningKey, disk *nodeDisk) *node {
	t.Helper()
	return newNodeWith(t, cfg, store, key, func(c *waitingroom.Config) {
		c.Memo = disk.load()
		c.Resumed = c.Memo != nil
		c.Remember = disk.remember
	})
}

// newNodeWith is newNode with the room's configuration adjusted by opt.
func newNodeWith(t *testing.T, cfg Handler, store waitingroom.Store, key *waitingroom.SigningKey, opt func(*waitingroom.Config)) *node {
	t.Helper()
	h := &cfg
	if err := h.setup(); err != nil {
		t.Fatal(err)
	}
	h.key, h.logger = key, zap.NewNop()
	rc := waitingroom.Config{ID: h.Room, Settings: h.settings, Store: store, Key: key, Now: now, OpenOnStoreFailure: h.OnStoreFailure == storeFailureOpen}
	if opt != nil {
		opt(&rc)
	}
	var err error
	h.room, err = waitingroom.NewRoom(rc)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if err := h.room.Start(ctx); err != nil {
		if _, down := rc.Store.(downAtStart); !down {
			t.Fatal(err)
		}
	}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if err := h.ServeHTTP(w, r, nodeOrigin); err != nil {
			code := http.StatusInternalServerError
			var he caddyhttp.HandlerError
			if errors.As(err, &he) && he.StatusCode != 0 {
				code = he.StatusCode
			}
			http.Error(w, err.Error(), code)
		}
	}))
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
	if r.Header.Get(headerPass) == "" {
		w.WriteHeader(http.StatusForbidden)
		_, err := io.WriteString(w, "no pass")
		return err
	}
	if r.URL.Path == "/done" {
		w.Header().Set(headerCommand, commandRevoke)
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
			if err := n.h.room.Tick(context.Background()); err != nil {
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
