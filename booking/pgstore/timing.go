package pgstore

import (
	"context"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/foyer-dev/foyer/internal/servertiming"
)

// timingTracer adds each round trip and each wait for a connection to the
// request's servertiming account, when its context carries one (the API's
// requests do; background loops do not, and cost nothing here). It passes
// every event on to next, the tracer Options gave, if any.
type timingTracer struct {
	next pgx.QueryTracer
}

type startedKey struct{}

func started(ctx context.Context) (time.Time, bool) {
	t, ok := ctx.Value(startedKey{}).(time.Time)
	return t, ok
}

// nestedKey marks an event inside another whose clock runs: pgx prepares a
// statement on its first use on a connection from within the query (or
// batch) that uses it, under the query's context, so the query's time holds
// the prepare's already. Counting both would count it twice, and a request's
// database time could exceed its whole time.
type nestedKey struct{}

func (tt timingTracer) start(ctx context.Context) context.Context {
	if servertiming.From(ctx) == nil {
		return ctx
	}
	if _, ok := started(ctx); ok {
		return context.WithValue(ctx, nestedKey{}, true)
	}
	return context.WithValue(ctx, startedKey{}, time.Now())
}

// end adds the time since start with add; a nested event adds its round
// trip with no time, which the event around it counts.
func (tt timingTracer) end(ctx context.Context, add func(*servertiming.Timing, time.Duration)) {
	if ctx.Value(nestedKey{}) != nil {
		if acct := servertiming.From(ctx); acct != nil {
			add(acct, 0)
		}
		return
	}
	if t, ok := started(ctx); ok {
		if acct := servertiming.From(ctx); acct != nil {
			add(acct, time.Since(t))
		}
	}
}

func (tt timingTracer) TraceQueryStart(ctx context.Context, c *pgx.Conn, d pgx.TraceQueryStartData) context.Context {
	return startAfter(tt, ctx, func(t pgx.QueryTracer) context.Context { return t.TraceQueryStart(ctx, c, d) })
}

func (tt timingTracer) TraceQueryEnd(ctx context.Context, c *pgx.Conn, d pgx.TraceQueryEndData) {
	endThen(tt, ctx, (*servertiming.Timing).AddRoundTrip, func(t pgx.QueryTracer) { t.TraceQueryEnd(ctx, c, d) })
}

func (tt timingTracer) TraceBatchStart(ctx context.Context, c *pgx.Conn, d pgx.TraceBatchStartData) context.Context {
	return startAfter(tt, ctx, func(t pgx.BatchTracer) context.Context { return t.TraceBatchStart(ctx, c, d) })
}

func (tt timingTracer) TraceBatchQuery(ctx context.Context, c *pgx.Conn, d pgx.TraceBatchQueryData) {
	if bt, ok := tt.next.(pgx.BatchTracer); ok {
		bt.TraceBatchQuery(ctx, c, d)
	}
}

func (tt timingTracer) TraceBatchEnd(ctx context.Context, c *pgx.Conn, d pgx.TraceBatchEndData) {
	endThen(tt, ctx, (*servertiming.Timing).AddRoundTrip, func(t pgx.BatchTracer) { t.TraceBatchEnd(ctx, c, d) })
}

// A statement's first use on a connection prepares it: a round trip too.
func (tt timingTracer) TracePrepareStart(ctx context.Context, c *pgx.Conn, d pgx.TracePrepareStartData) context.Context {
	return startAfter(tt, ctx, func(t pgx.PrepareTracer) context.Context { return t.TracePrepareStart(ctx, c, d) })
}

func (tt timingTracer) TracePrepareEnd(ctx context.Context, c *pgx.Conn, d pgx.TracePrepareEndData) {
	endThen(tt, ctx, (*servertiming.Timing).AddRoundTrip, func(t pgx.PrepareTracer) { t.TracePrepareEnd(ctx, c, d) })
}

func (tt timingTracer) TraceAcquireStart(ctx context.Context, p *pgxpool.Pool, d pgxpool.TraceAcquireStartData) context.Context {
	return startAfter(tt, ctx, func(t pgxpool.AcquireTracer) context.Context { return t.TraceAcquireStart(ctx, p, d) })
}

func (tt timingTracer) TraceAcquireEnd(ctx context.Context, p *pgxpool.Pool, d pgxpool.TraceAcquireEndData) {
	endThen(tt, ctx, (*servertiming.Timing).AddPoolWait, func(t pgxpool.AcquireTracer) { t.TraceAcquireEnd(ctx, p, d) })
}

// startAfter passes a start event on to next when next traces that kind of
// event too, then starts the clock on what it returned.
func startAfter[T any](tt timingTracer, ctx context.Context, pass func(T) context.Context) context.Context {
	if t, ok := tt.next.(T); ok {
		ctx = pass(t)
	}
	return tt.start(ctx)
}

// endThen stops the clock, adding the time with add, then passes the end
// event on to next when next traces that kind of event too.
func endThen[T any](tt timingTracer, ctx context.Context, add func(*servertiming.Timing, time.Duration), pass func(T)) {
	tt.end(ctx, add)
	if t, ok := tt.next.(T); ok {
		pass(t)
	}
}
