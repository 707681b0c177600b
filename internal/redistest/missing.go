package redistest

import (
	"fmt"
	"os"
	"testing"
)

// Missing skips a test that needs something the machine lacks, saying so
// loudly, except in CI (CI=true), where an integration test that cannot run is
// a failure.
func Missing(t testing.TB, format string, args ...any) {
	t.Helper()
	msg := fmt.Sprintf(format, args...)
	if os.Getenv("CI") == "true" {
		t.Fatalf("%s (CI=true: integration tests must run)", msg)
	}
	t.Skipf("SKIPPED, integration test not run: %s (set CI=true to make this a failure)", msg)
}
