package booking

import (
	"context"
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"strings"
)

// OrderLinkPath is where an order's signed link lives, page and API alike
// (GET /api/tickets/{link}). A buyer's admission pass ends once their tickets
// are delivered; the link keeps their order and tickets in reach, without a
// pass and without queueing again, so the gateway must leave these paths
// outside the room (the demo Caddyfile does).
const OrderLinkPath = "/tickets/"

// orderLinkKey derives the key of order links from the ticket secret, so that
// every process sharing -ticket-secret accepts the links of the others, and a
// ticket code's MAC never doubles as a link. Without a secret the key is
// random, and links die with the process (as its memory store does).
func orderLinkKey(ticketSecret []byte) []byte {
	if len(ticketSecret) == 0 {
		k := make([]byte, 32)
		_, _ = rand.Read(k)
		return k
	}
	m := hmac.New(sha256.New, ticketSecret)
	m.Write([]byte("foyer order link key v1"))
	return m.Sum(nil)
}

// OrderLink is the signed link of an order: its id and a MAC of it, the
// second part unguessable (128 bits) so that only whoever was given the link
// can read the order.
func (s *Service) OrderLink(orderID string) string {
	return orderID + "." + s.orderLinkMAC(orderID)
}

func (s *Service) orderLinkMAC(orderID string) string {
	m := hmac.New(sha256.New, s.linkKey)
	m.Write([]byte("foyer order link v1\x00" + orderID))
	return base64.RawURLEncoding.EncodeToString(m.Sum(nil)[:16])
}

// OrderByLink returns the order a signed link names, whoever asks. A link that
// is malformed, altered, or signed for another order is refused before any
// lookup, with the same answer in every case.
func (s *Service) OrderByLink(ctx context.Context, link string) (Order, error) {
	id, mac, ok := strings.Cut(link, ".")
	if !ok || !ValidID("ord", id) || !hmac.Equal([]byte(mac), []byte(s.orderLinkMAC(id))) {
		return Order{}, Errorf(KindNotFound, CodeInvalidOrderLink, "this order link is not valid: check that the whole link was copied")
	}
	return s.cfg.Store.Order(ctx, id, "")
}
