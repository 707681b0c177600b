package redisstore

import (
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
)

func TestNewClient(t *testing.T) {
	for _, tc := range []struct {
		url   string
		check func(t *testing.T, c redis.UniversalClient)
	}{
		{"redis://127.0.0.1:6380/2", func(t *testing.T, c redis.UniversalClient) {
			o := c.(*redis.Client).Options()
			if o.Addr != "127.0.0.1:6380" || o.DB != 2 || o.TLSConfig != nil {
				t.Errorf("addr %s db %d tls %v", o.Addr, o.DB, o.TLSConfig != nil)
			}
		}},
		{"rediss://user:pw@localhost:6380?dial_timeout=2s", func(t *testing.T, c redis.UniversalClient) {
			o := c.(*redis.Client).Options()
			if o.TLSConfig == nil || o.Username != "user" || o.Password != "pw" || o.DialTimeout != 2*time.Second {
				t.Errorf("tls %v user %q password %q dial timeout %v", o.TLSConfig != nil, o.Username, o.Password, o.DialTimeout)
			}
		}},
		{"redis+cluster://127.0.0.1:7000,127.0.0.1:7001,127.0.0.1:7002?pool_size=7", func(t *testing.T, c redis.UniversalClient) {
			o := c.(*redis.ClusterClient).Options()
			want := []string{"127.0.0.1:7000", "127.0.0.1:7001", "127.0.0.1:7002"}
			if !slices.Equal(o.Addrs, want) || o.PoolSize != 7 || o.TLSConfig != nil {
				t.Errorf("addrs %v pool %d tls %v", o.Addrs, o.PoolSize, o.TLSConfig != nil)
			}
		}},
		{"redis+cluster://127.0.0.1:7000?addr=127.0.0.1:7001", func(t *testing.T, c redis.UniversalClient) {
			o := c.(*redis.ClusterClient).Options()
			if want := []string{"127.0.0.1:7000", "127.0.0.1:7001"}; !slices.Equal(o.Addrs, want) {
				t.Errorf("addrs %v, want %v", o.Addrs, want)
			}
		}},
		{"rediss+cluster://:secret@[::1]:7000,[::1]:7001", func(t *testing.T, c redis.UniversalClient) {
			o := c.(*redis.ClusterClient).Options()
			if want := []string{"[::1]:7000", "[::1]:7001"}; !slices.Equal(o.Addrs, want) || o.Password != "secret" || o.TLSConfig == nil {
				t.Errorf("addrs %v password %q tls %v", o.Addrs, o.Password, o.TLSConfig != nil)
			}
		}},
		{"redis+sentinel://127.0.0.1:26379,127.0.0.1:26380/1?master_name=main", func(t *testing.T, c redis.UniversalClient) {
			if _, ok := c.(*redis.Client); !ok {
				t.Errorf("got %T, want a Sentinel-backed *redis.Client", c)
			}
		}},
	} {
		t.Run(tc.url, func(t *testing.T) {
			c, err := NewClient(tc.url)
			if err != nil {
				t.Fatal(err)
			}
			defer c.Close()
			tc.check(t, c)
		})
	}
}

func TestNewClientRejects(t *testing.T) {
	for _, raw := range []string{
		"",
		"127.0.0.1:6379",
		"http://127.0.0.1:6379",
		"redis+ring://a:1,b:2",
		"redis+cluster://a:1,,b:2",
		"redis+sentinel://a:26379",
		"redis://127.0.0.1:6379?no_such_option=1",
		"redis://user:hunter2@127.0.0.1:notaport",
		"redis+cluster://user:hunter2@a:1,b:2?pool_size=many",
	} {
		c, err := NewClient(raw)
		if err == nil {
			c.Close()
			t.Errorf("%q: accepted", raw)
			continue
		}
		if strings.Contains(err.Error(), "hunter2") {
			t.Errorf("%q: the error shows the password: %v", raw, err)
		}
	}
}

func TestNewClientFailsFast(t *testing.T) {
	c, err := NewClient("redis://127.0.0.1:6379")
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	o := c.(*redis.Client).Options()
	if o.DialTimeout != time.Second || o.ReadTimeout != time.Second || o.WriteTimeout != time.Second || o.DialerRetries != 1 {
		t.Fatalf("defaults: dial %v read %v write %v retries %d, want 1s, 1s, 1s, 1", o.DialTimeout, o.ReadTimeout, o.WriteTimeout, o.DialerRetries)
	}
	c2, err := NewClient("redis://127.0.0.1:6379?dial_timeout=3s&read_timeout=2s")
	if err != nil {
		t.Fatal(err)
	}
	defer c2.Close()
	if o := c2.(*redis.Client).Options(); o.DialTimeout != 3*time.Second || o.ReadTimeout != 2*time.Second {
		t.Fatalf("the URL's own timeouts were overridden: dial %v read %v", o.DialTimeout, o.ReadTimeout)
	}
}
