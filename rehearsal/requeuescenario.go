package rehearsal

import (
	"context"
	"fmt"
)

// The scenario "an origin that fails 2% of checkouts" (docs/rehearsal.md):
// the booking service's fake provider fails a share of payments, each for
// more attempts than a fan's patience, and the sale is played twice, the
// service's retry suppressed and then sent.

// defaultFailCheckouts is the scenario's share of failed checkouts.
const defaultFailCheckouts = 0.02

// failAttempts is how many attempts of a payment the fault fails: one more
// than a fan tries a checkout in one session (a try and maxRetries more), so
// that a fan left in their session gives up, as against an outage that
// outlasts their patience, while a requeued fan, back with a new session
// and its patience renewed, gets through.
const failAttempts = maxRetries + 1

// compareRequeue plays the sale without the booking service's retry, then
// with it, and reports the second beside the first: the report is the run
// with retry, its fates table in two columns. Only the run with retry fails
// on a fan who ended behind their place; either fails on overselling.
func compareRequeue(ctx context.Context, c Config, release func(), report *reportFile) error {
	without := c
	without.Stack.NoRetry = true
	fmt.Println("=== without retry (the booking service's X-Waiting-Room-Command: retry suppressed)")
	wo, err := runOnce(ctx, without, nil, nil, nil)
	if err != nil || ctx.Err() != nil {
		return err
	}
	fmt.Println("\n=== with retry (the booking service asks the gateway to requeue the fans it failed)")
	_, err = runOnce(ctx, c, release, report, &wo)
	return err
}
