package bench

import (
	"context"
	"fmt"
	"math"
	"sort"
	"strings"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/foyer-dev/foyer/internal/redisserver"
)

// commandCount is what one run cost Redis, net of the background.
type commandCount struct {
	ops            int
	elapsed        time.Duration
	sent, executed float64
	byName         map[string]int64 // net calls per command
	background     int64            // calls in the idle interval
}

func (c commandCount) perOp(v float64) float64 { return v / float64(c.ops) }

// figure prints a per-operation count to two decimals; the background's
// jitter, a step more or less in the idle interval, can leave a trace below
// that either way, which is not a minus sign's worth.
func figure(v float64) string {
	if math.Abs(v) < 0.005 {
		v = 0
	}
	return fmt.Sprintf("%5.2f", v)
}

// detail lists the net calls per command, the largest first.
func (c commandCount) detail() string {
	names := make([]string, 0, len(c.byName))
	for name, d := range c.byName {
		if d != 0 {
			names = append(names, name)
		}
	}
	sort.Slice(names, func(i, j int) bool { return c.byName[names[i]] > c.byName[names[j]] })
	var b strings.Builder
	for i, name := range names {
		if i > 0 {
			b.WriteString(", ")
		}
		fmt.Fprintf(&b, "%s %+d", name, c.byName[name])
	}
	if b.Len() == 0 {
		return "no commands beyond the background"
	}
	return b.String()
}

// countCommands runs fn, then stays idle as long, and returns the commands of
// the run less those of the idle interval. INFO, our own measuring, is left
// out; so is the connection handshake of a client, which is per connection.
func countCommands(admin *redis.Client, fn func() (int, error)) (commandCount, error) {
	ctx := context.Background()
	before, err := redisserver.CommandCalls(ctx, admin)
	if err != nil {
		return commandCount{}, err
	}
	start := time.Now()
	ops, err := fn()
	elapsed := time.Since(start)
	if err != nil {
		return commandCount{}, err
	}
	if ops == 0 {
		return commandCount{}, fmt.Errorf("no request completed")
	}
	busy, err := redisserver.CommandCalls(ctx, admin)
	if err != nil {
		return commandCount{}, err
	}
	time.Sleep(elapsed)
	idle, err := redisserver.CommandCalls(ctx, admin)
	if err != nil {
		return commandCount{}, err
	}
	c := commandCount{ops: ops, elapsed: elapsed, byName: make(map[string]int64)}
	for name := range idle {
		if name == "info" || name == "hello" || strings.HasPrefix(name, "client|") {
			continue
		}
		d := (busy[name] - before[name]) - (idle[name] - busy[name])
		c.byName[name] = d
		c.background += idle[name] - busy[name]
		c.executed += float64(d)
		if isSent(name) {
			c.sent += float64(d)
		}
	}
	return c, nil
}

// isSent tells the commands a client sends from those a script runs inside
// Redis. On these paths the gateway sends nothing but scripts; a command it
// sent plainly would still show, under executed.
func isSent(name string) bool {
	switch name {
	case "evalsha", "eval", "evalsha_ro", "eval_ro", "script|load":
		return true
	}
	return false
}
