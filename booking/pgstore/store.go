package pgstore

import (
	"context"
	"fmt"
	"runtime"
	"sync"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/foyer-dev/foyer/booking"
)

// Options tune the store.
type Options struct {
	// ZoneShards is how many counter rows a general-admission zone is split
	// over. More rows let more buyers of one zone commit at once. Default 8;
	// 1 puts a zone on a single hot row (the benchmark's baseline).
	ZoneShards int
	// MaxConns bounds the connection pool. Default: 4 per CPU, at least 8.
	MaxConns int32
	// Tracer, if set, sees every statement and batch the store sends; the
	// tests count round trips per operation with it.
	Tracer pgx.QueryTracer
}

// Store is a booking.Store on PostgreSQL.
type Store struct {
	pool   *pgxpool.Pool
	opts   Options
	events sync.Map // int64 -> booking.Event; events never change once created
	shards sync.Map // zoneKey -> []int, a zone's shard numbers
}

var _ booking.Store = (*Store)(nil)

// Open connects, applies the embedded migrations and returns the store.
func Open(ctx context.Context, databaseURL string, opts Options) (*Store, error) {
	if opts.ZoneShards <= 0 {
		opts.ZoneShards = 8
	}
	cfg, err := pgxpool.ParseConfig(databaseURL)
	if err != nil {
		return nil, fmt.Errorf("parsing database url: %w", err)
	}
	if opts.MaxConns > 0 {
		cfg.MaxConns = opts.MaxConns
	} else {
		// A few connections per core: enough to keep PostgreSQL busy while
		// others wait on the network, few enough that hundreds of shoppers
		// queue in the pool rather than thrash the server.
		cfg.MaxConns = int32(max(8, 4*runtime.GOMAXPROCS(0)))
	}
	// Every request's round trips and waits for a connection are told in
	// its Server-Timing header; a test's tracer sees every event as well.
	cfg.ConnConfig.Tracer = timingTracer{next: opts.Tracer}
	pool, err := pgxpool.NewWithConfig(ctx, cfg)
	if err != nil {
		return nil, fmt.Errorf("connecting to PostgreSQL: %w", err)
	}
	if err := Migrate(ctx, pool); err != nil {
		pool.Close()
		return nil, err
	}
	return &Store{pool: pool, opts: opts}, nil
}

// Close closes the pool.
func (s *Store) Close() { s.pool.Close() }

// Pool exposes the connection pool to tests and the benchmark.
func (s *Store) Pool() *pgxpool.Pool { return s.pool }

// inTx runs fn in a transaction. A deadlock or serialization failure is retried
// once: both mean another transaction won a race and the same work may now
// succeed. fn must therefore build its results afresh on each call.
func (s *Store) inTx(ctx context.Context, fn func(pgx.Tx) error) error {
	var err error
	for attempt := 0; attempt < 2; attempt++ {
		err = pgx.BeginTxFunc(ctx, s.pool, pgx.TxOptions{}, fn)
		if !isContention(err) {
			break
		}
	}
	return classify(err)
}
