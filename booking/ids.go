package booking

import (
	"crypto/rand"
	"encoding/base32"
	"strings"
)

var idEncoding = base32.StdEncoding.WithPadding(base32.NoPadding)

// NewID returns a random, unguessable id with a readable prefix ("hold",
// "ord", "pay", "tkt"). Holds and orders are addressed by these ids in URLs, so
// they must not be enumerable.
func NewID(prefix string) string {
	var b [15]byte
	if _, err := rand.Read(b[:]); err != nil {
		panic(err) // crypto/rand never fails on supported platforms
	}
	return prefix + "_" + strings.ToLower(idEncoding.EncodeToString(b[:]))
}

// ValidID reports whether s could be an id NewID made with prefix. Handlers use
// it to answer 404 without a database round trip for garbage.
func ValidID(prefix, s string) bool {
	rest, ok := strings.CutPrefix(s, prefix+"_")
	if !ok || len(rest) != 24 {
		return false
	}
	for _, r := range rest {
		if !(r >= 'a' && r <= 'z' || r >= '2' && r <= '7') {
			return false
		}
	}
	return true
}
