package integration

import (
	"crypto/ed25519"
	"errors"
	"io"
	"net/http"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/caddyserver/caddy/v2/modules/caddyhttp"

	"github.com/foyer-dev/foyer/gateway"
	"github.com/foyer-dev/foyer/waitingroom"
	"github.com/foyer-dev/foyer/waitingroom/pass"
)

// passLedger is the origin's log of the passes it was shown, which is how the
// fault tests check the cap as the site behind the room sees it: a pass is a
// valid session from its issue until the origin ends it (revokes it), unless
// some node lets it through again after that, in which case it counts until
// it expires.
type passLedger struct {
	mu       sync.Mutex
	verifier *pass.Verifier
	now      func() time.Time // the origin's clock: the test's
	passes   map[string]*ledgerPass
	// late are passes the origin saw again after it had revoked them.
	late []string
}

type ledgerPass struct {
	pass      waitingroom.Pass
	token     string
	firstSeen time.Time // a pass's iat is whole seconds: the origin's clock is finer
	lastSeen  time.Time
	revokedAt time.Time // zero until the origin ended the session
}

// newPassLedger is the ledger of an origin that reads the time from now.
func newPassLedger(key *waitingroom.SigningKey, now func() time.Time) *passLedger {
	keys := map[string]ed25519.PublicKey{key.KeyID(): key.Public()}
	return &passLedger{
		verifier: pass.NewVerifier(keys, pass.WithClock(now), pass.WithLeeway(5*time.Second)),
		passes:   make(map[string]*ledgerPass),
		now:      now,
	}
}

// origin is nodeOrigin, logging each pass it is shown.
func (l *passLedger) origin() caddyhttp.Handler {
	return caddyhttp.HandlerFunc(func(w http.ResponseWriter, r *http.Request) error {
		tok := r.Header.Get(passHeader)
		p, err := l.verifier.Verify(tok, "")
		if err != nil {
			w.WriteHeader(http.StatusForbidden)
			_, err := io.WriteString(w, "no pass")
			return err
		}
		t := l.now()
		l.mu.Lock()
		e, ok := l.passes[p.ID]
		if !ok {
			e = &ledgerPass{pass: p, token: tok, firstSeen: t}
			l.passes[p.ID] = e
		}
		e.lastSeen = t
		if !e.revokedAt.IsZero() {
			l.late = append(l.late, p.ID)
		}
		if r.URL.Path == "/done" && e.revokedAt.IsZero() {
			e.revokedAt = t
		}
		l.mu.Unlock()
		if r.URL.Path == "/done" {
			w.Header().Set(commandHeader, "revoke")
			_, err := io.WriteString(w, "bye")
			return err
		}
		_, err = io.WriteString(w, "origin")
		return err
	})
}

// revoked returns the tokens of the passes the origin ended that have not
// expired at t.
func (l *passLedger) revoked(t time.Time) []string {
	l.mu.Lock()
	defer l.mu.Unlock()
	var out []string
	for _, e := range l.passes {
		if !e.revokedAt.IsZero() && e.pass.ExpiresAt.After(t) {
			out = append(out, e.token)
		}
	}
	return out
}

// check fails the test if a revoked pass reached the origin again, or if at
// any moment more than limit sessions were valid.
func (l *passLedger) check(t *testing.T, limit int) {
	t.Helper()
	l.mu.Lock()
	defer l.mu.Unlock()
	if len(l.late) > 0 {
		t.Errorf("the origin was shown %d revoked passes again: %v", len(l.late), l.late)
	}
	type edge struct {
		at    time.Time
		delta int
	}
	var edges []edge
	for _, e := range l.passes {
		end := e.pass.ExpiresAt
		if !e.revokedAt.IsZero() && !e.lastSeen.After(e.revokedAt) {
			end = e.revokedAt
		}
		edges = append(edges, edge{e.firstSeen, 1}, edge{end, -1})
	}
	// Ends before starts at the same instant: a slot freed and taken in the
	// same second is not two sessions at once.
	slices.SortFunc(edges, func(a, b edge) int {
		if c := a.at.Compare(b.at); c != 0 {
			return c
		}
		return a.delta - b.delta
	})
	live, most := 0, 0
	for _, e := range edges {
		live += e.delta
		most = max(most, live)
	}
	if most > limit {
		t.Errorf("%d sessions were valid at once, cap %d", most, limit)
	}
	t.Logf("origin saw %d passes; at most %d valid at once (cap %d)", len(l.passes), most, limit)
}

// refusedEverywhere fails the test unless every node refuses each token.
func refusedEverywhere(t *testing.T, nodes []*node, tokens []string, when string) {
	t.Helper()
	for _, tok := range tokens {
		for i, n := range nodes {
			if _, err := n.room().CheckPass(tok); !errors.Is(err, waitingroom.ErrInvalidPass) {
				t.Fatalf("%s: node %d accepts a revoked pass (%v)", when, i, err)
			}
		}
	}
}

// ledgerNode is a node in front of l's origin, its requests passed through
// wrap (outermost last). A store down at start is allowed: the room starts in
// its failure mode.
func ledgerNode(t *testing.T, now func() time.Time, cfg gateway.Handler, store waitingroom.Store, key *waitingroom.SigningKey, l *passLedger, wrap ...func(http.Handler) http.Handler) *node {
	t.Helper()
	return newNodeServing(t, now, cfg, store, key, nil, l.origin(), true, wrap...)
}
