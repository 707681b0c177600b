//go:build linux

package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/foyer-dev/foyer/booking"
	"github.com/foyer-dev/foyer/waitingroom"
)

// The fault tests run the booking service as a real child process, so that
// kill -9 loses exactly what a crash loses: everything in memory, nothing
// committed.

var (
	buildOnce   sync.Once
	buildDir    string
	builtBinary string
	buildErr    error
)

func TestMain(m *testing.M) {
	code := m.Run()
	if buildDir != "" {
		os.RemoveAll(buildDir)
	}
	os.Exit(code)
}

// bookingBinary builds cmd/booking once per test run.
func bookingBinary(t *testing.T) string {
	t.Helper()
	buildOnce.Do(func() {
		var err error
		if buildDir, err = os.MkdirTemp("", "booking-fault-"); err != nil {
			buildErr = err
			return
		}
		builtBinary = filepath.Join(buildDir, "booking")
		out, err := exec.Command("go", "build", "-o", builtBinary, ".").CombinedOutput()
		if err != nil {
			buildErr = fmt.Errorf("go build: %v: %s", err, out)
		}
	})
	if buildErr != nil {
		t.Fatal(buildErr)
	}
	return builtBinary
}

// lockedBuffer collects a child's log for the test's failure output.
type lockedBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *lockedBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *lockedBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}

// proc is one booking service process, restartable on the same port.
type proc struct {
	t    *testing.T
	bin  string
	args []string
	base string // http://127.0.0.1:port
	cmd  *exec.Cmd
	done chan struct{}
	log  *lockedBuffer
	key  *waitingroom.SigningKey
}

const (
	faultRoom       = "onsale"
	faultAdminToken = "fault-admin"
)

// startBooking starts the service on a free loopback port with the flags
// given after the ones every fault test needs, and passes signed by a key
// whose JWKS is a file, so the test's customers keep their identity across
// restarts of the service.
func startBooking(t *testing.T, databaseURL, redisURL string, extra ...string) *proc {
	t.Helper()
	key, err := waitingroom.GenerateSigningKey()
	if err != nil {
		t.Fatal(err)
	}
	jwks, _ := json.Marshal(waitingroom.JWKS{Keys: []waitingroom.JWK{key.JWK()}})
	jwksPath := filepath.Join(t.TempDir(), "jwks.json")
	if err := os.WriteFile(jwksPath, jwks, 0o600); err != nil {
		t.Fatal(err)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close()
	args := append([]string{
		"-addr", addr, "-database-url", databaseURL, "-redis-url", redisURL,
		"-jwks", jwksPath, "-room", faultRoom, "-admin-token", faultAdminToken,
		"-public-url", "http://" + addr,
		"-webhook-secret", "whsec-fault", "-ticket-secret", "tickets-fault",
	}, extra...)
	p := &proc{t: t, bin: bookingBinary(t), args: args, base: "http://" + addr, log: &lockedBuffer{}, key: key}
	t.Cleanup(func() {
		p.kill()
		if t.Failed() {
			t.Logf("booking service log:\n%s", tail(p.log.String(), 60))
		}
	})
	p.start()
	return p
}

func tail(s string, lines int) string {
	parts := strings.Split(s, "\n")
	return strings.Join(parts[max(0, len(parts)-lines):], "\n")
}

// start runs the process and waits, with a deadline, until it answers.
func (p *proc) start() time.Duration {
	p.t.Helper()
	began := time.Now()
	p.cmd = exec.Command(p.bin, p.args...)
	p.cmd.Stdout, p.cmd.Stderr = p.log, p.log
	// The kernel kills the child if the test binary dies first.
	p.cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
	if err := p.cmd.Start(); err != nil {
		p.t.Fatal(err)
	}
	p.done = make(chan struct{})
	go func(cmd *exec.Cmd, done chan struct{}) { _ = cmd.Wait(); close(done) }(p.cmd, p.done)
	deadline := time.Now().Add(15 * time.Second)
	for time.Now().Before(deadline) {
		resp, err := http.Get(p.base + "/healthz")
		if err == nil {
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				return time.Since(began)
			}
		}
		select {
		case <-p.done:
			p.t.Fatalf("booking service exited at start:\n%s", tail(p.log.String(), 30))
		case <-time.After(50 * time.Millisecond):
		}
	}
	p.t.Fatalf("booking service not ready within 15 s:\n%s", tail(p.log.String(), 30))
	return 0
}

// kill sends SIGKILL and waits until the process is gone.
func (p *proc) kill() {
	if p.cmd == nil {
		return
	}
	_ = p.cmd.Process.Kill()
	select {
	case <-p.done:
	case <-time.After(10 * time.Second):
		p.t.Errorf("booking service pid %d survived kill -9", p.cmd.Process.Pid)
	}
	p.cmd = nil
}

// reply is one HTTP answer; err is set when there was none (the process was
// down or died mid-request).
type reply struct {
	status int
	header http.Header
	body   []byte
	err    error
}

var noRedirects = &http.Client{
	Timeout:       10 * time.Second,
	CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse },
}

// call sends a request as customer (no pass when customer is "").
func (p *proc) call(method, path, customer string, body any, header ...string) reply {
	var rd io.Reader
	switch b := body.(type) {
	case nil:
	case string:
		rd = strings.NewReader(b)
	default:
		js, _ := json.Marshal(b)
		rd = bytes.NewReader(js)
	}
	url := path
	if strings.HasPrefix(path, "/") {
		url = p.base + path
	}
	req, err := http.NewRequest(method, url, rd)
	if err != nil {
		return reply{err: err}
	}
	if customer != "" {
		now := time.Now()
		tok, err := p.key.IssuePass(waitingroom.Pass{Room: faultRoom, Subject: customer, IssuedAt: now, ExpiresAt: now.Add(time.Hour)}, waitingroom.DefaultIssuer)
		if err != nil {
			return reply{err: err}
		}
		req.Header.Set(booking.PassHeader, tok)
	}
	for i := 0; i+1 < len(header); i += 2 {
		req.Header.Set(header[i], header[i+1])
	}
	resp, err := noRedirects.Do(req)
	if err != nil {
		return reply{err: err}
	}
	defer resp.Body.Close()
	data, err := io.ReadAll(resp.Body)
	return reply{status: resp.StatusCode, header: resp.Header, body: data, err: err}
}

// createEvent creates a one-section venue of seats and returns its id.
func (p *proc) createEvent(rows, perRow int) int64 {
	p.t.Helper()
	r := p.call("POST", "/api/admin/events", "", map[string]any{
		"name": "Fault night", "starts_at": time.Now().Add(30 * 24 * time.Hour).UTC().Format(time.RFC3339),
		"sections": []map[string]any{{"id": "A", "rows": rows, "seats_per_row": perRow, "price": "50.00"}},
	}, "Authorization", "Bearer "+faultAdminToken)
	if r.err != nil || r.status != http.StatusCreated {
		p.t.Fatalf("creating the event: %d %v %s", r.status, r.err, r.body)
	}
	var ev struct {
		ID int64 `json:"id"`
	}
	_ = json.Unmarshal(r.body, &ev)
	return ev.ID
}

// invariants asks the service's own checker, over HTTP.
func (p *proc) invariants() (ok bool, violations []string) {
	p.t.Helper()
	r := p.call("GET", "/api/admin/invariants", "", nil, "Authorization", "Bearer "+faultAdminToken)
	if r.err != nil || r.status != http.StatusOK {
		p.t.Fatalf("invariants: %d %v %s", r.status, r.err, r.body)
	}
	var rep struct {
		OK         bool     `json:"ok"`
		Violations []string `json:"violations"`
	}
	if err := json.Unmarshal(r.body, &rep); err != nil {
		p.t.Fatalf("invariants: %v: %s", err, r.body)
	}
	return rep.OK && len(rep.Violations) == 0, rep.Violations
}

// ledgerState reads, straight from the database, what the provider and the
// shop each hold, for the end-of-test invariants.
type ledgerState struct {
	providerSucceeded map[string]string // order id -> provider payment id
	orders            map[string]string // order id -> status
	undelivered       map[string]int    // paid order id -> tickets without a delivery
	ticketsPerOrder   map[string]int
	doubleSold        int // seats with more than one ticket
}

func readLedgerState(t *testing.T, pool *pgxpool.Pool) ledgerState {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	st := ledgerState{providerSucceeded: map[string]string{}, orders: map[string]string{}, undelivered: map[string]int{}, ticketsPerOrder: map[string]int{}}
	rows, err := pool.Query(ctx, `SELECT body->'metadata'->>'order_id', id FROM fakepay_payments WHERE body->>'status' = 'succeeded'`)
	if err != nil {
		t.Fatal(err)
	}
	for rows.Next() {
		var o, id string
		if err := rows.Scan(&o, &id); err != nil {
			t.Fatal(err)
		}
		st.providerSucceeded[o] = id
	}
	rows, err = pool.Query(ctx, `SELECT id, status FROM orders`)
	if err != nil {
		t.Fatal(err)
	}
	for rows.Next() {
		var id, s string
		if err := rows.Scan(&id, &s); err != nil {
			t.Fatal(err)
		}
		st.orders[id] = s
	}
	rows, err = pool.Query(ctx, `
		SELECT t.order_id, count(*), count(*) FILTER (WHERE d.ticket_id IS NULL)
		FROM tickets t LEFT JOIN deliveries d ON d.ticket_id = t.id GROUP BY t.order_id`)
	if err != nil {
		t.Fatal(err)
	}
	for rows.Next() {
		var id string
		var n, missing int
		if err := rows.Scan(&id, &n, &missing); err != nil {
			t.Fatal(err)
		}
		st.ticketsPerOrder[id] = n
		if missing > 0 {
			st.undelivered[id] = missing
		}
	}
	if err := pool.QueryRow(ctx, `
		SELECT count(*) FROM (SELECT event_id, seat_id FROM tickets WHERE seat_id IS NOT NULL
		GROUP BY event_id, seat_id HAVING count(*) > 1) d`).Scan(&st.doubleSold); err != nil {
		t.Fatal(err)
	}
	return st
}

// settled reports what still keeps the state from the end invariants: a
// payment the provider took whose order is not paid with every ticket
// delivered, or an order left pending.
func (st ledgerState) problems() []string {
	var out []string
	for o, pay := range st.providerSucceeded {
		if st.orders[o] != "paid" {
			out = append(out, fmt.Sprintf("order %s is %q but payment %s succeeded", o, st.orders[o], pay))
		} else if st.ticketsPerOrder[o] == 0 || st.undelivered[o] > 0 {
			out = append(out, fmt.Sprintf("paid order %s has %d tickets, %d undelivered", o, st.ticketsPerOrder[o], st.undelivered[o]))
		}
	}
	for o, s := range st.orders {
		switch s {
		case "pending_payment":
			out = append(out, fmt.Sprintf("order %s still pending_payment", o))
		case "paid":
			if _, ok := st.providerSucceeded[o]; !ok {
				out = append(out, fmt.Sprintf("order %s is paid but the provider holds no succeeded payment", o))
			}
		}
	}
	if st.doubleSold > 0 {
		out = append(out, fmt.Sprintf("%d seats sold twice", st.doubleSold))
	}
	return out
}
