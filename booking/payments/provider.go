package payments

import (
	"context"
	"errors"
)

// Provider takes payments and refunds them. Every call carries an idempotency
// key so that a caller that retries after a timeout never charges or refunds
// twice.
type Provider interface {
	CreatePayment(ctx context.Context, p CreateParams, idempotencyKey string) (Payment, error)
	Refund(ctx context.Context, p RefundParams, idempotencyKey string) (Refund, error)
	// RetrievePayment returns a payment as the provider holds it, or
	// ErrNotFound. It is how a shop learns the fate of a payment whose
	// webhook it never received.
	RetrievePayment(ctx context.Context, id string) (Payment, error)
	// CancelPayment closes a payment that was never paid. If it was settled
	// meanwhile, it returns the payment as it stands, without error.
	CancelPayment(ctx context.Context, id string) (Payment, error)
}

// CreateParams describe a payment to collect.
type CreateParams struct {
	Amount      int64             `json:"amount"` // in the currency's minor unit
	Currency    string            `json:"currency"`
	Description string            `json:"description,omitempty"`
	Metadata    map[string]string `json:"metadata,omitempty"`
	// ReturnURL is where the pay page sends the fan afterwards.
	ReturnURL string `json:"return_url,omitempty"`
}

// RefundParams describe a refund of a payment, in full when Amount is 0.
type RefundParams struct {
	PaymentID string `json:"payment"`
	Amount    int64  `json:"amount,omitempty"`
}

// Payment statuses, as the provider reports them.
const (
	StatusRequiresPayment = "requires_payment_method"
	StatusProcessing      = "processing"
	StatusSucceeded       = "succeeded"
	StatusFailed          = "failed"
	StatusRefunded        = "refunded"
	StatusCanceled        = "canceled"
)

// Payment is the provider's payment object.
type Payment struct {
	ID       string            `json:"id"`
	Amount   int64             `json:"amount"`
	Currency string            `json:"currency"`
	Status   string            `json:"status"`
	Metadata map[string]string `json:"metadata,omitempty"`
	// AmountRefunded is how much of the payment was given back, in the
	// currency's minor unit: set on a refunded payment.
	AmountRefunded int64 `json:"amount_refunded,omitempty"`
	// PayURL is the page where the customer pays.
	PayURL    string `json:"pay_url,omitempty"`
	ReturnURL string `json:"return_url,omitempty"`
}

// Refund is the provider's refund object.
type Refund struct {
	ID        string `json:"id"`
	PaymentID string `json:"payment"`
	Amount    int64  `json:"amount"`
	Status    string `json:"status"`
}

// Errors a provider returns, classified by what the caller should do.
var (
	// ErrIdempotencyKeyReused: the key was sent before with other parameters.
	// A programming error; retrying will not help.
	ErrIdempotencyKeyReused = errors.New("idempotency key reused with different parameters")
	// ErrInvalidIdempotencyKey: empty or longer than MaxIdempotencyKeyLength.
	ErrInvalidIdempotencyKey = errors.New("idempotency key must be 1 to 255 characters")
	// ErrNotFound: no such payment.
	ErrNotFound = errors.New("no such payment")
	// ErrUnavailable: the provider could not be reached. Safe to retry with the
	// same idempotency key.
	ErrUnavailable = errors.New("payment provider unavailable")
)

// MaxIdempotencyKeyLength is Stripe's limit on idempotency keys.
const MaxIdempotencyKeyLength = 255
