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
	// MaxConns bounds the connection pool of the fans' requests. Default: 8
	// per CPU, at least 16.
	MaxConns int32
	// BackgroundConns bounds the second pool, the one calls whose context
	// booking.Background marked use: workers, pruner, payment webhooks.
	// Default: a quarter of MaxConns, at least 2.
	BackgroundConns int32
	// Tracer, if set, sees every statement and batch the store sends; the
	// tests count round trips per operation with it.
	Tracer pgx.QueryTracer
}

// Store is a booking.Store on PostgreSQL.
type Store struct {
	pool       *pgxpool.Pool // the fans' requests
	background *pgxpool.Pool // work no fan waits on; see poolFor
	opts       Options
	events     sync.Map // int64 -> booking.Event; events never change once created
	shards     sync.Map // zoneKey -> []int, a zone's shard numbers
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
		// Enough connections per core to keep PostgreSQL busy while others
		// wait on the network or for a CPU, few enough that hundreds of
		// shoppers queue in the pool rather than thrash the server. With
		// background work in its own pool, 16 on 2 cores did better than 8
		// in the 100,000-fan rehearsal (docs/booking.md, "The booking service").
		cfg.MaxConns = int32(max(16, 8*runtime.GOMAXPROCS(0)))
	}
	// Every request's round trips and waits for a connection are told in
	// its Server-Timing header; a test's tracer sees every event as well.
	cfg.ConnConfig.Tracer = timingTracer{next: opts.Tracer}
	bgCfg := cfg.Copy()
	bgCfg.MaxConns = opts.BackgroundConns
	if bgCfg.MaxConns <= 0 {
		bgCfg.MaxConns = max(2, cfg.MaxConns/4)
	}
	bgCfg.MinConns = min(bgCfg.MinConns, bgCfg.MaxConns)
	pool, err := pgxpool.NewWithConfig(ctx, cfg)
	if err != nil {
		return nil, fmt.Errorf("connecting to PostgreSQL: %w", err)
	}
	background, err := pgxpool.NewWithConfig(ctx, bgCfg)
	if err != nil {
		pool.Close()
		return nil, fmt.Errorf("connecting to PostgreSQL: %w", err)
	}
	if err := Migrate(ctx, pool); err != nil {
		pool.Close()
		background.Close()
		return nil, err
	}
	return &Store{pool: pool, background: background, opts: opts}, nil
}

// Close closes both pools.
func (s *Store) Close() {
	s.pool.Close()
	s.background.Close()
}

// Pool is the fans' requests' connection pool, for tests, the benchmark and
// the process's metrics.
func (s *Store) Pool() *pgxpool.Pool { return s.pool }

// BackgroundPool is the pool of background work (see poolFor).
func (s *Store) BackgroundPool() *pgxpool.Pool { return s.background }

// poolFor is the pool a call with ctx draws its connection from. Work no
// fan waits on (booking.Background: the workers, the pruner, the payment
// webhooks) has a small pool of its own. Sharing one pool, eight webhooks and
// four ticket deliveries at once could take every connection, and the fans'
// holds and checkouts then queued behind them; now such work queues only
// behind itself, and the fans' pool is theirs (docs/booking.md, "The booking service").
func (s *Store) poolFor(ctx context.Context) *pgxpool.Pool {
	if booking.IsBackground(ctx) {
		return s.background
	}
	return s.pool
}

// inTx runs fn in a transaction. A deadlock or serialization failure is retried
// once: both mean another transaction won a race and the same work may now
// succeed. fn must therefore build its results afresh on each call.
func (s *Store) inTx(ctx context.Context, fn func(pgx.Tx) error) error {
	var err error
	for attempt := 0; attempt < 2; attempt++ {
		err = pgx.BeginTxFunc(ctx, s.poolFor(ctx), pgx.TxOptions{}, fn)
		if !isContention(err) {
			break
		}
	}
	return classify(err)
}
