package booking

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/base64"
	"strconv"
	"strings"
)

// TicketCode is the code printed on a ticket (and in its QR code): the ticket
// id and an HMAC over what the ticket admits, so a door scanner holding the
// secret can check it offline and nobody can mint one.
func TicketCode(secret []byte, t Ticket) string {
	return t.ID + "." + ticketMAC(secret, t)
}

// VerifyTicketCode checks a code against the ticket it names.
func VerifyTicketCode(secret []byte, code string, t Ticket) bool {
	id, mac, ok := strings.Cut(code, ".")
	return ok && id == t.ID && hmac.Equal([]byte(mac), []byte(ticketMAC(secret, t)))
}

func ticketMAC(secret []byte, t Ticket) string {
	m := hmac.New(sha256.New, secret)
	m.Write([]byte("foyer ticket v1\x00" + t.ID + "\x00" + strconv.FormatInt(t.EventID, 10) + "\x00" + t.Seat + "\x00" + t.Zone))
	return base64.RawURLEncoding.EncodeToString(m.Sum(nil)[:16])
}
