package clientlimit

import (
	"net/netip"
	"runtime"
	"testing"
	"time"

	"golang.org/x/time/rate"
)

// heapInUse is the live heap after a collection.
func heapInUse() uint64 {
	runtime.GC()
	runtime.GC()
	var m runtime.MemStats
	runtime.ReadMemStats(&m)
	return m.HeapAlloc
}

func addrN(i int) netip.Addr {
	return netip.AddrFrom4([4]byte{10, byte(i >> 16), byte(i >> 8), byte(i)})
}

// BenchmarkMemoryPerClient measures the bytes a full table holds per tracked
// address, against the plain map of *rate.Limiter one would write first,
// filled with the same addresses in the same run.
func BenchmarkMemoryPerClient(b *testing.B) {
	const clients = 1 << 17
	r := rate.Every(3 * time.Second)
	var ours, naive float64
	for b.Loop() {
		m0 := heapInUse()
		tab := New(clients)
		for i := range clients {
			tab.Allow(KeyOf(addrN(i)), t0, r, 20)
		}
		m1 := heapInUse()
		ours += float64(m1-m0) / clients
		runtime.KeepAlive(tab)
		tab = nil

		m0 = heapInUse()
		plain := make(map[netip.Addr]*rate.Limiter)
		for i := range clients {
			l := rate.NewLimiter(r, 20)
			l.AllowN(t0, 1)
			plain[addrN(i)] = l
		}
		m1 = heapInUse()
		naive += float64(m1-m0) / clients
		runtime.KeepAlive(plain)
	}
	ours /= float64(b.N)
	naive /= float64(b.N)
	b.ReportMetric(ours, "B/client")
	b.ReportMetric(naive, "B/client-plain-map")
	b.ReportMetric(ours/naive, "x-plain-map")
}

// BenchmarkAllow is the cost of one decision for an address already
// tracked among many, which is what an abusive client costs per request,
// against a lone rate.Limiter with no table in front of it, the two run in
// alternating batches.
func BenchmarkAllow(b *testing.B) {
	r := rate.Every(3 * time.Second)
	tab := New(1 << 16)
	for i := range 1 << 16 {
		tab.Allow(KeyOf(addrN(i)), t0, r, 20)
	}
	k := KeyOf(addrN(12345))
	lim := rate.NewLimiter(r, 20)
	const batch = 1024
	var ours, alone time.Duration
	b.ResetTimer()
	for b.Loop() {
		start := time.Now()
		for range batch {
			tab.Allow(k, t0, r, 20)
		}
		mid := time.Now()
		for range batch {
			lim.AllowN(t0, 1)
		}
		ours += mid.Sub(start)
		alone += time.Since(mid)
	}
	b.ReportMetric(float64(ours)/float64(b.N*batch), "ns/decision")
	b.ReportMetric(float64(ours)/float64(alone), "x-bare-limiter")
}
