package servertiming

import (
	"context"
	"strconv"
	"sync"
	"time"
)

// Timing is one request's account. Its methods are safe for concurrent use:
// a request may query from more than one goroutine.
type Timing struct {
	start time.Time

	mu         sync.Mutex
	poolWait   time.Duration
	db         time.Duration
	roundTrips int
}

type timingKey struct{}

// Start returns ctx carrying a new Timing that counts from now.
func Start(ctx context.Context) (context.Context, *Timing) {
	t := &Timing{start: time.Now()}
	return context.WithValue(ctx, timingKey{}, t), t
}

// From returns the Timing ctx carries, or nil.
func From(ctx context.Context) *Timing {
	t, _ := ctx.Value(timingKey{}).(*Timing)
	return t
}

// AddPoolWait counts time spent waiting for a connection.
func (t *Timing) AddPoolWait(d time.Duration) {
	t.mu.Lock()
	t.poolWait += d
	t.mu.Unlock()
}

// AddRoundTrip counts one exchange with the database: a statement, or a
// batch of them sent together.
func (t *Timing) AddRoundTrip(d time.Duration) {
	t.mu.Lock()
	t.db += d
	t.roundTrips++
	t.mu.Unlock()
}

// Figures are what a Timing counted.
type Figures struct {
	PoolWait   time.Duration // waiting for a database connection
	DB         time.Duration // from sending to the database until its answer was read
	RoundTrips int
	Total      time.Duration // from Start until the response's header
}

// Figures reads the account at now.
func (t *Timing) Figures(now time.Time) Figures {
	t.mu.Lock()
	defer t.mu.Unlock()
	return Figures{PoolWait: t.poolWait, DB: t.db, RoundTrips: t.roundTrips, Total: now.Sub(t.start)}
}

// Header is the Server-Timing value of f, in milliseconds as the header
// wants: pool (waiting for a connection), db (in the database, with the
// round trips as its description) and total (the service's whole time).
func (f Figures) Header() string {
	b := make([]byte, 0, 96)
	b = append(b, "pool;dur="...)
	b = appendMillis(b, f.PoolWait)
	b = append(b, ", db;dur="...)
	b = appendMillis(b, f.DB)
	b = append(b, `;desc="`...)
	b = strconv.AppendInt(b, int64(f.RoundTrips), 10)
	b = append(b, ` round trips", total;dur=`...)
	b = appendMillis(b, f.Total)
	return string(b)
}

func appendMillis(b []byte, d time.Duration) []byte {
	return strconv.AppendFloat(b, float64(d.Microseconds())/1000, 'f', 3, 64)
}
