package rehearsal

import (
	"slices"
	"strings"
	"testing"
	"time"
)

func TestBookingDBArgs(t *testing.T) {
	const url = "postgres://127.0.0.1:5432/fresh"
	for _, tc := range []struct {
		name string
		c    StackConfig
		want []string
	}{
		{"memory store: no database flags, pool sizes or not", StackConfig{DBMaxConns: 8, DBBackgroundConns: 4}, nil},
		{"PostgreSQL with the service's own pools", StackConfig{DatabaseURL: url}, []string{"-database-url", url}},
		{"both pools sized", StackConfig{DatabaseURL: url, DBMaxConns: 24, DBBackgroundConns: 6},
			[]string{"-database-url", url, "-db-max-conns", "24", "-db-background-conns", "6"}},
		{"the background pool alone", StackConfig{DatabaseURL: url, DBBackgroundConns: 3},
			[]string{"-database-url", url, "-db-background-conns", "3"}},
	} {
		if got := bookingDBArgs(tc.c); !slices.Equal(got, tc.want) {
			t.Errorf("%s: got %q, want %q", tc.name, got, tc.want)
		}
	}
}

func TestPoolSizesOutOfRangeAreRefused(t *testing.T) {
	base := Config{Fans: 10, Seats: 10, Workers: 1, MaxTime: time.Minute}
	if err := base.Validate(); err != nil {
		t.Fatalf("the base config is refused: %v", err)
	}
	for _, tc := range []struct {
		set  func(*Config)
		flag string
	}{
		{func(c *Config) { c.Stack.DBMaxConns = -1 }, "-db-max-conns"},
		{func(c *Config) { c.Stack.DBMaxConns = 1001 }, "-db-max-conns"},
		{func(c *Config) { c.Stack.DBBackgroundConns = -1 }, "-db-background-conns"},
		{func(c *Config) { c.Stack.DBBackgroundConns = 1001 }, "-db-background-conns"},
		{func(c *Config) { c.FailCheckouts = 1.5 }, "-fail-checkouts"},
		{func(c *Config) { c.FailCheckouts = -0.1 }, "-fail-checkouts"},
		{func(c *Config) { c.CompareRequeue, c.CompareLiveness = true, true }, "-compare-requeue"},
	} {
		c := base
		tc.set(&c)
		if err := c.Validate(); err == nil || !strings.Contains(err.Error(), tc.flag) {
			t.Errorf("%+v: got %v, want an error naming %s", c.Stack, err, tc.flag)
		}
	}
}

// TestBookingFaultArgs: the booking service gets its rehearsal faults only
// when the scenario asks for them.
func TestBookingFaultArgs(t *testing.T) {
	for _, tc := range []struct {
		name string
		c    StackConfig
		want []string
	}{
		{"none", StackConfig{}, nil},
		{"failed payments", StackConfig{FailPayments: 0.02, FailAttempts: 6},
			[]string{"-fault-fail-payments", "0.02", "-fault-fail-attempts", "6"}},
		{"and no retry", StackConfig{FailPayments: 0.02, FailAttempts: 6, NoRetry: true},
			[]string{"-fault-fail-payments", "0.02", "-fault-fail-attempts", "6", "-fault-no-retry"}},
	} {
		if got := bookingFaultArgs(tc.c); !slices.Equal(got, tc.want) {
			t.Errorf("%s: got %q, want %q", tc.name, got, tc.want)
		}
	}
}
