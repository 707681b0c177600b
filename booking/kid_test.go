package booking

import (
	"testing"
	"time"

	"github.com/foyer-dev/foyer/waitingroom"
)

// TestKidOf: the key id is read from a pass's header without verifying it,
// and anything that is not a JWT gives none.
func TestKidOf(t *testing.T) {
	k, err := waitingroom.GenerateSigningKey()
	if err != nil {
		t.Fatal(err)
	}
	tok, err := k.IssuePass(waitingroom.Pass{Room: "r", Subject: "s", IssuedAt: time.Now(), ExpiresAt: time.Now().Add(time.Minute)}, waitingroom.DefaultIssuer)
	if err != nil {
		t.Fatal(err)
	}
	if got := kidOf(tok); got != k.KeyID() {
		t.Errorf("kidOf(pass) = %q, want %q", got, k.KeyID())
	}
	for _, bad := range []string{"", "x", "a.b.c", "!!!.e30.", tok[:len(tok)/3]} {
		if got := kidOf(bad); got != "" {
			t.Errorf("kidOf(%q) = %q, want none", bad, got)
		}
	}
}
