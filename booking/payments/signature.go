package payments

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"
)

// SignatureHeader carries a webhook's signature.
const SignatureHeader = "Webhook-Signature"

// DefaultTolerance is how old a signed timestamp may be, or how far in the
// future, before the webhook is refused as a possible replay.
const DefaultTolerance = 300 * time.Second

// Signature errors. Both mean "answer 400 and do nothing".
var (
	ErrBadSignature   = errors.New("webhook signature does not match")
	ErrStaleSignature = errors.New("webhook timestamp is outside the tolerance")
)

// Sign returns the signature header value for body sent at t: the timestamp
// is signed with the body so a captured webhook cannot be replayed later.
func Sign(secret []byte, t time.Time, body []byte) string {
	ts := strconv.FormatInt(t.Unix(), 10)
	return "t=" + ts + ",v1=" + mac(secret, ts, body)
}

func mac(secret []byte, ts string, body []byte) string {
	m := hmac.New(sha256.New, secret)
	m.Write([]byte(ts))
	m.Write([]byte("."))
	m.Write(body)
	return hex.EncodeToString(m.Sum(nil))
}

// Verify checks a signature header against body at now. Any v1 entry may
// match, which lets a provider sign with an old and a new secret while
// rotating.
func Verify(secret []byte, header string, body []byte, now time.Time, tolerance time.Duration) error {
	var ts string
	var sigs []string
	for part := range strings.SplitSeq(header, ",") {
		k, v, ok := strings.Cut(strings.TrimSpace(part), "=")
		if !ok {
			continue
		}
		switch k {
		case "t":
			ts = v
		case "v1":
			sigs = append(sigs, v)
		}
	}
	if ts == "" || len(sigs) == 0 {
		return fmt.Errorf("%w: header must be t=<unix>,v1=<hex>", ErrBadSignature)
	}
	unix, err := strconv.ParseInt(ts, 10, 64)
	if err != nil {
		return fmt.Errorf("%w: bad timestamp", ErrBadSignature)
	}
	want := mac(secret, ts, body)
	matched := false
	for _, s := range sigs {
		if hmac.Equal([]byte(s), []byte(want)) {
			matched = true
		}
	}
	if !matched {
		return ErrBadSignature
	}
	if age := now.Sub(time.Unix(unix, 0)); age > tolerance || age < -tolerance {
		return fmt.Errorf("%w: signed %s ago", ErrStaleSignature, age.Round(time.Second))
	}
	return nil
}
