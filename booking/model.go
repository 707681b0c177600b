package booking

import "time"

// SeatStatus is the state stored on a seat row. A HELD seat whose hold has
// expired counts as available everywhere; the sweeper only tidies up.
type SeatStatus string

// Seat statuses.
const (
	SeatAvailable SeatStatus = "AVAILABLE"
	SeatHeld      SeatStatus = "HELD"
	SeatSold      SeatStatus = "SOLD"
)

// Event is a concert built from a venue description.
type Event struct {
	ID        int64     `json:"id"`
	Name      string    `json:"name"`
	StartsAt  time.Time `json:"starts_at"`
	Currency  string    `json:"currency"`
	Sections  []Section `json:"sections"`
	Zones     []Zone    `json:"zones"`
	CreatedAt time.Time `json:"created_at"`
}

// Section is a block of reserved seats: rows numbered from 1, seats in each row
// numbered from 1, one price.
type Section struct {
	ID          string `json:"id"`
	Rows        int    `json:"rows"`
	SeatsPerRow int    `json:"seats_per_row"`
	Price       Money  `json:"price"`
}

// Capacity is the number of seats in the section.
func (s Section) Capacity() int { return s.Rows * s.SeatsPerRow }

// Zone is a general-admission area: a capacity and a price, no seat numbers.
type Zone struct {
	ID       string `json:"id"`
	Capacity int    `json:"capacity"`
	Price    Money  `json:"price"`
}

// Capacity is the event's total number of places, seated and standing.
func (e Event) Capacity() int {
	n := 0
	for _, s := range e.Sections {
		n += s.Capacity()
	}
	for _, z := range e.Zones {
		n += z.Capacity
	}
	return n
}

// Section returns the section with the given id.
func (e Event) Section(id string) (Section, bool) {
	for _, s := range e.Sections {
		if s.ID == id {
			return s, true
		}
	}
	return Section{}, false
}

// Zone returns the zone with the given id.
func (e Event) Zone(id string) (Zone, bool) {
	for _, z := range e.Zones {
		if z.ID == id {
			return z, true
		}
	}
	return Zone{}, false
}

// HoldStatus is the life cycle of a hold.
type HoldStatus string

// Hold statuses.
const (
	HoldActive   HoldStatus = "active"   // seats are the customer's until ExpiresAt
	HoldReleased HoldStatus = "released" // the customer let go
	HoldExpired  HoldStatus = "expired"  // the sweeper returned the seats
	HoldOrdered  HoldStatus = "ordered"  // paid: the seats are sold to the order
)

// Hold reserves seats or general-admission places for one customer for a while.
type Hold struct {
	ID         string     `json:"id"`
	EventID    int64      `json:"event_id"`
	CustomerID string     `json:"-"`
	Seats      []string   `json:"seats,omitempty"`
	Zone       string     `json:"zone,omitempty"`
	Quantity   int        `json:"quantity"`
	Amount     Money      `json:"amount"`
	Status     HoldStatus `json:"status"`
	CreatedAt  time.Time  `json:"created_at"`
	ExpiresAt  time.Time  `json:"expires_at"`
}

// HoldRequest asks for places in one of three ways: named Seats, a Quantity of
// best-available seats in a Section, or a Quantity of places in a Zone.
type HoldRequest struct {
	EventID    int64
	CustomerID string
	Seats      []string
	Section    string
	Zone       string
	Quantity   int
	// TTL is how long the hold lasts from now.
	TTL time.Duration
	// MaxPerCustomer caps the customer's seats for the event across holds and
	// orders, enforced in the same transaction as the hold.
	MaxPerCustomer int
}

// OrderStatus is the life cycle of an order.
type OrderStatus string

// Order statuses.
const (
	OrderPendingPayment OrderStatus = "pending_payment"
	OrderPaid           OrderStatus = "paid"
	// OrderRefundPending: the payment landed but the seats could not be
	// re-taken; a refund is owed and is being issued.
	OrderRefundPending OrderStatus = "refund_pending"
	OrderRefunded      OrderStatus = "refunded"
	// OrderPaymentFailed: the provider declined the payment; the hold was
	// released.
	OrderPaymentFailed OrderStatus = "payment_failed"
)

// Order is what a checkout creates: one per hold.
type Order struct {
	ID         string      `json:"id"`
	HoldID     string      `json:"hold_id"`
	EventID    int64       `json:"event_id"`
	CustomerID string      `json:"-"`
	Status     OrderStatus `json:"status"`
	Amount     Money       `json:"amount"`
	Currency   string      `json:"currency"`
	Seats      []string    `json:"seats,omitempty"`
	Zone       string      `json:"zone,omitempty"`
	Quantity   int         `json:"quantity"`
	CreatedAt  time.Time   `json:"created_at"`
	PaidAt     *time.Time  `json:"paid_at,omitempty"`
	// RefundReason says why a refunded order was refunded (see
	// RefundReason); RefundedAt when.
	RefundReason RefundReason `json:"refund_reason,omitempty"`
	RefundedAt   *time.Time   `json:"refunded_at,omitempty"`
	Payment      Payment      `json:"payment"`
	Tickets      []Ticket     `json:"tickets"`
}

// PaymentStatus is our record of the provider's payment.
type PaymentStatus string

// Payment statuses.
const (
	PaymentPending   PaymentStatus = "pending"
	PaymentSucceeded PaymentStatus = "succeeded"
	PaymentRefunded  PaymentStatus = "refunded"
	PaymentFailed    PaymentStatus = "failed"
)

// Payment is our side of one provider payment; one per order.
type Payment struct {
	ID                string        `json:"id"`
	ProviderPaymentID string        `json:"provider_payment_id,omitempty"`
	Status            PaymentStatus `json:"status"`
	Amount            Money         `json:"amount"`
	PayURL            string        `json:"pay_url,omitempty"`
	// IdempotencyKey is sent with the provider's create call, RefundKey with
	// its refund call; both are fixed per order so retries never pay or refund
	// twice.
	IdempotencyKey string `json:"-"`
	RefundKey      string `json:"-"`
	// CreateRequest is the provider create request pinned with the order
	// (see Store.PinPaymentRequest), nil while none is: what every attempt
	// at the payment sends, whichever process makes it.
	CreateRequest []byte `json:"-"`
}

// Ticket is one admitted place: a seat, or a general-admission place in a zone.
type Ticket struct {
	ID       string    `json:"id"`
	OrderID  string    `json:"order_id"`
	EventID  int64     `json:"event_id"`
	Seat     string    `json:"seat,omitempty"`
	Zone     string    `json:"zone,omitempty"`
	Delivery *Delivery `json:"delivery,omitempty"`
	// CancelledAt is set when the ticket's order was refunded: the ticket
	// admits nobody any more and its place is for sale again. A seat has at
	// most one ticket that is not cancelled (a live one).
	CancelledAt *time.Time `json:"cancelled_at,omitempty"`
}

// Live reports whether the ticket still admits its holder.
func (t Ticket) Live() bool { return t.CancelledAt == nil }

// Delivery records that a ticket's signed code was issued to the customer.
type Delivery struct {
	TicketID    string    `json:"-"`
	Code        string    `json:"code"`
	DeliveredAt time.Time `json:"delivered_at"`
}

// PaymentConfirmation is a provider's word that a payment succeeded.
type PaymentConfirmation struct {
	// ProviderEventID is unique per webhook event; a second confirmation with
	// the same id changes nothing.
	ProviderEventID   string
	ProviderPaymentID string
	OrderID           string
	Amount            Money
	// MaxPerCustomer applies when the hold had expired and its seats must be
	// taken again.
	MaxPerCustomer int
}

// OutboxMessage is an event written in the same transaction as the change it
// describes, published later by the relay.
type OutboxMessage struct {
	ID        int64     `json:"id"`
	Topic     string    `json:"topic"`
	Payload   []byte    `json:"payload"`
	CreatedAt time.Time `json:"created_at"`
}

// Outbox topics.
const (
	TopicOrderPaid     = "order.paid"
	TopicOrderRefunded = "order.refunded"
)

// OrderPaidPayload is the body of an order.paid outbox message.
type OrderPaidPayload struct {
	OrderID    string   `json:"order_id"`
	EventID    int64    `json:"event_id"`
	CustomerID string   `json:"customer_id"`
	TicketIDs  []string `json:"ticket_ids"`
}

// OrderRefundedPayload is the body of an order.refunded outbox message.
type OrderRefundedPayload struct {
	OrderID    string       `json:"order_id"`
	EventID    int64        `json:"event_id"`
	CustomerID string       `json:"customer_id"`
	Reason     RefundReason `json:"reason"`
	// TicketIDs are the tickets cancelled; Returned the places back on sale.
	TicketIDs []string `json:"ticket_ids"`
	Returned  int      `json:"returned"`
}
