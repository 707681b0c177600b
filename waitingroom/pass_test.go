package waitingroom

import "testing"

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
