package clientlimit

import (
	"net/netip"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"golang.org/x/time/rate"
)

var t0 = time.Date(2026, 12, 1, 10, 0, 0, 0, time.UTC)

func TestKeyOfGroups(t *testing.T) {
	key := func(s string) Key { return KeyOf(netip.MustParseAddr(s)) }
	same := [][2]string{
		{"192.0.2.7", "::ffff:192.0.2.7"},
		{"2001:db8:1:2::1", "2001:db8:1:2:ffff:ffff:ffff:ffff"},
		{"2001:db8:1:2::1", "2001:db8:1:2:aaaa::%eth0"},
	}
	for _, p := range same {
		if key(p[0]) != key(p[1]) {
			t.Errorf("%s and %s have keys %v and %v, want one", p[0], p[1], key(p[0]), key(p[1]))
		}
	}
	differ := [][2]string{
		{"192.0.2.7", "192.0.2.8"},
		{"2001:db8:1:2::1", "2001:db8:1:3::1"},
		{"0.0.0.1", "::1"},
		{"0.0.0.0", "::"},
	}
	for _, p := range differ {
		if key(p[0]) == key(p[1]) {
			t.Errorf("%s and %s share the key %v", p[0], p[1], key(p[0]))
		}
	}
	if got := key("2001:db8:1:2:3:4:5:6").String(); got != "2001:db8:1:2::/64" {
		t.Errorf("key of an IPv6 address is %s, want its /64", got)
	}
	if got := key("::ffff:192.0.2.7").String(); got != "192.0.2.7" {
		t.Errorf("key of an IPv4-mapped address is %s, want the IPv4 address", got)
	}
	if KeyOf(netip.Addr{}) != key("::") {
		t.Error("an invalid address should share the key of ::/64")
	}
}

func TestAllowBurstThenRate(t *testing.T) {
	tab := New(1024)
	k := KeyOf(netip.MustParseAddr("192.0.2.1"))
	r := rate.Every(3 * time.Second) // 20/m
	for i := range 5 {
		if ok, _ := tab.Allow(k, t0, r, 5); !ok {
			t.Fatalf("call %d of a burst of 5 refused", i+1)
		}
	}
	ok, retry := tab.Allow(k, t0, r, 5)
	if ok || retry != 3*time.Second {
		t.Fatalf("sixth call: %v, retry %v; want refused, a token in 3s", ok, retry)
	}
	if ok, retry = tab.Allow(k, t0.Add(time.Second), r, 5); ok || retry != 2*time.Second {
		t.Fatalf("a second later: %v, retry %v; want refused, a token in 2s", ok, retry)
	}
	if ok, _ = tab.Allow(k, t0.Add(3*time.Second), r, 5); !ok {
		t.Fatal("refused once a token was due")
	}
	// Others are not held back by it.
	if ok, _ = tab.Allow(KeyOf(netip.MustParseAddr("192.0.2.2")), t0.Add(3*time.Second), r, 5); !ok {
		t.Fatal("another address refused")
	}
	// A stricter limit applies at once, with the tokens the address has.
	if ok, _ = tab.Allow(k, t0.Add(6*time.Second), rate.Every(time.Minute), 1); !ok {
		t.Fatal("the token earned before the change was lost")
	}
	if ok, retry = tab.Allow(k, t0.Add(7*time.Second), rate.Every(time.Minute), 1); ok || retry != time.Minute-time.Second {
		t.Fatalf("under the new limit: %v, retry %v; want refused, a token in 59s", ok, retry)
	}
}

// TestCapacityBound: however many addresses call, the table tracks at most
// its capacity, and an address that keeps calling is not the one forgotten
// (each shard keeps its own recency order, so "keeps calling" means before
// a shard's share of the capacity of others came); one forgotten comes back
// with a full bucket.
func TestCapacityBound(t *testing.T) {
	const capacity = 4096
	tab := New(capacity)
	r := rate.Every(time.Hour)
	abuser := KeyOf(netip.MustParseAddr("198.51.100.9"))
	if ok, _ := tab.Allow(abuser, t0, r, 1); !ok {
		t.Fatal("first call refused")
	}
	quiet := KeyOf(netip.MustParseAddr("198.51.100.10"))
	tab.Allow(quiet, t0, r, 1)
	for i := range 100_000 {
		var b [16]byte
		b[0], b[1], b[2], b[3] = 0x20, 0x01, byte(i>>16), byte(i>>8)
		b[4] = byte(i)
		tab.Allow(KeyOf(netip.AddrFrom16(b)), t0, r, 1)
		if i%100 == 0 {
			if ok, _ := tab.Allow(abuser, t0, r, 1); ok {
				t.Fatalf("the abuser was forgotten after %d other addresses", i)
			}
		}
		if n := tab.Len(); i%1000 == 0 && n > tab.Capacity() {
			t.Fatalf("%d addresses tracked, capacity %d", n, tab.Capacity())
		}
	}
	if tab.Capacity() != capacity || tab.Len() != capacity {
		t.Fatalf("len %d capacity %d, want both %d", tab.Len(), tab.Capacity(), capacity)
	}
	if ok, _ := tab.Allow(quiet, t0, r, 1); !ok {
		t.Fatal("a forgotten address did not come back with a full bucket")
	}
}

// TestAllowConcurrent: many goroutines calling for one address and for
// others at the same instant get exactly the burst each, never more.
func TestAllowConcurrent(t *testing.T) {
	tab := New(1 << 10)
	const addrs, callers, calls, burst = 8, 16, 200, 20
	var allowed [addrs]atomic.Int64
	var wg sync.WaitGroup
	for c := range callers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range calls {
				a := (c + i) % addrs
				if ok, _ := tab.Allow(KeyOf(netip.AddrFrom4([4]byte{10, 0, 0, byte(a)})), t0, rate.Every(time.Minute), burst); ok {
					allowed[a].Add(1)
				}
			}
		}()
	}
	wg.Wait()
	for a := range allowed {
		if n := allowed[a].Load(); n != burst {
			t.Errorf("address %d was allowed %d times, want %d", a, n, burst)
		}
	}
}
