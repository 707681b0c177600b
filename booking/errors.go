package booking

import (
	"errors"
	"fmt"
	"net/http"
)

// Kind classifies an error by what the caller should do about it, the way pgx
// classifies errors by whether they are safe to retry. The HTTP layer maps each
// kind to one status code; nothing else about an error decides the response.
type Kind int

const (
	// KindInvalid: the request is malformed. Fix it; retrying changes nothing.
	KindInvalid Kind = iota + 1
	// KindUnauthorized: no valid admission pass or admin token.
	KindUnauthorized
	// KindNotFound: no such event, seat, hold or order (or not the caller's).
	KindNotFound
	// KindConflict: the inventory or the resource is not in a state that allows
	// this now (a seat is taken, a hold is released). Another choice may work.
	KindConflict
	// KindGone: the resource existed but has expired.
	KindGone
	// KindUnprocessable: well formed but refused by a rule, such as the cap on
	// seats per customer.
	KindUnprocessable
	// KindTooLarge: the body is over the size limit.
	KindTooLarge
	// KindUnavailable: a dependency (the database) is down or overloaded. Safe to
	// retry the same request later; nothing was changed.
	KindUnavailable
)

// Status is the HTTP status code of the kind.
func (k Kind) Status() int {
	switch k {
	case KindInvalid:
		return http.StatusBadRequest
	case KindUnauthorized:
		return http.StatusUnauthorized
	case KindNotFound:
		return http.StatusNotFound
	case KindConflict:
		return http.StatusConflict
	case KindGone:
		return http.StatusGone
	case KindUnprocessable:
		return http.StatusUnprocessableEntity
	case KindTooLarge:
		return http.StatusRequestEntityTooLarge
	case KindUnavailable:
		return http.StatusServiceUnavailable
	}
	return http.StatusInternalServerError
}

// Error is a classified error with a stable machine-readable code, the
// "error" member of every JSON error response.
type Error struct {
	Kind    Kind
	Code    string
	Message string
	// Seats names the seats that made a hold fail, when that is the cause.
	Seats []string
	// Err is the underlying cause, if any. It is logged, never shown to clients.
	Err error
}

func (e *Error) Error() string {
	if e.Err != nil {
		return e.Code + ": " + e.Message + ": " + e.Err.Error()
	}
	return e.Code + ": " + e.Message
}

func (e *Error) Unwrap() error { return e.Err }

// Errorf makes an Error of the given kind and code.
func Errorf(kind Kind, code, format string, args ...any) *Error {
	return &Error{Kind: kind, Code: code, Message: fmt.Sprintf(format, args...)}
}

// Unavailable wraps an infrastructure failure as a retryable error.
func Unavailable(err error) *Error {
	return &Error{Kind: KindUnavailable, Code: CodeUnavailable, Message: "the booking database is unavailable, try again shortly", Err: err}
}

// Error codes. They are part of the public contract.
const (
	CodeInvalidRequest   = "invalid_request"
	CodeInvalidJSON      = "invalid_json"
	CodeBodyTooLarge     = "body_too_large"
	CodeUnauthorized     = "unauthorized"
	CodeNotFound         = "not_found"
	CodeEventNotFound    = "event_not_found"
	CodeSeatNotFound     = "seat_not_found"
	CodeSectionNotFound  = "section_not_found"
	CodeZoneNotFound     = "zone_not_found"
	CodeHoldNotFound     = "hold_not_found"
	CodeOrderNotFound    = "order_not_found"
	CodeInvalidOrderLink = "invalid_order_link"
	CodeSeatUnavailable  = "seat_unavailable"
	CodeSoldOut          = "sold_out"
	CodeWaitlistOnly     = "waitlist_only"
	CodeOverLimit        = "over_limit"
	CodeHoldExpired      = "hold_expired"
	CodeHoldNotActive    = "hold_not_active"
	CodeInvalidSignature = "invalid_signature"
	CodeIdempotencyReuse = "idempotency_key_reused"
	CodeIdempotencyBusy  = "idempotency_key_in_flight"
	CodeUnavailable      = "service_unavailable"
	CodePaymentFailed    = "payment_failed"
	// CodeOrderNotRefundable: a refund of an order that is not paid (or
	// refund_pending), or was refunded for another reason.
	CodeOrderNotRefundable = "order_not_refundable"
	// CodeRefundAmountMismatch: a refund of part of a paid order.
	CodeRefundAmountMismatch = "refund_amount_mismatch"
	CodeInternal             = "internal_error"
	// CodeCrossOrigin refuses a storefront form posted from another site.
	CodeCrossOrigin = "cross_origin_request"
)

// KindOf reports the kind of err, or 0 for an unclassified error.
func KindOf(err error) Kind {
	var e *Error
	if errors.As(err, &e) {
		return e.Kind
	}
	return 0
}

// IsRetryable reports whether the same request may succeed later unchanged.
func IsRetryable(err error) bool { return KindOf(err) == KindUnavailable }
