package rehearsal

import (
	"encoding/base64"
	"strings"
	"testing"
	"time"

	"github.com/foyer-dev/foyer/waitingroom"
)

func TestDecodePassReadsARealPass(t *testing.T) {
	key, err := waitingroom.GenerateSigningKey()
	if err != nil {
		t.Fatal(err)
	}
	now := time.Now()
	tok, err := key.IssuePass(waitingroom.Pass{ID: "p1", Room: "rehearsal", Subject: "fan-7", OrderKey: 4242, IssuedAt: now, ExpiresAt: now.Add(time.Minute)}, "foyer")
	if err != nil {
		t.Fatal(err)
	}
	c, err := decodePass(tok)
	if err != nil {
		t.Fatal(err)
	}
	if c.OrderKey != 4242 || c.Subject != "fan-7" || c.ID != "p1" || c.Audience != "rehearsal" {
		t.Fatalf("decoded %+v", c)
	}
}

func TestDecodePassRefusesWhatItCannotRead(t *testing.T) {
	seg := func(s string) string { return base64.RawURLEncoding.EncodeToString([]byte(s)) }
	head := seg(`{"alg":"EdDSA"}`)
	for name, tok := range map[string]string{
		"two parts":       head + "." + seg(`{"order_key":1}`),
		"not base64":      head + ".!!!.sig",
		"not JSON":        head + "." + seg(`order_key=1`) + ".sig",
		"no order key":    head + "." + seg(`{"sub":"a","aud":"r"}`) + ".sig",
		"two audiences":   head + "." + seg(`{"order_key":1,"aud":["a","b"]}`) + ".sig",
		"negative key":    head + "." + seg(`{"order_key":-1}`) + ".sig",
		"far too long":    strings.Repeat("a", maxPassSize+1),
		"empty":           "",
		"audience number": head + "." + seg(`{"order_key":1,"aud":7}`) + ".sig",
	} {
		if c, err := decodePass(tok); err == nil {
			t.Errorf("%s: decoded %+v, want an error", name, c)
		}
	}
	// "aud" as an array of one is as good as a string.
	c, err := decodePass(head + "." + seg(`{"order_key":0,"aud":["r"]}`) + ".sig")
	if err != nil || c.Audience != "r" || c.OrderKey != 0 {
		t.Fatalf("one-element audience: %+v, %v", c, err)
	}
}
