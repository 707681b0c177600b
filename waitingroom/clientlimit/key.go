package clientlimit

import (
	"encoding/binary"
	"net/netip"
)

// Key is the group of addresses that shares one allowance: one IPv4 address,
// or one IPv6 /64.
type Key struct{ hi, lo uint64 }

// v4Mark sets IPv4 keys apart from IPv6 ones: an IPv6 key's lo is always 0.
const v4Mark = 1 << 32

// KeyOf groups an address: IPv4 (also written IPv4-mapped, ::ffff:a.b.c.d)
// stands alone; IPv6 counts by its /64, since a subscriber is commonly given
// a whole /64 and could otherwise take a new address for every request. An
// invalid address gets the key of ::/64, which all such share.
func KeyOf(a netip.Addr) Key {
	a = a.Unmap()
	if a.Is4() {
		b := a.As4()
		return Key{lo: v4Mark | uint64(binary.BigEndian.Uint32(b[:]))}
	}
	if !a.IsValid() {
		return Key{}
	}
	b := a.As16()
	return Key{hi: binary.BigEndian.Uint64(b[:8])}
}

// String writes the key as the address or /64 prefix it stands for.
func (k Key) String() string {
	if k.lo&v4Mark != 0 {
		var b [4]byte
		binary.BigEndian.PutUint32(b[:], uint32(k.lo))
		return netip.AddrFrom4(b).String()
	}
	var b [16]byte
	binary.BigEndian.PutUint64(b[:8], k.hi)
	return netip.PrefixFrom(netip.AddrFrom16(b), 64).String()
}
