package waitingroom

import (
	"crypto/ed25519"
	"encoding/hex"
	"testing"
)

func TestSigningKeyPEM(t *testing.T) {
	k := testKey(t)
	pemData, err := k.MarshalPEM()
	if err != nil {
		t.Fatal(err)
	}
	back, err := ParseSigningKeyPEM(pemData)
	if err != nil {
		t.Fatal(err)
	}
	if back.KeyID() != k.KeyID() {
		t.Fatalf("kid changed across PEM: %s vs %s", back.KeyID(), k.KeyID())
	}
	if _, err := ParseSigningKeyPEM([]byte("-----BEGIN RSA PRIVATE KEY-----\nAAAA\n-----END RSA PRIVATE KEY-----\n")); err == nil {
		t.Fatal("an RSA PEM block was accepted")
	}
	if _, err := ParseSigningKeyPEM([]byte("nothing")); err == nil {
		t.Fatal("a file with no PEM block was accepted")
	}
}

// TestDerivedKeysStable pins the ticket and seed keys derived from a fixed
// signing key: they must never change across versions (see NewSigningKey),
// or every ticket in fans' cookies stops opening on an upgraded node.
func TestDerivedKeysStable(t *testing.T) {
	seed := make([]byte, ed25519.SeedSize)
	for i := range seed {
		seed[i] = byte(i)
	}
	k := NewSigningKey(ed25519.NewKeyFromSeed(seed))
	if got := hex.EncodeToString(k.ticketKey); got != "940b7263d368a50e69f44029dece5d8dcd930e6ea1eddaef895c31b3cea04ea6" {
		t.Errorf("ticket key %s changed", got)
	}
	if got := hex.EncodeToString(k.seedKey); got != "5c5b182d86d40fb143a783c56762d9a9c76d769a87622ad43fcb9653b34f8523" {
		t.Errorf("seed key %s changed", got)
	}
}
