package waitingroom

import (
	"encoding/base64"
	"errors"
	"strings"
	"sync"
	"testing"
	"time"
)

func testKey(t testing.TB) *SigningKey {
	t.Helper()
	k, err := GenerateSigningKey()
	if err != nil {
		t.Fatal(err)
	}
	return k
}

func TestTicketRoundTrip(t *testing.T) {
	k := testKey(t)
	now := time.Unix(1_780_000_000, 0)
	in := Ticket{
		Room: "concert", Visitor: NewVisitorID(), Key: 123456789,
		Joined: now.Add(-time.Minute), Seen: now, FirstAhead: 5000, LastAhead: 4000,
		Place: 77, Placed: true, Claimed: true,
	}
	v := k.SealTicket(in)
	if len(v) > MaxTicketSize {
		t.Fatalf("sealed ticket is %d bytes, over the %d we accept", len(v), MaxTicketSize)
	}
	out, err := k.OpenTicket(v, "concert", now, time.Hour)
	if err != nil {
		t.Fatal(err)
	}
	if out != in {
		t.Fatalf("round trip:\n got %+v\nwant %+v", out, in)
	}
}

// Sealing builds each payload in a pooled buffer: tickets sealed at once,
// of rooms of every name length, must each come out whole and as their own.
func TestTicketsSealedAtOnceStayApart(t *testing.T) {
	k := testKey(t)
	now := time.Unix(1_780_000_000, 0)
	var wg sync.WaitGroup
	for g := range 8 {
		wg.Go(func() {
			for i := range 64 {
				room := strings.Repeat("r", 1+(g*64+i)%64)
				in := Ticket{Room: room, Visitor: NewVisitorID(), Key: uint64(g*1000 + i), Joined: now, Seen: now, Place: uint64(i)}
				v := string(k.AppendSealedTicket([]byte("x="), in))
				if v != "x="+k.SealTicket(in) {
					t.Errorf("appended and sealed tickets differ for room %q", room)
					return
				}
				out, err := k.OpenTicket(v[2:], room, now, time.Hour)
				if err != nil || out != in {
					t.Errorf("round trip of %+v: got %+v, %v", in, out, err)
					return
				}
			}
		})
	}
	wg.Wait()
}

func TestTicketRejected(t *testing.T) {
	k, other := testKey(t), testKey(t)
	now := time.Unix(1_780_000_000, 0)
	good := Ticket{Room: "concert", Visitor: NewVisitorID(), Key: 42, Joined: now, Seen: now}
	sealed := k.SealTicket(good)
	raw, _ := base64.RawURLEncoding.DecodeString(sealed)
	flip := func(i int) string {
		b := append([]byte(nil), raw...)
		b[i] ^= 0x01
		return base64.RawURLEncoding.EncodeToString(b)
	}
	cases := []struct {
		name, value, room string
		now               time.Time
	}{
		{"empty", "", "concert", now},
		{"garbage", "not a ticket at all", "concert", now},
		{"not base64", "!!!!", "concert", now},
		{"truncated", sealed[:20], "concert", now},
		{"oversized", strings.Repeat("A", MaxTicketSize+1), "concert", now},
		{"key tampered", flip(20), "concert", now},
		{"visitor tampered", flip(3), "concert", now},
		{"mac tampered", flip(len(raw) - 1), "concert", now},
		{"version changed", flip(0), "concert", now},
		{"other room", sealed, "festival", now},
		{"other key", other.SealTicket(good), "concert", now},
		{"expired", sealed, "concert", now.Add(time.Hour + time.Second)},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			if _, err := k.OpenTicket(tc.value, tc.room, tc.now, time.Hour); !errors.Is(err, ErrInvalidTicket) {
				t.Fatalf("got %v, want ErrInvalidTicket", err)
			}
		})
	}
}

func FuzzOpenTicket(f *testing.F) {
	k := testKey(f)
	now := time.Unix(1_780_000_000, 0)
	f.Add(k.SealTicket(Ticket{Room: "r", Visitor: NewVisitorID(), Key: 1, Joined: now, Seen: now}))
	f.Add("")
	f.Add("AAAA")
	f.Fuzz(func(t *testing.T, v string) {
		tk, err := k.OpenTicket(v, "r", now, time.Hour)
		if err != nil {
			return
		}
		// Whatever opens must seal back to a ticket that opens the same.
		again, err := k.OpenTicket(k.SealTicket(tk), "r", now, time.Hour)
		if err != nil || again != tk {
			t.Fatalf("re-sealed ticket differs: %+v vs %+v (%v)", again, tk, err)
		}
	})
}
