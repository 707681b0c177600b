package pgstore

import (
	"context"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
)

// batchTx is a transaction whose BEGIN travels with its first batch and
// whose COMMIT travels with its last, as the hold's pipeline does
// (holdpipeline.go): a checkout or a payment's confirmation, which read once
// and then write, so costs two round trips where pgx.BeginTxFunc adds two
// more for BEGIN and COMMIT alone. Between its batches it is a querier on
// the transaction's connection.
type batchTx struct {
	conn  *pgxpool.Conn
	begun bool
}

// inBatchTx runs fn in a batchTx; fn ends it with commit. A contention
// failure (serialization, deadlock) is tried once more from the start, as
// inTx does. Whatever fn leaves uncommitted is rolled back.
func (s *Store) inBatchTx(ctx context.Context, fn func(*batchTx) error) error {
	var err error
	for attempt := 0; attempt < 2; attempt++ {
		err = s.batchTxOnce(ctx, fn)
		if !isContention(err) {
			break
		}
	}
	return classify(err)
}

func (s *Store) batchTxOnce(ctx context.Context, fn func(*batchTx) error) error {
	conn, err := s.poolFor(ctx).Acquire(ctx)
	if err != nil {
		return err
	}
	defer conn.Release()
	t := &batchTx{conn: conn}
	err = fn(t)
	if t.begun {
		// Begun and never committed: fn failed, or forgot to commit.
		rollback(conn)
	}
	return err
}

// SendBatch sends b, after BEGIN if the transaction has not begun.
func (t *batchTx) SendBatch(ctx context.Context, b *pgx.Batch) pgx.BatchResults {
	if !t.begun {
		t.begun = true
		b.QueuedQueries = append([]*pgx.QueuedQuery{{SQL: "BEGIN"}}, b.QueuedQueries...)
	}
	return t.conn.SendBatch(ctx, b)
}

func (t *batchTx) Query(ctx context.Context, sql string, args ...any) (pgx.Rows, error) {
	t.begin(ctx)
	return t.conn.Query(ctx, sql, args...)
}

func (t *batchTx) QueryRow(ctx context.Context, sql string, args ...any) pgx.Row {
	t.begin(ctx)
	return t.conn.QueryRow(ctx, sql, args...)
}

// begin is for the rare statement sent on its own before any batch.
func (t *batchTx) begin(ctx context.Context) {
	if !t.begun {
		_ = t.SendBatch(ctx, &pgx.Batch{}).Close()
	}
}

// commit sends b (which may be empty) and COMMIT with it. Once it has
// returned, the transaction is over, committed or not.
func (t *batchTx) commit(ctx context.Context, b *pgx.Batch) error {
	if b == nil {
		b = &pgx.Batch{}
	}
	if !t.begun && b.Len() == 0 {
		return nil
	}
	b.Queue("COMMIT")
	err := t.SendBatch(ctx, b).Close()
	if err == nil {
		t.begun = false
	}
	return err
}
