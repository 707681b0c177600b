package main

import (
	"testing"
	"time"

	"github.com/foyer-dev/foyer/rehearsal"
)

// The rehearsal's flags and their defaults are what make rehearsal
// produces the figures of docs/rehearsal.md with: they must not drift.
func TestRehearsalFlags(t *testing.T) {
	c, _, err := rehearsalFlags(nil)
	if err != nil {
		t.Fatal(err)
	}
	want := rehearsal.Config{
		Fans: 100_000, Seats: 10_000, Arrival: time.Minute, MaxTime: 15 * time.Minute,
		Think: time.Second, Grace: 30 * time.Second, Jitter: 0.2, Abandon: 0.03, Late: 0.01,
		Workers: 256, Seed: 1, RefundShare: 0.05,
		Stack: rehearsal.StackConfig{
			Store: "memory", // the binaries are found once the flags are read: see findBinary
			Rate:  6000, Cap: 1000, Session: 10 * time.Minute, HoldTTL: 5 * time.Minute,
		},
	}
	if c != want {
		t.Fatalf("defaults\n%+v\nwant\n%+v", c, want)
	}
	c, prof, err := rehearsalFlags([]string{"-cpuprofile", "cpu.out", "-fans", "2000", "-seats", "400", "-standing", "50", "-store", "redis", "-grace", "5s", "-seed", "9", "-report", "out.html"})
	if err != nil || c.Report != "out.html" || c.Fans != 2000 || c.Seats != 400 || c.Standing != 50 || c.Stack.Store != "redis" || c.Grace != 5*time.Second || c.Seed != 9 || prof != "cpu.out" {
		t.Fatalf("%+v, %v", c, err)
	}
	c, _, err = rehearsalFlags([]string{"-compare-requeue", "-fail-checkouts", "0.05", "-fans", "20000", "-seats", "2000"})
	if err != nil || !c.CompareRequeue || c.FailCheckouts != 0.05 || c.Fans != 20000 || c.Seats != 2000 {
		t.Fatalf("the requeue scenario's flags: %+v, %v", c, err)
	}
	c, _, err = rehearsalFlags([]string{"-calibration", "-fans", "6000", "-seats", "2000"})
	if err != nil || !c.Calibration || c.Fans != 6000 || c.Seats != 2000 {
		t.Fatalf("the calibration scenario's flags: %+v, %v", c, err)
	}
	c, _, err = rehearsalFlags([]string{"-refunds", "-refund-share", "0.1", "-fans", "3000", "-seats", "1000"})
	if err != nil || !c.Refunds || c.RefundShare != 0.1 || c.Fans != 3000 || c.Seats != 1000 || c.Validate() != nil {
		t.Fatalf("the refund scenario's flags: %+v, %v", c, err)
	}
	for _, bad := range [][]string{{"-refunds", "-refund-share", "0"}, {"-refunds", "-refund-share", "1.5"}, {"-refunds", "-calibration"}} {
		c, _, err := rehearsalFlags(bad)
		if err != nil || c.Validate() == nil {
			t.Fatalf("%v was accepted", bad)
		}
	}
	// The calibration is a scenario of its own.
	c.CompareRequeue = true
	if err := c.Validate(); err == nil {
		t.Fatal("-calibration with -compare-requeue was accepted")
	}
	if _, _, err := rehearsalFlags([]string{"extra"}); err == nil {
		t.Fatal("a stray argument was accepted")
	}
}
