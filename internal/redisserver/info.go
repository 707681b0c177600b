package redisserver

import (
	"bufio"
	"context"
	"strconv"
	"strings"

	"github.com/redis/go-redis/v9"
)

// Info reads one section of INFO as a map of its fields.
func Info(ctx context.Context, c *redis.Client, section string) (map[string]string, error) {
	text, err := c.Info(ctx, section).Result()
	if err != nil {
		return nil, err
	}
	m := make(map[string]string)
	sc := bufio.NewScanner(strings.NewReader(text))
	for sc.Scan() {
		k, v, ok := strings.Cut(strings.TrimSpace(sc.Text()), ":")
		if ok && !strings.HasPrefix(k, "#") {
			m[k] = v
		}
	}
	return m, nil
}

// CommandCalls reads INFO commandstats: the calls of each command since the
// server started, by lower-case name. Commands run by scripts count too, under
// their own names, beside the EVALSHA that ran them.
func CommandCalls(ctx context.Context, c *redis.Client) (map[string]int64, error) {
	stats, err := Info(ctx, c, "commandstats")
	if err != nil {
		return nil, err
	}
	calls := make(map[string]int64)
	for k, v := range stats {
		name, ok := strings.CutPrefix(k, "cmdstat_")
		if !ok {
			continue
		}
		for f := range strings.SplitSeq(v, ",") {
			if n, ok := strings.CutPrefix(f, "calls="); ok {
				calls[name], _ = strconv.ParseInt(n, 10, 64)
			}
		}
	}
	return calls, nil
}
