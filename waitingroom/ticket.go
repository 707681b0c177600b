package waitingroom

import (
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/binary"
	"hash"
	"time"
)

// Ticket is a visitor's place in a room. It lives in a signed, HttpOnly cookie, so
// that answering "where am I?" needs nothing from the store. Only gateways read
// tickets; they are authenticated with a secret derived from the signing key.
type Ticket struct {
	Room    string
	Visitor VisitorID
	// Key is the order key handed out at join. Before a fair draw it is the
	// registration index; the draw maps it to a place.
	Key uint64
	// Joined is when the visitor joined; Seen is when the ticket was last renewed.
	Joined, Seen time.Time
	// FirstAhead and LastAhead are the first and the latest number of people
	// ahead that this visitor was shown (plus one; 0 = never shown). LastAhead is
	// what keeps a position from ever rising; FirstAhead drives the progress bar.
	FirstAhead, LastAhead uint64
	// Place is where a draw put the visitor (Placed), kept here so that the
	// permutation is computed once per visitor, not on every poll. A
	// first-come place is the key itself and is never kept.
	Place  uint64
	Placed bool
	// Claimed is set once the visitor was given a session. A claimed ticket cannot
	// be used again once that session ends: the holder joins afresh.
	Claimed bool
}

// VisitorID identifies a visitor: 128 random bits.
type VisitorID [16]byte

// NewVisitorID returns a random visitor ID.
func NewVisitorID() VisitorID {
	var v VisitorID
	if _, err := rand.Read(v[:]); err != nil {
		panic(err) // crypto/rand never fails on supported platforms
	}
	return v
}

// NewIncarnation returns a random name for a new creation of a room.
func NewIncarnation() string {
	var b [8]byte
	if _, err := rand.Read(b[:]); err != nil {
		panic(err) // crypto/rand never fails on supported platforms
	}
	return base64.RawURLEncoding.EncodeToString(b[:])
}

// String is the URL-safe form used in passes ("sub") and the store.
func (v VisitorID) String() string { return base64.RawURLEncoding.EncodeToString(v[:]) }

const (
	ticketVersion = 1
	ticketMACSize = 16 // 128-bit tag: forging one is out of reach
	// MaxTicketSize bounds a cookie value we are willing to decode.
	MaxTicketSize = 256
	flagClaimed   = 1 << 0
	flagPlaced    = 1 << 1
)

var ticketEncoding = base64.RawURLEncoding

// SealTicket encodes and authenticates a ticket as a cookie value.
func (k *SigningKey) SealTicket(t Ticket) string {
	return string(k.AppendSealedTicket(make([]byte, 0, 128), t))
}

// AppendSealedTicket appends the sealed ticket, as SealTicket gives it, to
// dst. A join seals one for every newcomer: built in a pooled buffer and
// encoded straight into the caller's, the cookie line costs one string.
func (k *SigningKey) AppendSealedTicket(dst []byte, t Ticket) []byte {
	m := k.ticketMACState()
	buf := m.scratch[:0]
	buf = append(buf, ticketVersion)
	var flags byte
	if t.Claimed {
		flags |= flagClaimed
	}
	if t.Placed {
		flags |= flagPlaced
	}
	buf = append(buf, flags)
	buf = append(buf, t.Visitor[:]...)
	buf = binary.AppendUvarint(buf, t.Key)
	buf = binary.AppendUvarint(buf, uint64(t.Joined.Unix()))
	buf = binary.AppendUvarint(buf, uint64(t.Seen.Unix()))
	buf = binary.AppendUvarint(buf, t.FirstAhead)
	buf = binary.AppendUvarint(buf, t.LastAhead)
	buf = binary.AppendUvarint(buf, t.Place)
	buf = append(buf, byte(len(t.Room)))
	buf = append(buf, t.Room...)
	m.h.Reset()
	m.h.Write(buf)
	buf = m.h.Sum(buf)[:len(buf)+ticketMACSize]
	dst = ticketEncoding.AppendEncode(dst, buf)
	m.scratch = buf[:0]
	k.macs.Put(m)
	return dst
}

// ticketMACState is a keyed HMAC state with room to build a payload in.
// They are pooled: every status poll opens and seals a ticket, and keying a
// fresh HMAC costs as much as the MAC itself.
type ticketMACState struct {
	h       hash.Hash
	scratch []byte // a payload and its full tag fit: see ticketScratch
}

// ticketScratch holds the largest payload (a room name of 255 bytes) and a
// whole SHA-256 sum appended to it.
const ticketScratch = 2 + 16 + 6*binary.MaxVarintLen64 + 1 + 255 + sha256.Size

func (k *SigningKey) ticketMACState() *ticketMACState {
	if m, ok := k.macs.Get().(*ticketMACState); ok {
		return m
	}
	return &ticketMACState{h: hmac.New(sha256.New, k.ticketKey), scratch: make([]byte, 0, ticketScratch)}
}

// ticketMAC appends the payload's tag to out.
func (k *SigningKey) ticketMAC(payload, out []byte) []byte {
	m := k.ticketMACState()
	m.h.Reset()
	m.h.Write(payload)
	out = m.h.Sum(out)[:len(out)+ticketMACSize]
	k.macs.Put(m)
	return out
}

// OpenTicket authenticates and decodes a cookie value. It checks the room and that
// the ticket was seen within lifetime of now.
func (k *SigningKey) OpenTicket(value, room string, now time.Time, lifetime time.Duration) (Ticket, error) {
	t, _, err := openTicket(value, room, now, lifetime, k, nil)
	return t, err
}

// openTicket authenticates value with first, then with each of others, and
// decodes it once one of them vouches for it; current says first did.
func openTicket(value, room string, now time.Time, lifetime time.Duration, first *SigningKey, others []*SigningKey) (t Ticket, current bool, err error) {
	if len(value) == 0 || len(value) > MaxTicketSize {
		return Ticket{}, false, ErrInvalidTicket
	}
	raw, err := ticketEncoding.DecodeString(value)
	if err != nil || len(raw) < 2+16+ticketMACSize {
		return Ticket{}, false, ErrInvalidTicket
	}
	payload, mac := raw[:len(raw)-ticketMACSize], raw[len(raw)-ticketMACSize:]
	var sum [sha256.Size]byte
	ok := hmac.Equal(mac, first.ticketMAC(payload, sum[:0]))
	current = ok
	for i := 0; !ok && i < len(others); i++ {
		ok = hmac.Equal(mac, others[i].ticketMAC(payload, sum[:0]))
	}
	if !ok {
		return Ticket{}, false, ErrInvalidTicket
	}
	t, ok = decodeTicket(payload, room)
	if !ok {
		return Ticket{}, false, ErrInvalidTicket
	}
	if now.Sub(t.Seen) > lifetime {
		return Ticket{}, false, ErrInvalidTicket
	}
	return t, current, nil
}

// decodeTicket decodes an authenticated payload, and refuses it unless it is
// room's. The ticket shares room's string rather than copying its own: every
// poll opens one.
func decodeTicket(p []byte, room string) (Ticket, bool) {
	var t Ticket
	if p[0] != ticketVersion {
		return t, false
	}
	t.Claimed = p[1]&flagClaimed != 0
	t.Placed = p[1]&flagPlaced != 0
	copy(t.Visitor[:], p[2:18])
	p = p[18:]
	var fields [6]uint64
	for i := range fields {
		v, n := binary.Uvarint(p)
		if n <= 0 {
			return t, false
		}
		fields[i], p = v, p[n:]
	}
	if len(p) < 1 || len(p) != 1+int(p[0]) {
		return t, false
	}
	const maxUnix = 1 << 40 // far beyond any real date; keeps time.Unix sane
	if fields[1] > maxUnix || fields[2] > maxUnix {
		return t, false
	}
	t.Key = fields[0]
	t.Joined = time.Unix(int64(fields[1]), 0)
	t.Seen = time.Unix(int64(fields[2]), 0)
	t.FirstAhead, t.LastAhead, t.Place = fields[3], fields[4], fields[5]
	if string(p[1:]) != room {
		return t, false
	}
	t.Room = room
	return t, true
}

// MustReseal reports whether a visitor whose cookie held was must be sent
// their ticket t again. A poll that changed nothing but when the ticket was
// last seen need not re-seal it and set the cookie again: the cookie holds
// what it held, and a status poll that writes no Set-Cookie costs the node
// less (docs/benchmarks.md, "Numbers"). It must when anything else changed (the position
// shown, the draw's place, the claim), when was was sealed with a previous
// signing key, or when was was last renewed a twelfth of the ticket lifetime
// ago, so that a fan who keeps polling never sees their ticket lapse.
func (r *Room) MustReseal(was TicketCookie, t Ticket) bool {
	if !was.current || t.Room == "" {
		return true
	}
	if r.now().Sub(was.Seen) >= ticketRenewal(r.settings().TicketLifetime) {
		return true
	}
	return was.Room != t.Room || was.Visitor != t.Visitor || was.Key != t.Key ||
		was.Joined.Unix() != t.Joined.Unix() ||
		was.FirstAhead != t.FirstAhead || was.LastAhead != t.LastAhead ||
		was.Place != t.Place || was.Placed != t.Placed || was.Claimed != t.Claimed
}

// ticketRenewal is how often a polling fan's ticket is renewed at least, for
// the lifetime given.
func ticketRenewal(lifetime time.Duration) time.Duration { return lifetime / 12 }

// VisitorFromBytes returns the visitor ID held in b (16 bytes), as stores
// keep it.
func VisitorFromBytes(b []byte) (VisitorID, bool) {
	var v VisitorID
	if len(b) != len(v) {
		return v, false
	}
	copy(v[:], b)
	return v, true
}

// ParseVisitorID reads the URL-safe form of a visitor ID (VisitorID.String).
func ParseVisitorID(s string) (VisitorID, bool) {
	b, err := base64.RawURLEncoding.DecodeString(s)
	if err != nil {
		return VisitorID{}, false
	}
	return VisitorFromBytes(b)
}
