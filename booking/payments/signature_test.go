package payments

import (
	"errors"
	"testing"
	"time"
)

func TestVerify(t *testing.T) {
	secret := []byte("whsec_test")
	body := []byte(`{"id":"evt_1"}`)
	now := time.Unix(1_800_000_000, 0)
	good := Sign(secret, now, body)
	cases := []struct {
		name   string
		header string
		body   []byte
		at     time.Time
		want   error
	}{
		{"valid", good, body, now, nil},
		{"valid at the tolerance", good, body, now.Add(DefaultTolerance), nil},
		{"stale", good, body, now.Add(DefaultTolerance + time.Second), ErrStaleSignature},
		{"from the future", good, body, now.Add(-DefaultTolerance - time.Second), ErrStaleSignature},
		{"tampered body", good, []byte(`{"id":"evt_2"}`), now, ErrBadSignature},
		{"wrong secret", Sign([]byte("other"), now, body), body, now, ErrBadSignature},
		{"forged timestamp", "t=1800000100," + good[len("t=1800000000,"):], body, now, ErrBadSignature},
		{"empty", "", body, now, ErrBadSignature},
		{"garbage", "hello", body, now, ErrBadSignature},
		{"no v1", "t=1800000000", body, now, ErrBadSignature},
		{"rotating secrets", good + ",v1=deadbeef", body, now, nil},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			err := Verify(secret, c.header, c.body, c.at, DefaultTolerance)
			if !errors.Is(err, c.want) || (c.want == nil && err != nil) {
				t.Fatalf("Verify = %v, want %v", err, c.want)
			}
		})
	}
}
