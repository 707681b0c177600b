package pgtest

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"net/url"
	"os"
	"testing"
	"time"

	"github.com/foyer-dev/foyer/internal/cutproxy"
	"github.com/jackc/pgx/v5"
)

// DefaultURL is the integration server: the machine's PostgreSQL on loopback
// with trust authentication. FOYER_TEST_DATABASE_URL overrides it.
const DefaultURL = "postgres://postgres@127.0.0.1:5432/test?sslmode=disable"

// BaseURL is the server the tests use.
func BaseURL() string {
	if u := os.Getenv("FOYER_TEST_DATABASE_URL"); u != "" {
		return u
	}
	return DefaultURL
}

// NewDatabase creates an empty database and returns its URL. Outside CI it
// skips the test, loudly, when the server is not there; with CI=true it fails.
func NewDatabase(t testing.TB) string {
	t.Helper()
	return NewDatabaseAt(t, BaseURL())
}

// NewDatabaseAt is NewDatabase on another server (a test's private cluster or
// proxy). The returned URL keeps base's host and port.
func NewDatabaseAt(t testing.TB, base string) string {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	conn, err := pgx.Connect(ctx, base)
	if err != nil {
		Unavailable(t, "PostgreSQL at "+redact(base), err)
	}
	defer conn.Close(ctx)
	var b [6]byte
	_, _ = rand.Read(b[:])
	name := "foyer_test_" + hex.EncodeToString(b[:])
	if _, err := conn.Exec(ctx, "CREATE DATABASE "+name); err != nil {
		t.Fatalf("creating test database: %v", err)
	}
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		conn, err := pgx.Connect(ctx, base)
		if err != nil {
			t.Logf("dropping test database %s: %v", name, err)
			return
		}
		defer conn.Close(ctx)
		if _, err := conn.Exec(ctx, "DROP DATABASE IF EXISTS "+name+" WITH (FORCE)"); err != nil {
			t.Logf("dropping test database %s: %v", name, err)
		}
	})
	u, err := url.Parse(base)
	if err != nil {
		t.Fatalf("parsing %s: %v", redact(base), err)
	}
	u.Path = "/" + name
	return u.String()
}

// Unavailable fails the test under CI and skips it elsewhere, naming what is
// missing so a skipped integration test is never mistaken for a pass.
func Unavailable(t testing.TB, what string, err error) {
	t.Helper()
	if os.Getenv("CI") == "true" {
		t.Fatalf("%s is required under CI=true and is not reachable: %v", what, err)
	}
	t.Skipf("SKIPPED, integration test not run: %s is not reachable (%v; run scripts/services.sh, or set CI=true to make this a failure)", what, err)
}

func redact(raw string) string {
	u, err := url.Parse(raw)
	if err != nil {
		return "(unparsable URL)"
	}
	return u.Redacted()
}

// NewCuttableDatabase creates a fresh database, like NewDatabase, and returns
// a URL that reaches it through a proxy the test can cut, to play a database
// that goes away and comes back without touching the machine's shared server.
// Connections give up after 2 s while it is cut.
func NewCuttableDatabase(t testing.TB) (string, *cutproxy.Proxy) {
	t.Helper()
	u, err := url.Parse(NewDatabase(t))
	if err != nil {
		t.Fatal(err)
	}
	proxy := cutproxy.Start(t, u.Host)
	u.Host = proxy.Addr()
	q := u.Query()
	q.Set("connect_timeout", "2")
	u.RawQuery = q.Encode()
	return u.String(), proxy
}
