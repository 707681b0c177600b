package main

import (
	"io"
	"strings"
	"testing"
	"time"
)

func TestParseConfig(t *testing.T) {
	env := func(kv ...string) func(string) string {
		m := map[string]string{}
		for i := 0; i+1 < len(kv); i += 2 {
			m[kv[i]] = kv[i+1]
		}
		return func(k string) string { return m[k] }
	}
	c, err := parseConfig([]string{"-dev-passes", "-seed-demo"}, env(), io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	if c.addr != ":9000" || c.databaseURL != "" || c.holdTTL != 5*time.Minute || c.maxPerCustomer != 4 || !c.seedDemo || !c.devPasses ||
		c.publicURL != "http://localhost:9000" || c.webhookURL != "http://127.0.0.1:9000/api/payments/webhook" || c.payCopies != 1 ||
		c.room != "dev" || c.issuer != "foyer" || c.dbMaxConns != 0 || c.dbBgConns != 0 ||
		c.faultFailPayments != 0 || c.faultFailAttempts != 1 || c.faultNoRetry {
		t.Fatalf("defaults = %+v", c)
	}
	c, err = parseConfig([]string{"-addr", ":9100", "-hold-ttl", "2m"}, env(
		"BOOKING_ADDR", ":1", "DATABASE_URL", "postgres://db/booking", "REDIS_URL", "redis://r:6379/0",
		"BOOKING_JWKS", "http://gw/_waiting-room/jwks.json", "BOOKING_ADMIN_TOKEN", "tok", "BOOKING_HOLD_TTL", "9m",
		"BOOKING_ROOM", "onsale", "BOOKING_PUBLIC_URL", "https://tickets.example/", "BOOKING_SEED_DEMO", "true",
		"BOOKING_FAKE_PAY_COPIES", "3", "BOOKING_FAKE_PAY_OUT_OF_ORDER", "1",
		"BOOKING_ISSUER", "gw-eu", "BOOKING_DB_MAX_CONNS", "32", "BOOKING_DB_BACKGROUND_CONNS", "5",
		"BOOKING_FAULT_FAIL_PAYMENTS", "0.02", "BOOKING_FAULT_FAIL_ATTEMPTS", "6", "BOOKING_FAULT_NO_RETRY", "true",
	), io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	if c.addr != ":9100" || c.holdTTL != 2*time.Minute || c.databaseURL != "postgres://db/booking" || c.redisURL != "redis://r:6379/0" ||
		c.jwks != "http://gw/_waiting-room/jwks.json" || c.adminToken != "tok" || c.room != "onsale" ||
		c.publicURL != "https://tickets.example" || !c.seedDemo || c.payCopies != 3 || !c.payOutOfOrder ||
		c.issuer != "gw-eu" || c.dbMaxConns != 32 || c.dbBgConns != 5 ||
		c.faultFailPayments != 0.02 || c.faultFailAttempts != 6 || !c.faultNoRetry {
		t.Fatalf("flags over environment = %+v", c)
	}
	bad := []struct {
		args []string
		env  func(string) string
		want string
	}{
		{nil, env(), "-jwks"},
		{[]string{"-jwks", "http://gw/jwks.json"}, env(), "-room"},
		{[]string{"-dev-passes", "-issuer", ""}, env(), "-issuer"},
		{[]string{"-dev-passes", "-db-max-conns", "-1"}, env(), "db-max-conns"},
		{[]string{"-dev-passes", "-ops-addr", "9001"}, env(), "ops-addr"},
		{[]string{"-dev-passes"}, env("BOOKING_DB_MAX_CONNS", "lots"), "db-max-conns"},
		{[]string{"-dev-passes", "-db-background-conns", "-2"}, env(), "db-background-conns"},
		{[]string{"-jwks", "x", "-dev-passes"}, env(), "exclude"},
		{[]string{"-dev-passes", "-hold-ttl", "1s"}, env(), "hold-ttl"},
		{[]string{"-dev-passes"}, env("BOOKING_HOLD_TTL", "forever"), "hold-ttl"},
		{[]string{"-dev-passes", "-max-per-customer", "0"}, env(), "max-per-customer"},
		{[]string{"-dev-passes", "-addr", "nonsense"}, env(), "addr"},
		{[]string{"-dev-passes", "extra"}, env(), "unexpected"},
		{[]string{"-dev-passes", "-fault-fail-payments", "1.5"}, env(), "fault-fail-payments"},
		{[]string{"-dev-passes", "-fault-fail-payments", "NaN"}, env(), "fault-fail-payments"},
		{[]string{"-dev-passes"}, env("BOOKING_FAULT_FAIL_PAYMENTS", "-0.1"), "fault-fail-payments"},
		{[]string{"-dev-passes", "-fault-fail-attempts", "0"}, env(), "fault-fail-attempts"},
		{nil, env("BOOKING_DEV_PASSES", "maybe"), "BOOKING_DEV_PASSES"},
	}
	for _, b := range bad {
		if _, err := parseConfig(b.args, b.env, io.Discard); err == nil || !strings.Contains(err.Error(), b.want) {
			t.Errorf("parseConfig(%v) error = %v, want one mentioning %q", b.args, err, b.want)
		}
	}
}

func TestParseReconcileAfter(t *testing.T) {
	noEnv := func(string) string { return "" }
	c, err := parseConfig([]string{"-dev-passes"}, noEnv, io.Discard)
	if err != nil || c.reconcileAfter != time.Minute {
		t.Fatalf("default -reconcile-after = %s, %v; want 1m", c.reconcileAfter, err)
	}
	c, err = parseConfig([]string{"-dev-passes"}, func(k string) string {
		return map[string]string{"BOOKING_RECONCILE_AFTER": "30s"}[k]
	}, io.Discard)
	if err != nil || c.reconcileAfter != 30*time.Second {
		t.Fatalf("BOOKING_RECONCILE_AFTER=30s = %s, %v", c.reconcileAfter, err)
	}
	for _, bad := range []string{"0s", "500ms", "48h", "soon"} {
		if _, err := parseConfig([]string{"-dev-passes", "-reconcile-after", bad}, noEnv, io.Discard); err == nil || !strings.Contains(err.Error(), "reconcile-after") {
			t.Errorf("-reconcile-after %s: error = %v", bad, err)
		}
	}
}
