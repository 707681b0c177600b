package waitingroom

import (
	"errors"
	"testing"
	"time"

	"github.com/foyer-dev/foyer/waitingroom/pass"
)

func TestKeyringOpensTicketsOfEveryKey(t *testing.T) {
	a, b, stranger := testKey(t), testKey(t), testKey(t)
	kr, err := NewKeyring(b, a)
	if err != nil {
		t.Fatal(err)
	}
	now := time.Unix(1_780_000_000, 0)
	tk := Ticket{Room: "concert", Visitor: NewVisitorID(), Key: 74, Joined: now, Seen: now}
	for name, k := range map[string]*SigningKey{"current": b, "previous": a} {
		got, err := kr.OpenTicket(k.SealTicket(tk), "concert", now, time.Hour)
		if err != nil || got != tk {
			t.Errorf("ticket sealed by the %s key: %+v, %v; want it opened unchanged", name, got, err)
		}
	}
	if _, err := kr.OpenTicket(stranger.SealTicket(tk), "concert", now, time.Hour); !errors.Is(err, ErrInvalidTicket) {
		t.Errorf("ticket sealed by a key not in the ring: %v, want ErrInvalidTicket", err)
	}
	if _, err := kr.OpenTicket(a.SealTicket(tk), "festival", now, time.Hour); !errors.Is(err, ErrInvalidTicket) {
		t.Errorf("previous key's ticket for another room: %v, want ErrInvalidTicket", err)
	}
	if _, err := kr.OpenTicket(a.SealTicket(tk), "concert", now.Add(2*time.Hour), time.Hour); !errors.Is(err, ErrInvalidTicket) {
		t.Errorf("previous key's expired ticket: %v, want ErrInvalidTicket", err)
	}
}

func TestKeyringJWKSListsEveryKeyOnce(t *testing.T) {
	a, b, next := testKey(t), testKey(t), testKey(t)
	kr, err := NewKeyring(b, a, next, a, b)
	if err != nil {
		t.Fatal(err)
	}
	set := kr.JWKS()
	want := []string{b.KeyID(), a.KeyID(), next.KeyID()}
	if len(set.Keys) != len(want) {
		t.Fatalf("JWKS has %d keys, want %d (duplicates dropped): %+v", len(set.Keys), len(want), set)
	}
	for i, k := range set.Keys {
		if k.KeyID != want[i] {
			t.Errorf("JWKS key %d has kid %s, want %s (current first, then in order)", i, k.KeyID, want[i])
		}
	}
	data, err := jsonMarshal(set)
	if err != nil {
		t.Fatal(err)
	}
	keys, err := pass.ParseJWKS(data)
	if err != nil || len(keys) != 3 || !keys[a.KeyID()].Equal(a.Public()) || !keys[next.KeyID()].Equal(next.Public()) {
		t.Fatalf("parsed back %d keys (%v); want the three public keys by kid", len(keys), err)
	}
}

func TestKeyringBounded(t *testing.T) {
	others := make([]*SigningKey, MaxVerifyingKeys+1)
	for i := range others {
		others[i] = testKey(t)
	}
	if _, err := NewKeyring(testKey(t), others...); err == nil {
		t.Fatalf("a keyring with %d verifying keys was accepted", len(others))
	}
	if _, err := NewKeyring(nil); err == nil {
		t.Fatal("a keyring without a current key was accepted")
	}
}

// BenchmarkOpenTicketDuringRotation is what a poll pays to open its ticket:
// sealed by the current key (every poll after the first) or by the previous one.
func BenchmarkOpenTicketDuringRotation(b *testing.B) {
	prev, cur := testKey(b), testKey(b)
	kr, _ := NewKeyring(cur, prev)
	now := time.Unix(1_780_000_000, 0)
	tk := Ticket{Room: "concert", Visitor: NewVisitorID(), Key: 74, Joined: now, Seen: now}
	for name, k := range map[string]*SigningKey{"current": cur, "previous": prev} {
		v := k.SealTicket(tk)
		b.Run(name, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				if _, err := kr.OpenTicket(v, "concert", now, time.Hour); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// FuzzKeyringOpenTicket: whatever a keyring opens, from whichever key, seals
// back with the current key to a ticket that opens the same.
func FuzzKeyringOpenTicket(f *testing.F) {
	prev, cur := testKey(f), testKey(f)
	kr, err := NewKeyring(cur, prev)
	if err != nil {
		f.Fatal(err)
	}
	now := time.Unix(1_780_000_000, 0)
	tk := Ticket{Room: "r", Visitor: NewVisitorID(), Key: 1, Joined: now, Seen: now}
	f.Add(prev.SealTicket(tk))
	f.Add(cur.SealTicket(tk))
	f.Add("")
	f.Fuzz(func(t *testing.T, v string) {
		got, err := kr.OpenTicket(v, "r", now, time.Hour)
		if err != nil {
			return
		}
		again, err := cur.OpenTicket(kr.Current().SealTicket(got), "r", now, time.Hour)
		if err != nil || again != got {
			t.Fatalf("re-sealed ticket differs: %+v vs %+v (%v)", again, got, err)
		}
	})
}
