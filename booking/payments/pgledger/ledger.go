package pgledger

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/foyer-dev/foyer/booking/payments"
)

// schemaLock serializes schema creation when several processes start at once:
// concurrent CREATE TABLE IF NOT EXISTS may otherwise collide.
const schemaLock = 0x66616b65706179 // "fakepay"

const schema = `
CREATE TABLE IF NOT EXISTS fakepay_payments (
    id   text  PRIMARY KEY,
    body jsonb NOT NULL
);
CREATE TABLE IF NOT EXISTS fakepay_idempotency (
    key  text  PRIMARY KEY,
    body jsonb NOT NULL
);
CREATE TABLE IF NOT EXISTS fakepay_deliveries (
    id       text        PRIMARY KEY,
    seq      bigserial   NOT NULL,
    event_id text        NOT NULL,
    body     bytea       NOT NULL,
    due      timestamptz NOT NULL,
    attempts int         NOT NULL DEFAULT 0
);
CREATE INDEX IF NOT EXISTS fakepay_deliveries_due ON fakepay_deliveries (due, seq);
`

// Ledger is a payments.Ledger in PostgreSQL.
type Ledger struct {
	pool *pgxpool.Pool
	// background, when set, serves the calls whose context isBackground
	// accepts (see WithBackground).
	background   *pgxpool.Pool
	isBackground func(context.Context) bool
}

var _ payments.Ledger = (*Ledger)(nil)

// Open creates the ledger's tables if they are missing and returns the ledger.
// The pool stays the caller's to close.
func Open(ctx context.Context, pool *pgxpool.Pool) (*Ledger, error) {
	err := pgx.BeginFunc(ctx, pool, func(tx pgx.Tx) error {
		if _, err := tx.Exec(ctx, `SELECT pg_advisory_xact_lock($1)`, int64(schemaLock)); err != nil {
			return err
		}
		_, err := tx.Exec(ctx, schema)
		return err
	})
	if err != nil {
		return nil, fmt.Errorf("creating the fake provider's tables: %w", err)
	}
	return &Ledger{pool: pool}, nil
}

// WithBackground returns the ledger drawing its connections from background
// for the calls whose context isBackground accepts, and from the pool Open
// was given for the others. The booking service shares its database with the
// ledger, and its store keeps a second, small pool for the work no fan waits
// on; with this the provider's deliveries, and the refunds and look-ups the
// service's own background work asks for, queue in that pool too, while a
// fan's checkout creating a payment keeps the fans' pool.
func (l *Ledger) WithBackground(background *pgxpool.Pool, isBackground func(context.Context) bool) *Ledger {
	return &Ledger{pool: l.pool, background: background, isBackground: isBackground}
}

func (l *Ledger) poolFor(ctx context.Context) *pgxpool.Pool {
	if l.background != nil && l.isBackground(ctx) {
		return l.background
	}
	return l.pool
}

// Update runs fn in one transaction. Its writes wait and go with the next
// read, or before COMMIT: nothing in fn needs a write's answer, so a payment
// created costs one round trip for its reads and one for its writes instead
// of one for each statement. A write that fails still fails the Update.
func (l *Ledger) Update(ctx context.Context, fn func(payments.LedgerTx) error) error {
	return pgx.BeginFunc(ctx, l.poolFor(ctx), func(tx pgx.Tx) error {
		t := &ledgerTx{ctx: ctx, tx: tx}
		if err := fn(t); err != nil {
			return err
		}
		return t.flush(nil)
	})
}

// ledgerTx carries the context of its Update: LedgerTx methods are called
// only within it.
type ledgerTx struct {
	ctx     context.Context
	tx      pgx.Tx
	pending []pendingWrite
}

type pendingWrite struct {
	sql  string
	args []any
}

// flush sends the writes waiting, then the reads queued on b (if any), in
// one batch.
func (t *ledgerTx) flush(b *pgx.Batch) error {
	if len(t.pending) == 0 && b == nil {
		return nil
	}
	all := &pgx.Batch{}
	for _, w := range t.pending {
		all.Queue(w.sql, w.args...)
	}
	t.pending = t.pending[:0]
	if b != nil {
		all.QueuedQueries = append(all.QueuedQueries, b.QueuedQueries...)
	}
	return t.tx.SendBatch(t.ctx, all).Close()
}

func (t *ledgerTx) write(sql string, args ...any) error {
	t.pending = append(t.pending, pendingWrite{sql: sql, args: args})
	return nil
}

// readJSON reads one JSON body into v after the writes waiting.
func (t *ledgerTx) readJSON(sql, arg string, v any, before ...string) (bool, error) {
	b := &pgx.Batch{}
	for _, stmt := range before {
		b.Queue(stmt, arg)
	}
	var body []byte
	found := true
	b.Queue(sql, arg).QueryRow(func(r pgx.Row) error {
		err := r.Scan(&body)
		if errors.Is(err, pgx.ErrNoRows) {
			found = false
			return nil
		}
		return err
	})
	if err := t.flush(b); err != nil {
		return false, err
	}
	if !found {
		return false, nil
	}
	return true, json.Unmarshal(body, v)
}

func (t *ledgerTx) Idempotent(key string) (payments.Record, bool, error) {
	// The lock makes a concurrent first use of the same key wait, then see
	// this transaction's record: the read is a statement of its own after
	// the lock (same round trip), so its snapshot is taken once the lock is
	// held.
	var r payments.Record
	ok, err := t.readJSON(`SELECT body FROM fakepay_idempotency WHERE key = $1`, key, &r,
		`SELECT pg_advisory_xact_lock(hashtextextended('fakepay:' || $1, 0))`)
	return r, ok, err
}

func (t *ledgerTx) SaveIdempotent(key string, r payments.Record) error {
	body, err := json.Marshal(r)
	if err != nil {
		return err
	}
	return t.write(`INSERT INTO fakepay_idempotency (key, body) VALUES ($1, $2)`, key, body)
}

func (t *ledgerTx) Payment(id string) (payments.Payment, bool, error) {
	var p payments.Payment
	ok, err := t.readJSON(`SELECT body FROM fakepay_payments WHERE id = $1 FOR UPDATE`, id, &p)
	return p, ok, err
}

func (t *ledgerTx) SavePayment(p payments.Payment) error {
	body, err := json.Marshal(p)
	if err != nil {
		return err
	}
	return t.write(`
		INSERT INTO fakepay_payments (id, body) VALUES ($1, $2)
		ON CONFLICT (id) DO UPDATE SET body = EXCLUDED.body`, p.ID, body)
}

func (t *ledgerTx) Enqueue(d payments.Delivery) error {
	return t.write(`
		INSERT INTO fakepay_deliveries (id, event_id, body, due, attempts) VALUES ($1, $2, $3, $4, $5)`,
		d.ID, d.EventID, d.Body, d.Due, d.Attempts)
}

// Payment reads one payment.
func (l *Ledger) Payment(ctx context.Context, id string) (payments.Payment, bool, error) {
	var p payments.Payment
	ok, err := readJSON(ctx, l.poolFor(ctx), `SELECT body FROM fakepay_payments WHERE id = $1`, id, &p)
	return p, ok, err
}

// Claim leases due deliveries. SKIP LOCKED lets two senders claim different
// deliveries at once instead of the same ones.
func (l *Ledger) Claim(ctx context.Context, now time.Time, lease time.Duration, limit int) ([]payments.Delivery, error) {
	rows, err := l.poolFor(ctx).Query(ctx, `
		WITH due AS (
			SELECT id FROM fakepay_deliveries WHERE due <= $1 ORDER BY due, seq LIMIT $3 FOR UPDATE SKIP LOCKED)
		UPDATE fakepay_deliveries d SET due = $2 FROM due WHERE d.id = due.id
		RETURNING d.id, d.seq, d.event_id, d.body, d.attempts`, now, now.Add(lease), limit)
	if err != nil {
		return nil, err
	}
	out, err := pgx.CollectRows(rows, func(r pgx.CollectableRow) (payments.Delivery, error) {
		var d payments.Delivery
		err := r.Scan(&d.ID, &d.Seq, &d.EventID, &d.Body, &d.Attempts)
		d.Due = now
		return d, err
	})
	if err != nil {
		return nil, err
	}
	slices.SortFunc(out, func(a, b payments.Delivery) int { return int(a.Seq - b.Seq) })
	return out, nil
}

// Acknowledge forgets an accepted delivery.
func (l *Ledger) Acknowledge(ctx context.Context, id string) error {
	_, err := l.poolFor(ctx).Exec(ctx, `DELETE FROM fakepay_deliveries WHERE id = $1`, id)
	return err
}

// Reschedule records a refused attempt.
func (l *Ledger) Reschedule(ctx context.Context, id string, due time.Time, attempts int) error {
	_, err := l.poolFor(ctx).Exec(ctx, `UPDATE fakepay_deliveries SET due = $2, attempts = $3 WHERE id = $1`, id, due, attempts)
	return err
}

// Pending counts unacknowledged deliveries.
func (l *Ledger) Pending(ctx context.Context) (int, error) {
	var n int
	err := l.poolFor(ctx).QueryRow(ctx, `SELECT count(*) FROM fakepay_deliveries`).Scan(&n)
	return n, err
}

type querier interface {
	QueryRow(ctx context.Context, sql string, args ...any) pgx.Row
}

func readJSON(ctx context.Context, q querier, sql, arg string, v any) (bool, error) {
	var body []byte
	err := q.QueryRow(ctx, sql, arg).Scan(&body)
	if errors.Is(err, pgx.ErrNoRows) {
		return false, nil
	}
	if err != nil {
		return false, err
	}
	return true, json.Unmarshal(body, v)
}
