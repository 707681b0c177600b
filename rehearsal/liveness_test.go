package rehearsal

import (
	"strings"
	"testing"
	"time"
)

// TestBotsBounded: the bots a rehearsal sends are bounded like its fans.
func TestBotsBounded(t *testing.T) {
	c := Config{Fans: 10, Seats: 10, Workers: 1, MaxTime: time.Minute}
	for _, bots := range []int{-1, 10_000_001} {
		c.Bots = bots
		if err := c.Validate(); err == nil || !strings.Contains(err.Error(), "-bots") {
			t.Errorf("%d bots: %v, want an error naming -bots", bots, err)
		}
	}
	c.Bots = 5000
	if err := c.Validate(); err != nil {
		t.Errorf("5,000 bots: %v", err)
	}
}

// TestIdleLine: the room's waiting_idle_timeout is written only when set,
// in the Caddyfile's syntax.
func TestIdleLine(t *testing.T) {
	if got := idleLine(0); got != "" {
		t.Errorf("no timeout: %q, want no line", got)
	}
	if got := idleLine(time.Hour); got != "waiting_idle_timeout 1h0m0s" {
		t.Errorf("an hour: %q", got)
	}
}
