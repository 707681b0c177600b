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

func (tt timingTracer) start(ctx context.Context) context.Context {
	if servertiming.From(ctx) == nil {
		return ctx
	}
	return context.WithValue(ctx, startedKey{}, time.Now())
}

func (tt timingTracer) end(ctx context.Context, add func(*servertiming.Timing, time.Duration)) {
	if t, ok := started(ctx); ok {
		if acct := servertiming.From(ctx); acct != nil {
			add(acct, time.Since(t))
		}
	}
}

func (tt timingTracer) TraceQueryStart(ctx context.Context, c *pgx.Conn, d pgx.TraceQueryStartData) context.Context {
	if tt.next != nil {
		ctx = tt.next.TraceQueryStart(ctx, c, d)
	}
	return tt.start(ctx)
}

func (tt timingTracer) TraceQueryEnd(ctx context.Context, c *pgx.Conn, d pgx.TraceQueryEndData) {
	tt.end(ctx, (*servertiming.Timing).AddRoundTrip)
	if tt.next != nil {
		tt.next.TraceQueryEnd(ctx, c, d)
	}
}

func (tt timingTracer) TraceBatchStart(ctx context.Context, c *pgx.Conn, d pgx.TraceBatchStartData) context.Context {
	if bt, ok := tt.next.(pgx.BatchTracer); ok {
		ctx = bt.TraceBatchStart(ctx, c, d)
	}
	return tt.start(ctx)
}

func (tt timingTracer) TraceBatchQuery(ctx context.Context, c *pgx.Conn, d pgx.TraceBatchQueryData) {
	if bt, ok := tt.next.(pgx.BatchTracer); ok {
		bt.TraceBatchQuery(ctx, c, d)
	}
}

func (tt timingTracer) TraceBatchEnd(ctx context.Context, c *pgx.Conn, d pgx.TraceBatchEndData) {
	tt.end(ctx, (*servertiming.Timing).AddRoundTrip)
	if bt, ok := tt.next.(pgx.BatchTracer); ok {
		bt.TraceBatchEnd(ctx, c, d)
	}
}

// A statement's first use on a connection prepares it: a round trip too.
func (tt timingTracer) TracePrepareStart(ctx context.Context, c *pgx.Conn, d pgx.TracePrepareStartData) context.Context {
	if pt, ok := tt.next.(pgx.PrepareTracer); ok {
		ctx = pt.TracePrepareStart(ctx, c, d)
	}
	return tt.start(ctx)
}

func (tt timingTracer) TracePrepareEnd(ctx context.Context, c *pgx.Conn, d pgx.TracePrepareEndData) {
	tt.end(ctx, (*servertiming.Timing).AddRoundTrip)
	if pt, ok := tt.next.(pgx.PrepareTracer); ok {
		pt.TracePrepareEnd(ctx, c, d)
	}
}

func (tt timingTracer) TraceAcquireStart(ctx context.Context, p *pgxpool.Pool, d pgxpool.TraceAcquireStartData) context.Context {
	if at, ok := tt.next.(pgxpool.AcquireTracer); ok {
		ctx = at.TraceAcquireStart(ctx, p, d)
	}
	return tt.start(ctx)
}

func (tt timingTracer) TraceAcquireEnd(ctx context.Context, p *pgxpool.Pool, d pgxpool.TraceAcquireEndData) {
	tt.end(ctx, (*servertiming.Timing).AddPoolWait)
	if at, ok := tt.next.(pgxpool.AcquireTracer); ok {
		at.TraceAcquireEnd(ctx, p, d)
	}
}
